/*
 * mail_hdr.h - the values of mail header fields: RFC 2047 encoded words,
 * UTF-8 clean-up, addresses and Message-IDs. The parts of lib/mail.c that
 * read one field's text; pure functions over (pointer, length).
 */
#ifndef KPERF_MAIL_HDR_H
#define KPERF_MAIL_HDR_H

#include <stddef.h>

/*
 * The field text s[0..n) unfolded (CR and LF dropped, tabs made spaces),
 * RFC 2047 words (=?utf-8?q?..?=, =?iso-8859-1?b?..?=, any case) decoded,
 * trimmed. Charsets other than UTF-8, US-ASCII and ISO-8859-1 are copied
 * as bytes. Bytes that are not valid UTF-8, and control bytes (a decoded
 * line break too), become '?'; a decoded tab becomes a space.
 * Returns a malloc'd string (never NULL).
 */
char *mail_hdr_decode(const char *s, size_t n);

/*
 * "Name <user@host>", "\"Last, First\" <user@host>", "user@host (Name)" or
 * "user@host": sets *name (decoded, unquoted, "" when absent) and *email
 * ("" when absent), both malloc'd.
 */
void mail_hdr_address(const char *s, size_t n, char **name, char **email);

/*
 * The Message-IDs of s[0..n) in order, without <> (a bare token counts when
 * there are no brackets at all), at most max of them. Sets *out to a
 * malloc'd array of malloc'd strings (NULL when none); returns the count.
 */
size_t mail_hdr_msgids(const char *s, size_t n, size_t max, char ***out);

/* s[0..n) made valid UTF-8 in place: each bad byte or control byte other than
 * tab and LF becomes '?'. */
void mail_hdr_utf8_clean(char *s, size_t n);

#endif
