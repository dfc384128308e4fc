/*
 * decode_ctx.c - the machinery of the ingest contract's decoder (see
 * decode_ctx.h): paths, errors, the depth pre-scan and jansson, the value
 * checks (names, shas, dates) and the typed getters and walks.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/jsonw.h"
#include "lib/kperf_limits.h"
#include "lib/util.h"
#include "lib/decode_ctx.h"

/* After a cut, drop a UTF-8 sequence left incomplete at the end. */
static void path_trim_utf8(struct path *p)
{
	size_t i = p->len;
	while (i > 0 && ((unsigned char)p->s[i - 1] & 0xc0) == 0x80)
		i--;
	if (i > 0 && (unsigned char)p->s[i - 1] >= 0xc0) {
		size_t need = (unsigned char)p->s[i - 1] >= 0xf0   ? 4
			      : (unsigned char)p->s[i - 1] >= 0xe0 ? 3
								   : 2;
		if (p->len - (i - 1) < need)
			p->len = i - 1;
	}
	p->s[p->len] = '\0';
}

size_t dc_push_key(struct path *p, const char *key)
{
	size_t old = p->len;
	int n = snprintf(p->s + p->len, sizeof(p->s) - p->len, "%s%s", p->len ? "." : "", key);
	if (n > 0 && (size_t)n < sizeof(p->s) - p->len) {
		p->len += (size_t)n;
	} else if (n > 0) {
		p->len = sizeof(p->s) - 1;
		path_trim_utf8(p);
	}
	return old;
}

size_t dc_push_index(struct path *p, size_t i)
{
	size_t old = p->len;
	int n = snprintf(p->s + p->len, sizeof(p->s) - p->len, "[%zu]", i);
	if (n > 0)
		p->len += (size_t)n < sizeof(p->s) - p->len ? (size_t)n : sizeof(p->s) - p->len - 1;
	return old;
}

void dc_pop(struct path *p, size_t old)
{
	p->len = old;
	p->s[old] = '\0';
}

int dc_fail(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	c->err->status = 400;
	c->err->code = "invalid";
	snprintf(c->err->field, sizeof(c->err->field), "%s", c->path.s);
	va_start(ap, fmt);
	vsnprintf(c->err->message, sizeof(c->err->message), fmt, ap);
	va_end(ap);
	return -1;
}

static void malformed(struct decode_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void malformed(struct decode_error *err, const char *fmt, ...)
{
	va_list ap;

	err->status = 400;
	err->code = "malformed";
	err->field[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
}

/*
 * Find nesting deeper than LIMIT_JSON_DEPTH before jansson recurses into it,
 * and count the values (commas and containers) before jansson allocates
 * them: decoding costs ~60 bytes per value, so a 4 MiB body of "[0,0,...]"
 * would take 120 MB. Strings are skipped so brackets inside them do not count.
 */
static int depth_scan(const char *s, size_t len, struct decode_error *err)
{
	int depth = 0, in_str = 0, esc = 0;
	size_t line = 1, col = 0, values = 1;

	for (size_t i = 0; i < len; i++) {
		char ch = s[i];
		col++;
		if (ch == '\n') {
			line++;
			col = 0;
		}
		if (in_str) {
			if (esc)
				esc = 0;
			else if (ch == '\\')
				esc = 1;
			else if (ch == '"')
				in_str = 0;
			continue;
		}
		if (ch == '"') {
			in_str = 1;
		} else if (ch == ',') {
			values++;
		} else if (ch == '[' || ch == '{') {
			values++;
			if (++depth > LIMIT_JSON_DEPTH) {
				malformed(err, "nesting deeper than %d levels at line %zu, column %zu",
					  LIMIT_JSON_DEPTH, line, col);
				return -1;
			}
		} else if (ch == ']' || ch == '}') {
			depth--;
		}
	}
	if (values > LIMIT_REQUEST_VALUES) {
		err->status = 413;
		err->code = "too_large";
		snprintf(err->message, sizeof(err->message),
			 "the body holds about %zu values; the limit is %d per request", values,
			 LIMIT_REQUEST_VALUES);
		return -1;
	}
	return 0;
}

json_t *dc_parse(const char *body, size_t len, struct decode_error *err)
{
	json_error_t je;
	json_t *root;

	if (depth_scan(body, len, err))
		return NULL;
	root = json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, &je);
	if (!root) {
		malformed(err, "line %d, column %d: %s", je.line, je.column, je.text);
		return NULL;
	}
	return root;
}

/* ---- small value checks ---- */

static int is_name_char(int ch, const char *extra)
{
	return isalnum(ch) || (ch && strchr(extra, ch));
}

int ingest_check_pattern(const char *s, size_t max, const char *extra)
{
	size_t n = strlen(s);
	if (n < 1 || n > max)
		return -1;
	for (; *s; s++)
		if (!is_name_char((unsigned char)*s, extra))
			return -1;
	return 0;
}

int dc_check_printable(const char *s, size_t min, size_t max)
{
	size_t n = strlen(s);
	if (n < min || n > max)
		return -1;
	for (; *s; s++)
		if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f)
			return -1;
	return 0;
}

int ingest_check_hex40(const char *s)
{
	if (strlen(s) != 40)
		return -1;
	for (; *s; s++)
		if (!isxdigit((unsigned char)*s))
			return -1;
	return 0;
}

