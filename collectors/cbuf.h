/*
 * cbuf.h - the collector's growable byte buffer: command output, JSON text,
 * file contents. Always NUL-terminated once anything was appended.
 */
#ifndef KPERF_CBUF_H
#define KPERF_CBUF_H

#include <stddef.h>

struct cbuf {
	char *data; /* NUL-terminated; NULL until the first append */
	size_t len;
	size_t cap;
};

#define CBUF_INIT {NULL, 0, 0}

/* Frees the storage; the buffer is empty and reusable afterwards. */
void cbuf_release(struct cbuf *b);
void cbuf_reset(struct cbuf *b);
void cbuf_append(struct cbuf *b, const void *data, size_t n);
void cbuf_puts(struct cbuf *b, const char *s);
void cbuf_putc(struct cbuf *b, char c);
void cbuf_printf(struct cbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Returns the data ("" when empty), still owned by the buffer. */
const char *cbuf_str(const struct cbuf *b);
/* Hands the data to the caller (free() it; never NULL) and empties the buffer. */
char *cbuf_detach(struct cbuf *b, size_t *len);

#endif
