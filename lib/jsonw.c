/*
 * jsonw.c - compact JSON writer over jansson trees. jansson prints reals with
 * 17 digits; people and diffs want the shortest form that reads back equal.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/dtoa.h"
#include "lib/jsonw.h"
#include "lib/util.h"

/*
 * Write digits dig[0..n) (n >= 1, dig[0] != '0') times 10^x the way printf's
 * %.{prec}g would (prec >= n): trailing zeros dropped, exponent style below
 * 1e-4 or from 10^prec up. Returns the length written; out needs 26 bytes.
 */
static int g_style(char *out, int neg, const char *dig, int n, int prec, int x)
{
	char *o = out;
	while (n > 1 && dig[n - 1] == '0')
		n--;
	if (neg)
		*o++ = '-';
	if (x < -4 || x >= prec) {
		int ax = x < 0 ? -x : x;
		*o++ = dig[0];
		if (n > 1) {
			*o++ = '.';
			memcpy(o, dig + 1, (size_t)n - 1);
			o += n - 1;
		}
		*o++ = 'e';
		*o++ = x < 0 ? '-' : '+';
		if (ax >= 100)
			*o++ = (char)('0' + ax / 100);
		*o++ = (char)('0' + ax / 10 % 10);
		*o++ = (char)('0' + ax % 10);
	} else if (x < 0) {
		*o++ = '0';
		*o++ = '.';
		for (int i = -1; i > x; i--)
			*o++ = '0';
		memcpy(o, dig, (size_t)n);
		o += n;
	} else {
		for (int i = 0; i <= x || i < n; i++) {
			if (i == x + 1)
				*o++ = '.';
			*o++ = i < n ? dig[i] : '0';
		}
	}
	*o = '\0';
	return (int)(o - out);
}

/* Whole numbers read better without an exponent: 160, not 1.6e+02. */
static int int_style(char *out, long long v)
{
	char rev[20];
	unsigned long long u = v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;
	int n = 0, len = 0;

	do
		rev[n++] = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		out[len++] = '-';
	while (n)
		out[len++] = rev[--n];
	out[len] = '\0';
	return len;
}

/*
 * What the shortest round-trip digits cannot tell: printf's own %.15g, %.16g
 * or %.17g, the first that reads back.
 */
static int printf_style(char *out, size_t cap, double d)
{
	int len = 0;

	for (int prec = 15; prec <= 17; prec++) {
		len = snprintf(out, cap, "%.*g", prec, d);
		if (strtod(out, NULL) == d)
			break;
	}
	return len;
}

/*
 * The rule is printf's, so that what was written before keeps its bytes: the
 * first of %.15g, %.16g, %.17g that reads back as d. double-conversion's
 * shortest digits that read back, k of them, give it. A normal double has 53
 * bits, so for k <= 15 they are what %.15g rounds to (two 15-digit decimals
 * within a unit in the last place of d are one); k = 16 or 17 means no
 * shorter form reads back, and the closest digits of that length that do are
 * what %.16g or %.17g rounds to (ties to even in both). Two exceptions go to
 * printf itself: subnormals, which have fewer bits (5e-324 is
 * 4.94065645841247e-324 to %.15g), and a power of two with k = 16, whose
 * interval is half as wide below it, so that the 16 digits %.16g rounds to can
 * fall out of it while others read back (2^-24 is 5.9604644775390625e-08).
 * tests/unit/test_jsonw.c compares with the former printf-only code.
 */
void jsonw_double(struct buf *b, double d)
{
	char dig[DTOA_DIGITS_MAX + 1], out[48];
	int n, point, len;

	/* range first: converting a double beyond long long's range is undefined */
	if (d > -1e17 && d < 1e17 && d == (double)(long long)d) {
		len = int_style(out, (long long)d);
	} else if (fabs(d) < DBL_MIN) {
		len = printf_style(out, sizeof(out), d); /* subnormal */
	} else {
		uint64_t bits;
		memcpy(&bits, &d, sizeof(bits));
		n = dtoa_shortest(d, dig, &point);
		/* a power of two has no fraction bits */
		if (n == 16 && bits << 12 == 0)
			len = printf_style(out, sizeof(out), d);
		else
			len = g_style(out, d < 0, dig, n, n < 15 ? 15 : n, point - 1);
	}
	buf_append(b, out, (size_t)len);
}

