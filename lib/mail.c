/*
 * mail.c - mboxrd threads and single messages into struct mail_msg: the
 * mbox split, the header block (fields cut out here, their values read by
 * mail_hdr.c), the body's diff and b4 trailer lines, and a bounded gunzip
 * for t.mbox.gz. Every loop is bounded by the input or by a LIMIT_*.
 */
#include "lib/mail.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "lib/buf.h"
#include "lib/kperf_limits.h"
#include "lib/mail_hdr.h"
#include "lib/util.h"

/* parse_msg's results: a message to keep, the whole mbox refused, or one
 * message dropped (its Subject is too long). */
enum { MSG_OK = 0, MSG_FATAL = -1, MSG_SKIP = -2 };

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* End of the line at p: its '\n', or end. */
static const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	return nl ? nl : end;
}

static int starts(const char *p, const char *end, const char *lit)
{
	size_t n = strlen(lit);
	return (size_t)(end - p) >= n && memcmp(p, lit, n) == 0;
}

/* The field value unfolded, control bytes and bad UTF-8 made '?', trimmed. */
static char *raw_value(const char *s, size_t n)
{
	struct buf b = BUF_INIT;
	size_t i, a = 0, z, len;
	char *r;

	for (i = 0; i < n; i++)
		if (s[i] != '\r' && s[i] != '\n')
			buf_putc(&b, s[i] == '\t' ? ' ' : s[i]);
	r = buf_detach(&b, &len);
	if (!r)
		return xstrdup("");
	mail_hdr_utf8_clean(r, len);
	while (a < len && r[a] == ' ')
		a++;
	for (z = len; z > a && r[z - 1] == ' '; z--)
		;
	memmove(r, r + a, z - a);
	r[z - a] = '\0';
	return r;
}

static void list_add(char ***v, size_t *n, char *s, size_t max)
{
	size_t i;

	for (i = 0; i < *n; i++) {
		if (strcmp((*v)[i], s) == 0) {
			free(s);
			return;
		}
	}
	if (*n >= max) {
		free(s);
		return;
	}
	if ((*n & (*n - 1)) == 0 || *n == 0)
		*v = xrealloc(*v, (*n ? *n * 2 : 1) * sizeof(**v));
	(*v)[(*n)++] = s;
}

/* One header field: name[0..nl), value[0..vl) with its folds. */
static int header_field(struct mail_msg *m, const char *name, size_t nl, const char *value,
			size_t vl, char *err, size_t errlen)
{
#define IS(lit) (nl == sizeof(lit) - 1 && strncasecmp(name, lit, nl) == 0)
	char **ids;

	if (IS("Message-ID") && !m->msgid) {
		if (mail_hdr_msgids(value, vl, 1, &ids) == 1) {
			m->msgid = ids[0];
			free(ids);
		}
	} else if (IS("Subject") && !m->subject) {
		m->subject = mail_hdr_decode(value, vl);
		if (strlen(m->subject) > LIMIT_MAIL_SUBJECT) {
			set_err(err, errlen, "subject of %zu bytes is over the limit of %d",
				strlen(m->subject), LIMIT_MAIL_SUBJECT);
			return MSG_SKIP;
		}
	} else if (IS("From") && !m->from_email) {
		mail_hdr_address(value, vl, &m->from_name, &m->from_email);
	} else if (IS("In-Reply-To") && !m->in_reply_to) {
		if (mail_hdr_msgids(value, vl, 1, &ids) == 1) {
			m->in_reply_to = ids[0];
			free(ids);
		}
	} else if (IS("References") && !m->refs) {
		m->nrefs = mail_hdr_msgids(value, vl, LIMIT_THREAD_MSGS, &m->refs);
	} else if (IS("Date") && !m->date) {
		m->date = raw_value(value, vl);
	} else if (IS("X-Kperf-Report") && !m->x_kperf) {
		m->x_kperf = raw_value(value, vl);
	}
	return MSG_OK;
#undef IS
}

/* A field name: printable ASCII but ':' and space (RFC 5322 ftext). */
static int field_name_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] > '~')
			return 0;
	return 1;
}