static int digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

int iso8601_check(const char *s)
{
	static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int y, mo, d, h, mi, sec, oh, om;

	if (strlen(s) < 19 || digits(s, 4, &y) || s[4] != '-' || digits(s + 5, 2, &mo) ||
	    s[7] != '-' || digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != ' ') ||
	    digits(s + 11, 2, &h) || s[13] != ':' || digits(s + 14, 2, &mi) || s[16] != ':' ||
	    digits(s + 17, 2, &sec))
		return -1;
	if (y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 ||
	    mi > 59 || sec > 60)
		return -1;
	if (mo == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		return -1;
	s += 19;
	if (*s == '.') {
		int nd = 0;
		for (s++; isdigit((unsigned char)*s); s++)
			nd++;
		if (nd < 1 || nd > 9)
			return -1;
	}
	if (*s == 'Z' && s[1] == '\0')
		return 0;
	if ((*s == '+' || *s == '-') && strlen(s) == 6 && !digits(s + 1, 2, &oh) && s[3] == ':' &&
	    !digits(s + 4, 2, &om) && oh <= 23 && om <= 59)
		return 0;
	return -1;
}

/* ---- typed field getters; each names the path on failure ---- */

int dc_want_string(struct ctx *c, json_t *v, size_t min, size_t max, const char **out)
{
	if (!json_is_string(v))
		return dc_fail(c, "must be a string");
	if (json_string_length(v) != strlen(json_string_value(v)))
		return dc_fail(c, "must not contain NUL characters");
	if (json_string_length(v) < min)
		return dc_fail(c, "must not be empty");
	if (json_string_length(v) > max)
		return dc_fail(c, "longer than %zu bytes", max);
	*out = json_string_value(v);
	return 0;
}

int dc_want_integer(struct ctx *c, json_t *v, double min, double max)
{
	double d;
	if (!json_is_number(v))
		return dc_fail(c, "must be a number");
	d = json_number_value(v);
	if (d != floor(d) || d < min || d > max)
		return dc_fail(c, "must be an integer from %.0f to %.0f", min, max);
	return 0;
}


/*
 * Walk an object's keys: known ones are checked, unknown ones removed and
 * listed in ignored. Keys in required must be present.
 */
int dc_check_object(struct ctx *c, json_t *obj, const struct field *fields,
			const char *const *required)
{
	const char *key;
	json_t *val;
	void *tmp;

	if (!json_is_object(obj))
		return dc_fail(c, "must be an object");
	json_object_foreach_safe(obj, tmp, key, val) {
		const struct field *f = fields;
		size_t old;
		int rc = 0;

		while (f->key && strcmp(f->key, key))
			f++;
		old = dc_push_key(&c->path, key);
		if (!f->key) {
			if (json_array_size(c->ignored) < DECODE_IGNORED_MAX)
				json_array_append_new(c->ignored, json_string(c->path.s));
			json_object_del(obj, key);
		} else {
			rc = f->check(c, val);
		}
		dc_pop(&c->path, old);
		if (rc)
			return rc;
	}
	for (; required && *required; required++) {
		if (!json_object_get(obj, *required)) {
			size_t old = dc_push_key(&c->path, *required);
			int rc = dc_fail(c, "is required");
			dc_pop(&c->path, old);
			return rc;
		}
	}
	return 0;
}

/* A map of name -> scalar (string, number or boolean), names by pattern. */
int dc_check_map(struct ctx *c, json_t *v, size_t keymax, const char *extra, int strings_only)
{
	const char *key;
	json_t *val;

	if (!json_is_object(v))
		return dc_fail(c, "must be an object");
	if (json_object_size(v) > LIMIT_MAP_KEYS)
		return dc_fail(c, "more than %d keys", LIMIT_MAP_KEYS);
	json_object_foreach(v, key, val) {
		size_t old = dc_push_key(&c->path, key);
		const char *s;
		int rc = 0;

		if (extra && ingest_check_pattern(key, keymax, extra))
			rc = dc_fail(c, "key must be 1-%zu of A-Za-z0-9%s", keymax, extra);
		else if (!extra && dc_check_printable(key, 1, keymax))
			rc = dc_fail(c, "key must be 1-%zu printable characters without spaces", keymax);
		else if (json_is_string(val))
			rc = dc_want_string(c, val, 0, LIMIT_VALUE, &s);
		else if (strings_only || !(json_is_number(val) || json_is_boolean(val)))
			rc = dc_fail(c, strings_only ? "must be a string" : "must be a string, number or boolean");
		dc_pop(&c->path, old);
		if (rc)
			return rc;
	}
	return 0;
}

/* A canonical copy of a map: every value as a string, for trend keys. */
char *dc_canonical_map(json_t *v)
{
	json_t *out = json_object();
	const char *key;
	json_t *val;
	char *s;

	json_object_foreach(v, key, val) {
		if (json_is_string(val)) {
			json_object_set(out, key, val);
		} else if (json_is_number(val)) {
			struct buf b = BUF_INIT;
			jsonw_double(&b, json_number_value(val));
			json_object_set_new(out, key, json_string(buf_str(&b)));
			buf_release(&b);
		} else {
			json_object_set_new(out, key, json_string(json_is_true(val) ? "true" : "false"));
		}
	}
	s = jsonw_dump(out, 1);
	json_decref(out);
	return s;
}

