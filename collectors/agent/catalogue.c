/*
 * catalogue.c - reading the agent's catalogue file. Everything in it is
 * checked before the agent claims anything: a catalogue is the only place
 * a command comes from, so a bad line stops the agent with the line named
 * rather than being half understood.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/agent/catalogue.h"
#include "lib/buf.h"
#include "collectors/base/cutil.h"
#include "collectors/parse/parse.h"

/* ---- words ---- */

static void words_push(char ***w, size_t *n, size_t *cap, struct buf *b)
{
	if (*n + 2 > *cap)
		*w = xrealloc(*w, (*cap = *cap ? *cap * 2 : 8) * sizeof(char *));
	(*w)[(*n)++] = buf_detach(b, NULL);
	(*w)[*n] = NULL;
}

/* Zero words are fine here; catalogue_words insists on one. */
static char **split(const char *s, size_t maxwords, const char *noun, size_t *nout, char *err,
		    size_t errsz)
{
	struct buf b = BUF_INIT;
	char **w = xcalloc(1, sizeof(char *));
	size_t n = 0, cap = 1;
	int in_word = 0;

	for (const char *p = s;; p++) {
		if (!*p || *p == ' ' || *p == '\t') {
			if (in_word) {
				if (n == maxwords) {
					snprintf(err, errsz, "more than %zu %s", maxwords, noun);
					goto fail;
				}
				words_push(&w, &n, &cap, &b);
				in_word = 0;
			}
			if (!*p)
				break;
			continue;
		}
		in_word = 1;
		if (*p == '\'') {
			const char *end = strchr(p + 1, '\'');
			if (!end) {
				snprintf(err, errsz, "unterminated ' quote");
				goto fail;
			}
			buf_append(&b, p + 1, (size_t)(end - p - 1));
			p = end;
		} else if (*p == '"') {
			for (p++; *p && *p != '"'; p++) {
				if (*p == '\\' && p[1] && strchr("\"\\$`", p[1]))
					p++;
				buf_putc(&b, *p);
			}
			if (!*p) {
				snprintf(err, errsz, "unterminated \" quote");
				goto fail;
			}
		} else if (*p == '\\') {
			if (!p[1]) {
				snprintf(err, errsz, "a backslash ends the line");
				goto fail;
			}
			buf_putc(&b, *++p);
		} else {
			buf_putc(&b, *p);
		}
	}
	buf_release(&b);
	*nout = n;
	return w;
fail:
	buf_release(&b);
	catalogue_words_free(w);
	return NULL;
}

char **catalogue_words(const char *s, size_t maxwords, char *err, size_t errsz)
{
	size_t n;
	char **w = split(s, maxwords, "words", &n, err, errsz);

	if (w && (n == 0 || !w[0][0])) {
		snprintf(err, errsz, n ? "the first word is empty" : "no command");
		catalogue_words_free(w);
		return NULL;
	}
	return w;
}

void catalogue_words_free(char **words)
{
	if (!words)
		return;
	for (char **w = words; *w; w++)
		free(*w);
	free(words);
}

/* ---- keys ---- */

static int name_ok(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n < 1 || n > max)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._-", *s))
			return 0;
	return 1;
}

