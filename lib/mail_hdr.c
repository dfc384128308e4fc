/*
 * mail_hdr.c - header field values: unfolding, RFC 2047 decoding, UTF-8
 * clean-up, addresses, Message-ID lists. Everything here takes the raw text
 * of one field as lib/mail.c cut it out and gives back malloc'd strings.
 */
#include "lib/mail_hdr.h"

#include <ctype.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/util.h"

/* Bytes of one encoded word at most (RFC 2047 says 75). */
#define MAIL_HDR_WORD_MAX 1024

static int b64val(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* Length of the UTF-8 sequence at s (at most n bytes), 0 when it is not valid
 * (overlong forms, surrogates and code points over U+10FFFF included). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;
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
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

void mail_hdr_utf8_clean(char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		size_t l;
		if (c < 0x20 && c != '\t' && c != '\n') {
			s[i++] = '?';
			continue;
		}
		if (c == 0x7f) {
			s[i++] = '?';
			continue;
		}
		l = utf8_len((const unsigned char *)s + i, n - i);
		if (l == 0)
			s[i++] = '?';
		else
			i += l;
	}
}

/* Appends the decoded text of one encoded word; returns -1 when it is not one
 * (bad encoding letter or bad base64), leaving out as it was. */
static int decode_word(struct buf *out, const char *charset, size_t cslen, char enc,
		       const char *text, size_t tn)
{
	int latin1 = (cslen == 10 && strncasecmp(charset, "iso-8859-1", 10) == 0) ||
		     (cslen == 6 && strncasecmp(charset, "latin1", 6) == 0);
	struct buf raw = BUF_INIT;
	size_t i;

	if (enc == 'q' || enc == 'Q') {
		for (i = 0; i < tn; i++) {
			int h, l;
			if (text[i] == '_') {
				buf_putc(&raw, ' ');
			} else if (text[i] == '=' && i + 2 < tn && (h = hex_digit(text[i + 1])) >= 0 &&
				   (l = hex_digit(text[i + 2])) >= 0) {
				buf_putc(&raw, (char)(h * 16 + l));
				i += 2;
			} else {
				buf_putc(&raw, text[i]);
			}
		}
	} else if (enc == 'b' || enc == 'B') {
		unsigned acc = 0;
		int bits = 0;
		for (i = 0; i < tn; i++) {
			int v;
			if (text[i] == '=')
				break;
			if ((v = b64val((unsigned char)text[i])) < 0) {
				buf_release(&raw);
				return -1;
			}
			acc = (acc << 6) | (unsigned)v;
			bits += 6;
			if (bits >= 8) {
				bits -= 8;
				buf_putc(&raw, (char)((acc >> bits) & 0xff));
			}
		}
	} else {
		return -1;
	}
	if (latin1) {
		for (i = 0; i < raw.len; i++) {
			unsigned char c = (unsigned char)raw.data[i];
			if (c < 0x80) {
				buf_putc(out, (char)c);
			} else {
				buf_putc(out, (char)(0xc0 | (c >> 6)));
				buf_putc(out, (char)(0x80 | (c & 0x3f)));
			}
		}
	} else if (raw.len) {
		buf_append(out, raw.data, raw.len);
	}
	buf_release(&raw);
	return 0;
}

/* If an encoded word =?cs?e?text?= starts at s[i], decodes it into out and
 * returns its length; 0 when there is none. */
static size_t encoded_word(struct buf *out, const char *s, size_t n, size_t i)
{
	size_t cs, q1, q2, end;

	if (i + 1 >= n || s[i] != '=' || s[i + 1] != '?')
		return 0;
	cs = i + 2;
	for (q1 = cs; q1 < n && s[q1] != '?' && s[q1] != ' '; q1++)
		;
	if (q1 + 2 >= n || s[q1] != '?' || s[q1 + 2] != '?' || q1 == cs)
		return 0;
	q2 = q1 + 2;
	/* RFC 2047 caps a word at 75 bytes; a longer cap keeps sloppy mailers
	 * working and a header of unterminated "=?" starts linear */
	for (end = q2 + 1; end + 1 < n && !(s[end] == '?' && s[end + 1] == '='); end++)
		if (s[end] == ' ' || end - i > MAIL_HDR_WORD_MAX)
			return 0;
	if (end + 1 >= n)
		return 0;
	{
		/* "utf-8*en" (RFC 2231 language) names the charset before the '*' */
		const char *star = memchr(s + cs, '*', q1 - cs);
		size_t cslen = star ? (size_t)(star - (s + cs)) : q1 - cs;
		if (decode_word(out, s + cs, cslen, s[q1 + 1], s + q2 + 1, end - q2 - 1) < 0)
			return 0;
	}
	return end + 2 - i;
}

