/*
 * mail.h - mail messages as public-inbox serves them: an mboxrd thread
 * (/M/t.mbox.gz), one message (/M/raw), or a bare RFC 5322 message. kperfd
 * reads a series' cover letter and patches with this; pure functions over
 * buffers, bounded by the LIMIT_MBOX_* / LIMIT_MAIL_* limits.
 */
#ifndef KPERF_MAIL_H
#define KPERF_MAIL_H

#include <stddef.h>

struct mail_msg {
	char *msgid;       /* without <>, NULL if missing */
	char *subject;     /* unfolded; RFC 2047 =?utf-8?q/b?= decoded to UTF-8; invalid
			    * UTF-8 bytes replaced by '?'; "" if missing */
	char *from_name;   /* decoded display name, may be "" */
	char *from_email;  /* "" if missing */
	char *in_reply_to; /* first msgid in In-Reply-To, without <>, or NULL */
	char **refs;       /* References msgids in order, without <> */
	size_t nrefs;
	char *date;        /* raw Date: value, NULL if missing */
	char *body;        /* body text (after the blank line), mboxrd ">From " unescaped,
			    * CRLF made LF, NUL bytes made '?', otherwise bytes as sent */
	int has_diff;      /* body contains a unified diff ("diff --git " or "--- a/" + "+++ b/" lines) */
	char **files;      /* files the diff touches (from "diff --git a/X b/X"), deduplicated,
			    * in order of appearance, at most LIMIT_FILES */
	size_t nfiles;
	char *base_commit; /* "base-commit: <40 hex>" line in the body, or NULL */
	char *base_other;  /* the value of the first "base-commit:" line that is not 40
			    * hex (a tag, a short sha), cut at LIMIT_MAIL_BASE_OTHER bytes,
			    * or NULL */
	char **prereq;     /* "prerequisite-patch-id: <40 hex>" lines */
	size_t nprereq;
	char *change_id;   /* "change-id: <value>" line (b4), or NULL */
	char *x_kperf;     /* value of an "X-Kperf-Report:" header (kperf's own mails), or NULL */
};

/*
 * Splits an mbox (mboxrd as public-inbox serves it: "From mboxrd@z ..."
 * separators, or a single message without a From_ line) into messages and
 * parses each. On success returns 0 with *out a malloc'd array of *n
 * messages (NULL when n is 0; free with mail_msgs_free) and *skipped the
 * number of messages dropped because their Subject is over
 * LIMIT_MAIL_SUBJECT bytes (the others are kept). Returns -1, with err
 * saying why and *out NULL, for input over LIMIT_MBOX_BYTES, more than
 * LIMIT_THREAD_MSGS messages, or a header block over
 * LIMIT_MAIL_HEADER_BYTES. Header lines without a colon are ignored; CRLF
 * line ends are read as LF. The body is not decoded (quoted-printable and
 * base64 bodies stay as sent).
 */
int mail_parse_mbox(const char *buf, size_t len, struct mail_msg **out, size_t *n,
		    size_t *skipped, char *err, size_t errlen);

/*
 * Parses one message (a leading "From " line is skipped) into *m, which the
 * caller owns (free with mail_msg_free). Returns -1 with err set and *m
 * zeroed for a header block over LIMIT_MAIL_HEADER_BYTES, a Subject over
 * LIMIT_MAIL_SUBJECT bytes, or input over LIMIT_MBOX_BYTES.
 */
int mail_parse_one(const char *buf, size_t len, struct mail_msg *m, char *err, size_t errlen);

/* Frees the members and zeroes *m; NULL is fine. */
void mail_msg_free(struct mail_msg *m);
/* Frees n messages and the array; NULL is fine. */
void mail_msgs_free(struct mail_msg *v, size_t n);

/*
 * gunzip (zlib, gzip wrapper) in[0..len) into a malloc'd, NUL-terminated
 * buffer (*out, *outlen without the NUL). Returns -1 with err set and *out
 * NULL when the output would exceed max bytes (a gzip bomb: "gunzip: output
 * over N bytes"), the stream ends early ("truncated gzip") or is corrupt.
 * Bytes after the end of the first gzip member are ignored.
 */
int mail_gunzip(const unsigned char *in, size_t len, size_t max, char **out, size_t *outlen,
		char *err, size_t errlen);

#endif