/* "k=v k=v" into obj (empty: no pairs); 0 or -1 with msg. */
static int set_pairs(json_t *obj, const char *v, char *msg, size_t msgsz)
{
	size_t n;
	char **w = split(v, CATALOGUE_PAIRS_MAX, "pairs", &n, msg, msgsz);
	int rc = -1;

	if (!w)
		return -1;
	for (size_t i = 0; i < n; i++) {
		char *eq = strchr(w[i], '='), key[CATALOGUE_KEY_MAX + 1];
		json_t *s;

		if (!eq || eq == w[i] || (size_t)(eq - w[i]) > CATALOGUE_KEY_MAX) {
			snprintf(msg, msgsz,
				 "\"%.80s\": expected key=value with a key of 1-%d of A-Za-z0-9._-",
				 w[i], CATALOGUE_KEY_MAX);
			goto out;
		}
		snprintf(key, sizeof(key), "%.*s", (int)(eq - w[i]), w[i]);
		if (!name_ok(key, CATALOGUE_KEY_MAX)) {
			snprintf(msg, msgsz, "key \"%s\": expected 1-%d of A-Za-z0-9._-", key,
				 CATALOGUE_KEY_MAX);
			goto out;
		}
		if (strlen(eq + 1) > CATALOGUE_VALUE_MAX) {
			snprintf(msg, msgsz, "the value of %s is longer than %d bytes", key,
				 CATALOGUE_VALUE_MAX);
			goto out;
		}
		if (json_object_get(obj, key)) {
			snprintf(msg, msgsz, "%s is given twice", key);
			goto out;
		}
		if (!(s = json_string(eq + 1))) {
			snprintf(msg, msgsz, "the value of %s is not UTF-8", key);
			goto out;
		}
		json_object_set_new(obj, key, s);
	}
	rc = 0;
out:
	catalogue_words_free(w);
	return rc;
}

static int set_suite(struct cat_test *t, const char *v, char *msg, size_t msgsz)
{
	if (!name_ok(v, CATALOGUE_NAME_MAX)) {
		snprintf(msg, msgsz, "suite \"%.80s\": expected 1-%d of A-Za-z0-9._-", v,
			 CATALOGUE_NAME_MAX);
		return -1;
	}
	t->suite = xstrdup(v);
	return 0;
}

static int set_params(struct cat_test *t, const char *v, char *msg, size_t msgsz)
{
	return set_pairs(t->params, v, msg, msgsz);
}

static int set_variant(struct cat_test *t, const char *v, char *msg, size_t msgsz)
{
	return set_pairs(t->variant, v, msg, msgsz);
}

static int set_format(struct cat_test *t, const char *v, char *msg, size_t msgsz)
{
	if (!parser_find(v)) {
		snprintf(msg, msgsz, "unknown format \"%.80s\" (`kperf-collect formats` lists them)",
			 v);
		return -1;
	}
	t->format = xstrdup(v);
	return 0;
}

static int set_iterations(struct cat_test *t, const char *v, char *msg, size_t msgsz)
{
	int64_t n;

	if (cparse_int64(v, 1, CATALOGUE_ITERATIONS_MAX, &n)) {
		snprintf(msg, msgsz, "iterations \"%.80s\": expected a whole number from 1 to %d", v,
			 CATALOGUE_ITERATIONS_MAX);
		return -1;
	}
	t->iterations = (long)n;
	return 0;
}

/* "yes" / "no" (and true/false, on/off, 1/0) into *flag; 0 or -1 with msg. */
static int set_flag(int *flag, const char *key, const char *v, char *msg, size_t msgsz)
{
	static const char *const yes[] = {"yes", "true", "on", "1"}, *const no[] = {"no", "false",
										    "off", "0"};
	for (size_t i = 0; i < 4; i++) {
		if (!strcmp(v, yes[i]) || !strcmp(v, no[i])) {
			*flag = !strcmp(v, yes[i]);
			return 0;
		}
	}
	snprintf(msg, msgsz, "%s \"%.80s\": expected yes or no", key, v);
	return -1;
}

static int set_profile(struct cat_test *t, const char *v, char *msg, size_t msgsz)
{
	return set_flag(&t->profile, "profile", v, msg, msgsz);
}

static int set_lock_contention(struct cat_test *t, const char *v, char *msg, size_t msgsz)
{
	return set_flag(&t->lock_contention, "lock_contention", v, msg, msgsz);
}