/* Reads the header block starting at *pp; leaves *pp at the body. */
static int parse_headers(struct mail_msg *m, const char **pp, const char *end, char *err,
			 size_t errlen)
{
	const char *p = *pp, *start = *pp;
	int rc = MSG_OK;

	while (p < end) {
		const char *le = line_end(p, end), *fe = le, *colon;
		if (le == p || (le - p == 1 && *p == '\r')) {
			p = le < end ? le + 1 : end; /* the blank line */
			break;
		}
		/* the field's folded continuation lines */
		while (fe + 1 < end && (fe[1] == ' ' || fe[1] == '\t'))
			fe = line_end(fe + 1, end);
		if ((size_t)(fe - start) > LIMIT_MAIL_HEADER_BYTES) {
			set_err(err, errlen, "header block over %u bytes", LIMIT_MAIL_HEADER_BYTES);
			return MSG_FATAL;
		}
		colon = memchr(p, ':', (size_t)(le - p));
		if (colon && field_name_ok(p, (size_t)(colon - p)) && rc == MSG_OK)
			rc = header_field(m, p, (size_t)(colon - p), colon + 1,
					  (size_t)(fe - colon - 1), err, errlen);
		/* a line without a colon (or a bad name) is not a field: skipped */
		p = fe < end ? fe + 1 : end;
	}
	*pp = p;
	return rc;
}

/* A line of 40 hex digits after prefix, then only white space. */
static char *hex40_after(const char *p, const char *le, const char *prefix)
{
	size_t pl = strlen(prefix), i;
	const char *h = p + pl;

	if (!starts(p, le, prefix) || le - h < 40)
		return NULL;
	for (i = 0; i < 40; i++)
		if (!isxdigit((unsigned char)h[i]))
			return NULL;
	for (i = 40; h + i < le; i++)
		if (!isspace((unsigned char)h[i]))
			return NULL;
	return xstrndup(h, 40);
}

/* The path of "diff --git a/X b/X": the a/ side. When the two halves are
 * the same path (the usual case) that split is taken, so spaces are fine. */
static char *diff_git_path(const char *s, const char *le)
{
	size_t n = (size_t)(le - s), half;
	const char *b;

	while (n && (s[n - 1] == '\r' || s[n - 1] == ' '))
		n--;
	if (n < 6 || s[0] != 'a' || s[1] != '/')
		return NULL;
	half = (n - 1) / 2;
	if (n % 2 == 1 && s[half] == ' ' && s[half + 1] == 'b' && s[half + 2] == '/' &&
	    memcmp(s + 2, s + half + 3, half - 2) == 0)
		return xstrndup(s + 2, half - 2);
	b = memmem(s, n, " b/", 3);
	return b && b > s + 2 ? xstrndup(s + 2, (size_t)(b - s - 2)) : NULL;
}

/* A "--- a/X" / "+++ b/X" path up to a tab or the line end, or NULL. */
static char *unified_path(const char *s, const char *le)
{
	const char *t = memchr(s, '\t', (size_t)(le - s));
	const char *e = t ? t : le;

	while (e > s && (e[-1] == '\r' || e[-1] == ' '))
		e--;
	return e > s ? xstrndup(s, (size_t)(e - s)) : NULL;
}

static void add_file(struct mail_msg *m, char *path)
{
	if (!path)
		return;
	mail_hdr_utf8_clean(path, strlen(path));
	list_add(&m->files, &m->nfiles, path, LIMIT_FILES);
}

