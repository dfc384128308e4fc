/*
 * buf.c - growable buffer; grows by doubling, aborts on OOM through xrealloc.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/util.h"

void buf_init(struct buf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void buf_release(struct buf *b)
{
	free(b->data);
	buf_init(b);
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

static void buf_grow(struct buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;
	size_t cap = b->cap ? b->cap : 64;

	if (need <= b->cap)
		return;
	while (cap < need)
		cap *= 2;
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
}

void buf_append(struct buf *b, const void *data, size_t n)
{
	buf_grow(b, n);
	memcpy(b->data + b->len, data, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void buf_puts(struct buf *b, const char *s)
{
	buf_append(b, s, strlen(s));
}

void buf_putc(struct buf *b, char c)
{
	buf_append(b, &c, 1);
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	/* one pass when it fits in what is left, the usual case */
	buf_grow(b, 64);
	va_start(ap, fmt);
	n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n <= 0) {
		b->data[b->len] = '\0';
		return;
	}
	if ((size_t)n >= b->cap - b->len) {
		buf_grow(b, (size_t)n);
		va_start(ap, fmt);
		vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

const char *buf_str(const struct buf *b)
{
	return b->data ? b->data : "";
}

char *buf_detach(struct buf *b, size_t *len)
{
	char *p = b->data ? b->data : xstrdup("");
	if (len)
		*len = b->len;
	buf_init(b);
	return p;
}
