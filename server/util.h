/*
 * util.h - the process-wide basics: allocation that aborts on OOM, start-up
 * death, logging to stderr, bounded number parsing and a monotonic clock.
 */
#ifndef KPERF_UTIL_H
#define KPERF_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Allocators: never return NULL; abort the process when memory is exhausted. */
void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

/* Print "kperfd: fatal: <msg>" and exit(1). Start-up and CLI only. */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* One log line on stderr, prefixed with a UTC time stamp; no trailing newline. */
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Parse a whole decimal integer in [min, max]. Returns 0 and sets *out, or -1
 * when s is empty, has other characters, or is out of range.
 */
int parse_int64(const char *s, int64_t min, int64_t max, int64_t *out);

/* Monotonic time in microseconds. */
int64_t now_us(void);

/* The 64-bit FNV-1a hash of n bytes (ETags: the same bytes, the same tag). */
uint64_t hash_fnv1a64(const void *data, size_t n);

/* Fill buf with n random bytes from the kernel; returns 0 or -1. */
int random_bytes(void *buf, size_t n);

#include "banned.h"

#endif