/* The body's diff, base-commit, prerequisite-patch-id and change-id lines. */
static void scan_body(struct mail_msg *m)
{
	const char *p = m->body, *end = m->body + strlen(m->body);

	while (p < end) {
		const char *le = line_end(p, end);
		char *h;
		if (starts(p, le, "diff --git ")) {
			m->has_diff = 1;
			add_file(m, diff_git_path(p + 11, le));
		} else if (starts(p, le, "--- ") && le < end && starts(le + 1, end, "+++ ")) {
			const char *l2 = le + 1, *le2 = line_end(l2, end);
			if ((starts(p, le, "--- a/") || starts(p, le, "--- /dev/null")) &&
			    (starts(l2, le2, "+++ b/") || starts(l2, le2, "+++ /dev/null"))) {
				m->has_diff = 1;
				if (starts(l2, le2, "+++ b/"))
					add_file(m, unified_path(l2 + 6, le2));
				else if (starts(p, le, "--- a/"))
					add_file(m, unified_path(p + 6, le));
			}
			le = le2;
		} else if (!m->base_commit && (h = hex40_after(p, le, "base-commit: "))) {
			m->base_commit = h;
		} else if (!m->base_commit && !m->base_other && starts(p, le, "base-commit: ")) {
			char *v = raw_value(p + 13, (size_t)(le - p - 13));
			if (strlen(v) > LIMIT_MAIL_BASE_OTHER) { /* cut, no half a character left */
				v[LIMIT_MAIL_BASE_OTHER] = '\0';
				mail_hdr_utf8_clean(v, LIMIT_MAIL_BASE_OTHER);
			}
			if (*v)
				m->base_other = v;
			else
				free(v);
		} else if ((h = hex40_after(p, le, "prerequisite-patch-id: "))) {
			list_add(&m->prereq, &m->nprereq, h, LIMIT_THREAD_MSGS);
		} else if (!m->change_id && starts(p, le, "change-id: ")) {
			char *v = raw_value(p + 11, (size_t)(le - p - 11));
			if (*v)
				m->change_id = v;
			else
				free(v);
		}
		p = le < end ? le + 1 : end;
	}
}

/* The body: CRLF made LF, NUL made '?', and in an mboxrd one '>' taken off
 * ">+From ". */
static char *body_text(const char *p, const char *end, int mboxrd)
{
	struct buf b = BUF_INIT;
	char *r;
	size_t len;

	while (p < end) {
		const char *le = line_end(p, end), *s = p, *e = le;
		if (mboxrd && *s == '>') {
			const char *q = s;
			while (q < e && *q == '>')
				q++;
			if (starts(q, e, "From "))
				s++;
		}
		if (e > s && e[-1] == '\r' && le < end)
			e--;
		/* a NUL would end the C string early: it becomes '?' */
		while (s < e) {
			const char *nul = memchr(s, '\0', (size_t)(e - s));
			const char *stop = nul ? nul : e;
			buf_append(&b, s, (size_t)(stop - s));
			if (!nul)
				break;
			buf_putc(&b, '?');
			s = nul + 1;
		}
		if (le < end)
			buf_putc(&b, '\n');
		p = le < end ? le + 1 : end;
	}
	r = buf_detach(&b, &len);
	if (!r)
		return xstrdup("");
	/* the blank line mboxrd writes after each message is not the body's */
	if (mboxrd && len >= 2 && r[len - 1] == '\n' && r[len - 2] == '\n')
		r[len - 1] = '\0';
	return r;
}

static int parse_msg(const char *buf, size_t len, struct mail_msg *m, char *err,
		     size_t errlen)
{
	const char *p = buf, *end = buf + len;
	int mboxrd = 0, rc;

	memset(m, 0, sizeof(*m));
	if (starts(p, end, "From ")) {
		const char *le = line_end(p, end);
		p = le < end ? le + 1 : end;
		mboxrd = 1;
	}
	rc = parse_headers(m, &p, end, err, errlen);
	if (rc != MSG_OK) {
		mail_msg_free(m);
		return rc;
	}
	if (!m->subject)
		m->subject = xstrdup("");
	if (!m->from_email) {
		m->from_name = xstrdup("");
		m->from_email = xstrdup("");
	}
	m->body = body_text(p, end, mboxrd);
	scan_body(m);
	return MSG_OK;
}

int mail_parse_one(const char *buf, size_t len, struct mail_msg *m, char *err, size_t errlen)
{
	if (len > LIMIT_MBOX_BYTES) {
		memset(m, 0, sizeof(*m));
		set_err(err, errlen, "message of %zu bytes is over the limit of %u", len,
			LIMIT_MBOX_BYTES);
		return -1;
	}
	return parse_msg(buf, len, m, err, errlen) == MSG_OK ? 0 : -1;
}

/* Start of the next message after p: a line beginning "From ", or end. */
static const char *next_from(const char *p, const char *end)
{
	for (;;) {
		const char *le = line_end(p, end);
		if (le >= end)
			return end;
		p = le + 1;
		if (starts(p, end, "From "))
			return p;
	}
}

