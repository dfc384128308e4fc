/*
 * jsonw.c - compact JSON writer over jansson trees. jansson prints reals with
 * 17 digits; people and diffs want the shortest form that reads back equal.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "util.h"

/*
 * Write digits dig[0..n) (n >= 1, dig[0] != '0') times 10^x the way printf's
 * %.{n}g would: trailing zeros dropped, exponent style below 1e-4 or from
 * 10^n up.
 */
static int g_style(char *out, size_t cap, int neg, const char *dig, int n, int x)
{
	char *o = out;
	int p = n; /* the precision: it, not the digits kept, picks the style */
	while (n > 1 && dig[n - 1] == '0')
		n--;
	if (neg)
		*o++ = '-';
	if (x < -4 || x >= p) {
		*o++ = dig[0];
		if (n > 1) {
			*o++ = '.';
			memcpy(o, dig + 1, (size_t)n - 1);
			o += n - 1;
		}
		return (int)(o - out) + snprintf(o, cap - (size_t)(o - out), "e%c%02d",
						 x < 0 ? '-' : '+', x < 0 ? -x : x);
	}
	if (x < 0) {
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

void jsonw_double(struct buf *b, double d)
{
	char e17[40], dig[20], tmp[48];
	int neg, x, prec;

	/* Whole numbers read better without an exponent: 160, not 1.6e+02. */
	/* range first: converting a double beyond long long's range is undefined */
	if (d > -1e17 && d < 1e17 && d == (double)(long long)d) {
		snprintf(tmp, sizeof(tmp), "%lld", (long long)d);
		buf_puts(b, tmp);
		return;
	}
	/*
	 * The shortest of 15, 16 or 17 significant digits that reads back as d.
	 * One conversion to 17 digits; the shorter candidates are its decimal
	 * roundings, each checked by reading it back, so what is written always
	 * reads back exactly (17 digits always do).
	 */
	snprintf(e17, sizeof(e17), "%.16e", d); /* [-]d.dddddddddddddddde[+-]xx */
	neg = e17[0] == '-';
	dig[0] = e17[neg];
	memcpy(dig + 1, e17 + neg + 2, 16);
	x = (int)strtol(e17 + neg + 19, NULL, 10);
	for (prec = 15; prec < 17; prec++) {
		char r[20];
		int rx = x, i;
		memcpy(r, dig, 17);
		if (r[prec] == '5' && (prec == 16 || r[16] == '0')) {
			/* a tie in the 17 digits may not be one in d: let printf round d */
			snprintf(tmp, sizeof(tmp), "%.*g", prec, d);
			if (strtod(tmp, NULL) == d) {
				buf_puts(b, tmp);
				return;
			}
			continue;
		}
		if (r[prec] >= '5') { /* past the tie: rounding the digits rounds d */
			for (i = prec - 1; i >= 0 && r[i] == '9'; i--)
				r[i] = '0';
			if (i >= 0) {
				r[i]++;
			} else { /* 9.99... became 10.0... */
				memmove(r + 1, r, (size_t)prec - 1);
				r[0] = '1';
				rx++;
			}
		}
		g_style(tmp, sizeof(tmp), neg, r, prec, rx);
		if (strtod(tmp, NULL) == d) {
			buf_puts(b, tmp);
			return;
		}
	}
	g_style(tmp, sizeof(tmp), neg, dig, 17, x);
	buf_puts(b, tmp);
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 when invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
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

		if (c >= 0x80) {
			/* JSON text is UTF-8: a byte that is not (an echoed URL,
			 * a cut name) becomes U+FFFD */
			size_t len = utf8_len((const unsigned char *)s + i, n - i);
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