size_t jsonw_utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

void jsonw_string(struct buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t start = 0;

	buf_putc(b, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *esc = NULL;
		char u[7];

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
			continue; /* printable ASCII: copied with the run it ends */

		if (c >= 0x80) {
			/* JSON text is UTF-8: a byte that is not (an echoed URL,
			 * a cut name) becomes U+FFFD */
			size_t len = jsonw_utf8_len((const unsigned char *)s + i, n - i);
			if (len) {
				i += len - 1;
				continue;
			}
			buf_append(b, s + start, i - start);
			buf_puts(b, "\\ufffd");
			start = i + 1;
			continue;
		}
		if (c == '"')
			esc = "\\\"";
		else if (c == '\\')
			esc = "\\\\";
		else if (c == '\n')
			esc = "\\n";
		else if (c == '\t')
			esc = "\\t";
		else if (c == '\r')
			esc = "\\r";
		else if (c < 0x20 || c == 0x7f) {
			u[0] = '\\';
			u[1] = 'u';
			u[2] = '0';
			u[3] = '0';
			u[4] = hex[c >> 4];
			u[5] = hex[c & 15];
			u[6] = '\0';
			esc = u;
		}
		if (esc) {
			buf_append(b, s + start, i - start);
			buf_puts(b, esc);
			start = i + 1;
		}
	}
	buf_append(b, s + start, n - start);
	buf_putc(b, '"');
}

static int key_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void jsonw_object(struct buf *b, const json_t *v, int sort)
{
	size_t n = json_object_size(v), i = 0;
	const char **keys = xmalloc(n * sizeof(*keys));
	const char *key;
	json_t *val;

	json_object_foreach((json_t *)v, key, val)
		keys[i++] = key;
	if (sort)
		qsort(keys, n, sizeof(*keys), key_cmp);
	buf_putc(b, '{');
	for (i = 0; i < n; i++) {
		if (i)
			buf_putc(b, ',');
		jsonw_string(b, keys[i], strlen(keys[i]));
		buf_putc(b, ':');
		jsonw_value(b, json_object_get(v, keys[i]), sort);
	}
	buf_putc(b, '}');
	free(keys);
}

void jsonw_value(struct buf *b, const json_t *v, int sort)
{
	size_t i;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		jsonw_object(b, v, sort);
		break;
	case JSON_ARRAY:
		buf_putc(b, '[');
		for (i = 0; i < json_array_size(v); i++) {
			if (i)
				buf_putc(b, ',');
			jsonw_value(b, json_array_get(v, i), sort);
		}
		buf_putc(b, ']');
		break;
	case JSON_STRING:
		jsonw_string(b, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		break;
	case JSON_REAL:
		jsonw_double(b, json_real_value(v));
		break;
	case JSON_TRUE:
		buf_puts(b, "true");
		break;
	case JSON_FALSE:
		buf_puts(b, "false");
		break;
	case JSON_NULL:
		buf_puts(b, "null");
		break;
	}
}

void jsonw_number(struct buf *b, double d)
{
	if (isfinite(d))
		jsonw_double(b, d);
	else
		buf_puts(b, "null");
}

void jsonw_str(struct buf *b, const char *s)
{
	if (s)
		jsonw_string(b, s, strlen(s));
	else
		buf_puts(b, "null");
}

char *jsonw_dump(const json_t *v, int sort)
{
	struct buf b = BUF_INIT;
	jsonw_value(&b, v, sort);
	return buf_detach(&b, NULL);
}