static int set_command(struct cat_test *t, const char *v, char *msg, size_t msgsz)
{
	char why[128];

	t->argv = catalogue_words(v, CATALOGUE_WORDS_MAX, why, sizeof(why));
	if (!t->argv) {
		snprintf(msg, msgsz, "command: %s", why);
		return -1;
	}
	return 0;
}

static const struct key {
	const char *name;
	int (*set)(struct cat_test *t, const char *v, char *msg, size_t msgsz);
} keys[] = {
	{"suite", set_suite},	    {"params", set_params},	    {"variant", set_variant},
	{"format", set_format},	    {"iterations", set_iterations}, {"command", set_command},
	{"profile", set_profile},   {"lock_contention", set_lock_contention},
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/* ---- the file ---- */

struct reader {
	struct catalogue *cat;
	struct cat_test *cur; /* the section being read, or NULL */
	unsigned seen;        /* keys given in it, bit per keys[] row */
	char *err;
	size_t errsz;
};

static int fail_at(struct reader *r, size_t line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_at(struct reader *r, size_t line, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(r->err, r->errsz, "%s:%zu: %s", r->cat->path, line, msg);
	return -1;
}

static void test_release(struct cat_test *t)
{
	free(t->suite);
	json_decref(t->params);
	json_decref(t->variant);
	free(t->format);
	catalogue_words_free(t->argv);
}

/* The section ends: what it must have. */
static int section_end(struct reader *r)
{
	struct cat_test *t = r->cur;

	if (!t)
		return 0;
	if (!t->suite)
		return fail_at(r, t->line, "test \"%s\" has no suite", t->name);
	if (!t->argv)
		return fail_at(r, t->line, "test \"%s\" has no command", t->name);
	for (size_t i = 0; i + 1 < r->cat->n; i++) {
		const struct cat_test *o = &r->cat->tests[i];
		if (!strcmp(o->suite, t->suite) && json_equal(o->params, t->params))
			return fail_at(r, t->line,
				       "test \"%s\" has the suite and params of test \"%s\" (line "
				       "%zu): a job could not tell them apart",
				       t->name, o->name, o->line);
	}
	r->cur = NULL;
	return 0;
}

static int header(struct reader *r, size_t line, char *s, size_t len)
{
	struct cat_test *t;

	if (section_end(r))
		return -1;
	if (len < 3 || s[len - 1] != ']')
		return fail_at(r, line, "a section header is [name]");
	s[len - 1] = '\0';
	s = str_trim(s + 1);
	if (!name_ok(s, CATALOGUE_NAME_MAX))
		return fail_at(r, line, "test name \"%.80s\": expected 1-%d of A-Za-z0-9._-", s,
			       CATALOGUE_NAME_MAX);
	for (size_t i = 0; i < r->cat->n; i++)
		if (!strcmp(r->cat->tests[i].name, s))
			return fail_at(r, line, "test \"%s\" is defined twice (first at line %zu)",
				       s, r->cat->tests[i].line);
	if (r->cat->n == CATALOGUE_TESTS_MAX)
		return fail_at(r, line, "more than %d tests", CATALOGUE_TESTS_MAX);
	r->cat->tests = xrealloc(r->cat->tests, (r->cat->n + 1) * sizeof(*t));
	t = &r->cat->tests[r->cat->n++];
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", s);
	t->line = line;
	t->params = json_object();
	t->variant = json_object();
	t->iterations = 1;
	r->cur = t;
	r->seen = 0;
	return 0;
}

static int assignment(struct reader *r, size_t line, char *s)
{
	char *eq = strchr(s, '='), *key, *value, msg[512];
	size_t k;

	if (!eq)
		return fail_at(r, line, "expected \"key = value\" or a [name] header");
	*eq = '\0';
	key = str_trim(s);
	value = str_trim(eq + 1);
	for (k = 0; k < NKEYS; k++)
		if (!strcmp(keys[k].name, key))
			break;
	if (k == NKEYS)
		return fail_at(r, line,
			       "unknown key \"%.64s\" (known: suite, params, variant, format, "
			       "iterations, command, profile, lock_contention)",
			       key);
	if (!r->cur)
		return fail_at(r, line, "%s before the first [name] header", key);
	if (r->seen & (1u << k))
		return fail_at(r, line, "%s is given twice in test \"%s\"", key, r->cur->name);
	r->seen |= 1u << k;
	if (!*value && strcmp(key, "params") && strcmp(key, "variant"))
		return fail_at(r, line, "%s has no value", key);
	if (keys[k].set(r->cur, value, msg, sizeof(msg)))
		return fail_at(r, line, "%s", msg);
	return 0;
}

/* One line (len bytes, no newline): checked for bytes a text file has no business holding. */
static int one_line(struct reader *r, size_t no, char *s, size_t len)
{
	json_t *utf8;

	if (len > CATALOGUE_LINE_MAX)
		return fail_at(r, no, "line longer than %d bytes", CATALOGUE_LINE_MAX);
	if (len && s[len - 1] == '\r')
		s[--len] = '\0';
	if (memchr(s, '\0', len))
		return fail_at(r, no, "NUL byte");
	for (size_t i = 0; i < len; i++)
		if (((unsigned char)s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f)
			return fail_at(r, no, "control character 0x%02x", (unsigned char)s[i]);
	if (!(utf8 = json_stringn(s, len)))
		return fail_at(r, no, "not UTF-8");
	json_decref(utf8);
	s = str_trim(s);
	len = strlen(s);
	if (!len || s[0] == '#')
		return 0;
	if (s[0] == '[')
		return header(r, no, s, len);
	return assignment(r, no, s);
}

int catalogue_load(struct catalogue *cat, const char *path, char *err, size_t errsz)
{
	struct reader r = {cat, NULL, 0, err, errsz};
	size_t len, no = 0;
	char *text, *p, *end;

	memset(cat, 0, sizeof(*cat));
	cat->path = xstrdup(path);
	text = read_file(path, CATALOGUE_FILE_MAX, &len);
	if (!text) {
		if (errno == EFBIG)
			snprintf(err, errsz, "%s: larger than %u bytes", path, CATALOGUE_FILE_MAX);
		else
			snprintf(err, errsz, "%s: %s", path, strerror(errno));
		return -1;
	}
	for (p = text, end = text + len; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		p[n] = '\0';
		if (one_line(&r, ++no, p, n))
			goto fail;
		p += n + 1;
	}
	if (section_end(&r))
		goto fail;
	if (!cat->n) {
		snprintf(err, errsz, "%s: no tests (a test is a [name] section)", path);
		goto fail;
	}
	free(text);
	return 0;
fail:
	free(text);
	for (size_t i = 0; i < cat->n; i++)
		test_release(&cat->tests[i]);
	free(cat->tests);
	cat->tests = NULL;
	cat->n = 0;
	return -1;
}

void catalogue_release(struct catalogue *cat)
{
	for (size_t i = 0; i < cat->n; i++)
		test_release(&cat->tests[i]);
	free(cat->tests);
	free(cat->path);
	memset(cat, 0, sizeof(*cat));
}

const struct cat_test *catalogue_find(const struct catalogue *cat, const char *suite,
				      const json_t *params)
{
	json_t *empty = json_object();
	const struct cat_test *hit = NULL;

	for (size_t i = 0; i < cat->n && !hit; i++)
		if (!strcmp(cat->tests[i].suite, suite) &&
		    json_equal(cat->tests[i].params, params ? params : empty))
			hit = &cat->tests[i];
	json_decref(empty);
	return hit;
}

json_t *catalogue_offer(const struct catalogue *cat)
{
	json_t *a = json_array();

	for (size_t i = 0; i < cat->n; i++)
		json_array_append_new(a, json_pack("{s:s,s:O}", "suite", cat->tests[i].suite,
						   "params", cat->tests[i].params));
	return a;
}