char *mail_hdr_decode(const char *s, size_t n)
{
	struct buf out = BUF_INIT;
	size_t i = 0, pending_ws = 0, ws_at = 0;
	int last_encoded = 0;
	char *r;
	size_t len, a, b;

	while (i < n) {
		size_t w;
		char c = s[i];
		if (c == '\r' || c == '\n') {
			i++;
			continue;
		}
		if (c == ' ' || c == '\t') {
			if (!pending_ws)
				ws_at = out.len;
			pending_ws++;
			buf_putc(&out, ' ');
			i++;
			continue;
		}
		if ((w = encoded_word(&out, s, n, i)) > 0) {
			/* whitespace between two encoded words is not part of the text */
			if (last_encoded && pending_ws) {
				size_t tail = out.len - (ws_at + pending_ws);
				memmove(out.data + ws_at, out.data + ws_at + pending_ws, tail);
				out.len -= pending_ws;
				out.data[out.len] = '\0';
			}
			last_encoded = 1;
			pending_ws = 0;
			i += w;
			continue;
		}
		buf_putc(&out, c);
		last_encoded = 0;
		pending_ws = 0;
		i++;
	}
	r = buf_detach(&out, &len);
	if (!r)
		return xstrdup("");
	mail_hdr_utf8_clean(r, len);
	/* a decoded line break must not reach a header kperf writes back */
	for (a = 0; a < len; a++)
		if (r[a] == '\n' || r[a] == '\t')
			r[a] = r[a] == '\n' ? '?' : ' ';
	for (a = 0; a < len && r[a] == ' '; a++)
		;
	for (b = len; b > a && r[b - 1] == ' '; b--)
		;
	memmove(r, r + a, b - a);
	r[b - a] = '\0';
	return r;
}

/* The name part: decoded, outer quotes removed, \" and \\ unescaped. */
static char *clean_name(const char *s, size_t n)
{
	char *d = mail_hdr_decode(s, n);
	size_t len = strlen(d), i, j = 0;

	if (len >= 2 && d[0] == '"' && d[len - 1] == '"') {
		memmove(d, d + 1, len - 2);
		d[len - 2] = '\0';
		len -= 2;
	}
	for (i = 0; i < len; i++) {
		if (d[i] == '\\' && i + 1 < len)
			i++;
		d[j++] = d[i];
	}
	d[j] = '\0';
	return d;
}

static char *trimmed_dup(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	{
		char *r = xstrndup(s, n);
		mail_hdr_utf8_clean(r, n);
		return r;
	}
}

void mail_hdr_address(const char *s, size_t n, char **name, char **email)
{
	const char *lt = NULL, *gt = NULL, *p;
	int quoted = 0;

	for (p = s; p < s + n; p++) {
		if (*p == '"' && (p == s || p[-1] != '\\'))
			quoted = !quoted;
		else if (!quoted && *p == '<' && !lt)
			lt = p;
		else if (lt && *p == '>') {
			gt = p;
			break;
		}
	}
	if (lt && gt) {
		*name = clean_name(s, (size_t)(lt - s));
		*email = trimmed_dup(lt + 1, (size_t)(gt - lt - 1));
		return;
	}
	p = memchr(s, '(', n);
	if (p) {
		const char *close = memchr(p, ')', n - (size_t)(p - s));
		size_t cn = close ? (size_t)(close - p - 1) : n - (size_t)(p - s) - 1;
		*name = clean_name(p + 1, cn);
		*email = trimmed_dup(s, (size_t)(p - s));
		return;
	}
	*name = xstrdup("");
	*email = trimmed_dup(s, n);
}

size_t mail_hdr_msgids(const char *s, size_t n, size_t max, char ***out)
{
	char **v = NULL;
	size_t count = 0, cap = 0, i = 0;
	int bracketed = memchr(s, '<', n) != NULL;

	*out = NULL;
	while (i < n && count < max) {
		size_t start, end;
		if (bracketed) {
			while (i < n && s[i] != '<')
				i++;
			if (i >= n)
				break;
			start = ++i;
			while (i < n && s[i] != '>' && s[i] != '<')
				i++;
			if (i >= n || s[i] == '<')
				continue; /* unclosed: not an id */
			end = i++;
		} else {
			while (i < n && isspace((unsigned char)s[i]))
				i++;
			start = i;
			while (i < n && !isspace((unsigned char)s[i]))
				i++;
			end = i;
		}
		while (start < end && isspace((unsigned char)s[start]))
			start++;
		while (end > start && isspace((unsigned char)s[end - 1]))
			end--;
		/* a stray '>' in a bare token: not an id */
		if (end == start || (!bracketed && memchr(s + start, '>', end - start)))
			continue;
		if (count == cap) {
			cap = cap ? cap * 2 : 4;
			v = xrealloc(v, cap * sizeof(*v));
		}
		v[count++] = trimmed_dup(s + start, end - start);
	}
	*out = v;
	return count;
}
