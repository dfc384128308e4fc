/*
 * buf.h - the one growable byte buffer of kperfd: request bodies, JSON and
 * text answers, SQL array literals. Always NUL-terminated.
 */
#ifndef KPERF_BUF_H
#define KPERF_BUF_H

#include <stddef.h>

struct buf {
	char *data; /* NUL-terminated; NULL until the first append */
	size_t len;
	size_t cap;
};

#define BUF_INIT {NULL, 0, 0}

void buf_init(struct buf *b);
/* Frees the storage; the buffer is empty and reusable afterwards. */
void buf_release(struct buf *b);
void buf_reset(struct buf *b);
void buf_append(struct buf *b, const void *data, size_t n);
void buf_puts(struct buf *b, const char *s);
void buf_putc(struct buf *b, char c);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Returns the data ("" when empty), still owned by the buffer. */
const char *buf_str(const struct buf *b);
/* Hands the data to the caller (free() it) and empties the buffer. */
char *buf_detach(struct buf *b, size_t *len);

#endif
