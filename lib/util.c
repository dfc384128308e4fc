/*
 * util.c - allocation, fatal errors, log lines, bounded integers and the
 * clock, shared by every layer of kperfd.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <xxhash.h>

#include "lib/util.h"

static void oom(size_t n)
{
	fprintf(stderr, "kperfd: out of memory allocating %zu bytes\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (!p)
		oom(nmemb * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void die(const char *fmt, ...)
{
	va_list ap;
	fputs("kperfd: fatal: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void log_line(const char *level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

static void log_line(const char *level, const char *fmt, va_list ap)
{
	char msg[2048];
	char stamp[32];
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* One fprintf per line, so lines of concurrent threads do not interleave. */
	fprintf(stderr, "%s.%03ldZ %s%s\n", stamp, ts.tv_nsec / 1000000, level, msg);
}

void log_info(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_line("", fmt, ap);
	va_end(ap);
}

void log_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_line("error: ", fmt, ap);
	va_end(ap);
}

int parse_int64(const char *s, int64_t min, int64_t max, int64_t *out)
{
	int64_t v = 0;
	int neg = 0;

	if (!s || !*s)
		return -1;
	if (*s == '-' || *s == '+')
		neg = *s++ == '-';
	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (v > (INT64_MAX - (*s - '0')) / 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	if (neg)
		v = -v;
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int random_bytes(void *buf, size_t n)
{
	unsigned char *p = buf;
	while (n) {
		ssize_t got = getrandom(p, n, 0);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += got;
		n -= (size_t)got;
	}
	return 0;
}

uint64_t hash64(const void *data, size_t n)
{
	return XXH64(data, n, 0);
}

/* Two decimal digits of v (0-99) at o. */
static char *two(char *o, unsigned v)
{
	o[0] = (char)('0' + v / 10);
	o[1] = (char)('0' + v % 10);
	return o + 2;
}

void format_utc(int64_t t, char out[24])
{
	/* days since 1970-01-01 to a civil date (H. Hinnant's days_from_civil,
	 * inverted), so no gmtime_r/strftime: 2,000 dates a trend */
	int64_t days = t / 86400 - (t % 86400 < 0), sod = t - days * 86400;
	int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
	unsigned d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
	int64_t y = (int64_t)yoe + era * 400 + (m <= 2);
	char *o = out;

	if (y < 1 || y > 9999) {
		out[0] = '\0';
		return;
	}
	o = two(o, (unsigned)(y / 100));
	o = two(o, (unsigned)(y % 100));
	*o++ = '-';
	o = two(o, m);
	*o++ = '-';
	o = two(o, d);
	*o++ = 'T';
	o = two(o, (unsigned)(sod / 3600));
	*o++ = ':';
	o = two(o, (unsigned)(sod / 60 % 60));
	*o++ = ':';
	o = two(o, (unsigned)(sod % 60));
	*o++ = 'Z';
	*o = '\0';
}

int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}
