/*
 * cbuf.c - the collector's growable byte buffer (see cbuf.h). Growth
 * doubles, so appending n bytes one at a time costs O(n).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cbuf.h"
#include "cutil.h"

void cbuf_release(struct cbuf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

void cbuf_reset(struct cbuf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

static void grow(struct cbuf *b, size_t extra)
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

void cbuf_append(struct cbuf *b, const void *data, size_t n)
{
	grow(b, n);
	if (n)
		memcpy(b->data + b->len, data, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void cbuf_puts(struct cbuf *b, const char *s)
{
	cbuf_append(b, s, strlen(s));
}

void cbuf_putc(struct cbuf *b, char c)
{
	cbuf_append(b, &c, 1);
}

void cbuf_printf(struct cbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	grow(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

const char *cbuf_str(const struct cbuf *b)
{
	return b->data ? b->data : "";
}

char *cbuf_detach(struct cbuf *b, size_t *len)
{
	char *p = b->data ? b->data : xcalloc(1, 1);
	if (len)
		*len = b->len;
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}
