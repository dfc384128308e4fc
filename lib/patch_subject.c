/*
 * patch_subject.c - the [PATCH ...] tag of a mail Subject, read the way b4
 * and the public-inbox.md poller read it: words of the first bracketed tags,
 * "vN" the version, "M/K" the counter, "PATCHvN" one word for two.
 */
#include "lib/patch_subject.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "lib/util.h"

/* Versions above this are not versions ("v2026" is a date in a tag). */
#define PS_VERSION_MAX 999

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* Length of a reply prefix ("Re:", "Fwd:", ...) at s, 0 when there is none. */
static size_t reply_prefix(const char *s)
{
	static const char *const prefixes[] = {"re:", "aw:", "fwd:", "fw:", "sv:"};
	size_t i;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t n = strlen(prefixes[i]);
		if (strncasecmp(s, prefixes[i], n) == 0)
			return n;
	}
	return 0;
}

/* A whole decimal number of 1-4 digits (leading zeros allowed: "007"). */
static int small_number(const char *s, size_t n, int *out)
{
	size_t i;
	int v = 0;

	if (n == 0)
		return -1;
	while (n > 1 && *s == '0')
		s++, n--;
	if (n > 4)
		return -1;
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

struct tag_words {
	int patch, rfc, version, pos, total, counter, bad;
	char extra[256];
};

static void add_extra(struct tag_words *w, const char *word, size_t n)
{
	size_t have = strlen(w->extra);
	size_t sep = have ? 1 : 0;

	if (have + sep + n >= sizeof(w->extra))
		return;
	if (sep)
		w->extra[have++] = ' ';
	memcpy(w->extra + have, word, n);
	w->extra[have + n] = '\0';
}

/* One word of a bracketed tag. */
static void tag_word(struct tag_words *w, const char *word, size_t n)
{
	const char *slash = memchr(word, '/', n);
	int v;

	if (n == 5 && strncasecmp(word, "PATCH", 5) == 0) {
		w->patch = 1;
	} else if (n > 6 && strncasecmp(word, "PATCHv", 6) == 0 &&
		   small_number(word + 6, n - 6, &v) == 0) {
		w->patch = 1;
		if (v >= 1 && v <= PS_VERSION_MAX)
			w->version = v;
	} else if (n == 3 && strncasecmp(word, "RFC", 3) == 0) {
		w->rfc = 1;
	} else if (n > 1 && (word[0] == 'v' || word[0] == 'V') &&
		   small_number(word + 1, n - 1, &v) == 0 && v >= 1 && v <= PS_VERSION_MAX) {
		w->version = v;
	} else if (slash && (isdigit((unsigned char)word[0]) ||
			     (slash + 1 < word + n && isdigit((unsigned char)slash[1])))) {
		/* a counter, or something that tries to be one ("1/x", "x/3") */
		int m, k;
		size_t ml = (size_t)(slash - word);
		if (small_number(word, ml, &m) < 0 ||
		    small_number(slash + 1, n - ml - 1, &k) < 0 || k == 0 ||
		    m > LIMIT_SERIES_PATCHES || k > LIMIT_SERIES_PATCHES || w->counter) {
			w->bad = 1;
		} else {
			w->pos = m;
			w->total = k;
		}
		w->counter = 1;
	} else {
		add_extra(w, word, n);
	}
}

/* The words of the tag text s[0..n). */
static void tag_split(struct tag_words *w, const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t start;
		while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == ','))
			i++;
		start = i;
		while (i < n && s[i] != ' ' && s[i] != '\t' && s[i] != ',')
			i++;
		if (i > start)
			tag_word(w, s + start, i - start);
	}
}

static void set_stem(struct patch_subject *ps, const char *s)
{
	size_t n;

	s = skip_ws(s);
	n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' ||
			 s[n - 1] == '\n'))
		n--;
	if (n > LIMIT_MAIL_SUBJECT)
		n = LIMIT_MAIL_SUBJECT;
	memcpy(ps->stem, s, n);
	ps->stem[n] = '\0';
}

int patch_subject_parse(const char *subject, struct patch_subject *ps)
{
	struct tag_words w;
	const char *s;
	size_t n;

	if (!subject || !ps)
		return -1;
	memset(ps, 0, sizeof(*ps));
	memset(&w, 0, sizeof(w));
	s = skip_ws(subject);
	while ((n = reply_prefix(s)) > 0) {
		ps->is_reply = 1;
		s = skip_ws(s + n);
	}
	/* the leading tags: "[RFC][PATCH v2 1/3]", "[PATCH v2 1/3] [net-next]" */
	while (*s == '[') {
		const char *close = strchr(s + 1, ']');
		struct tag_words one;
		if (!close)
			break;
		memset(&one, 0, sizeof(one));
		tag_split(&one, s + 1, (size_t)(close - s - 1));
		if (one.patch || one.rfc || w.patch) {
			w.patch |= one.patch;
			w.rfc |= one.rfc;
			if (one.version)
				w.version = one.version;
			if (one.counter) {
				w.bad |= one.bad || w.counter;
				w.counter = 1;
				w.pos = one.pos;
				w.total = one.total;
			}
			if (one.extra[0])
				add_extra(&w, one.extra, strlen(one.extra));
		}
		s = skip_ws(close + 1);
	}
	set_stem(ps, s);
	ps->rfc = w.patch && w.rfc;
	ps->version = w.patch && w.version ? w.version : 1;
	ps->version_given = w.patch && w.version;
	if (w.patch && w.bad) {
		ps->bad = 1;
	} else if (w.patch) {
		ps->is_patch = 1;
		ps->pos = w.pos;
		ps->total = w.total;
	}
	if (w.patch)
		memcpy(ps->tags, w.extra, sizeof(ps->tags));
	return 0;
}