int mail_parse_mbox(const char *buf, size_t len, struct mail_msg **out, size_t *n,
		    size_t *skipped, char *err, size_t errlen)
{
	const char *end = buf + len, *p;
	struct mail_msg *v;
	size_t count = 0, i = 0;

	*out = NULL;
	*n = 0;
	*skipped = 0;
	if (len > LIMIT_MBOX_BYTES) {
		set_err(err, errlen, "mbox of %zu bytes is over the limit of %u", len,
			LIMIT_MBOX_BYTES);
		return -1;
	}
	if (len == 0)
		return 0;
	if (!starts(buf, end, "From ")) {
		count = 1;
	} else {
		for (p = buf; p < end; p = next_from(p, end)) {
			if (++count > LIMIT_THREAD_MSGS) {
				set_err(err, errlen, "mbox has over %d messages", LIMIT_THREAD_MSGS);
				return -1;
			}
		}
	}
	v = xcalloc(count, sizeof(*v));
	for (p = buf; p < end && i < count;) {
		const char *q = count == 1 ? end : next_from(p, end);
		char why[128];
		int rc = parse_msg(p, (size_t)(q - p), &v[i], why, sizeof(why));
		if (rc == MSG_FATAL) {
			set_err(err, errlen, "message %zu: %s", i + *skipped + 1, why);
			mail_msgs_free(v, i);
			*skipped = 0;
			return -1;
		}
		if (rc == MSG_SKIP)
			(*skipped)++;
		else
			i++;
		p = q;
	}
	if (i == 0) {
		free(v);
		v = NULL;
	}
	*out = v;
	*n = i;
	return 0;
}

static void free_list(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void mail_msg_free(struct mail_msg *m)
{
	if (!m)
		return;
	free(m->msgid);
	free(m->subject);
	free(m->from_name);
	free(m->from_email);
	free(m->in_reply_to);
	free_list(m->refs, m->nrefs);
	free(m->date);
	free(m->body);
	free_list(m->files, m->nfiles);
	free(m->base_commit);
	free(m->base_other);
	free_list(m->prereq, m->nprereq);
	free(m->change_id);
	free(m->x_kperf);
	memset(m, 0, sizeof(*m));
}

void mail_msgs_free(struct mail_msg *v, size_t n)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < n; i++)
		mail_msg_free(&v[i]);
	free(v);
}

int mail_gunzip(const unsigned char *in, size_t len, size_t max, char **out, size_t *outlen,
		char *err, size_t errlen)
{
	z_stream zs;
	struct buf b = BUF_INIT;
	unsigned char chunk[16384];
	int zr = Z_OK;

	*out = NULL;
	*outlen = 0;
	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
		set_err(err, errlen, "gunzip: zlib init failed");
		return -1;
	}
	zs.next_in = (unsigned char *)in;
	while (zr != Z_STREAM_END) {
		size_t got;
		/* feed at most 1 GiB a call: avail_in is 32-bit */
		if (zs.avail_in == 0 && len > 0) {
			zs.avail_in = len > (1u << 30) ? (1u << 30) : (unsigned)len;
			len -= zs.avail_in;
		}
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		zr = inflate(&zs, Z_NO_FLUSH);
		if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
			set_err(err, errlen, "gunzip: %s", zs.msg ? zs.msg : "corrupt stream");
			goto fail;
		}
		got = sizeof(chunk) - zs.avail_out;
		if (got > max - b.len) {
			set_err(err, errlen, "gunzip: output over %zu bytes", max);
			goto fail;
		}
		buf_append(&b, chunk, got);
		/* no output with room for it and no input left: the stream stops early */
		if (zr != Z_STREAM_END && got == 0 && zs.avail_in == 0 && len == 0) {
			set_err(err, errlen, "truncated gzip");
			goto fail;
		}
	}
	inflateEnd(&zs);
	*out = buf_detach(&b, outlen);
	if (!*out)
		*out = xstrdup("");
	return 0;
fail:
	inflateEnd(&zs);
	buf_release(&b);
	return -1;
}
