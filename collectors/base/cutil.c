/*
 * cutil.c - allocation, messages, bounded number parsing and file helpers
 * for kperf-collect. Every other collector file builds on these.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/buf.h"
#include "collectors/base/cutil.h"


static void vmsg(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

static void vmsg(const char *fmt, va_list ap)
{
	char line[2048];
	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "kperf-collect: %s\n", line);
}

void warn_msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

void err_msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

int cparse_int64(const char *s, int64_t min, int64_t max, int64_t *out)
{
	char *end;
	long long v;

	while (isspace((unsigned char)*s))
		s++;
	if (!*s)
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s)
		return -1;
	while (isspace((unsigned char)*end))
		end++;
	if (*end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int cparse_double(const char *s, double *out)
{
	char *end;
	double v;

	while (isspace((unsigned char)*s))
		s++;
	/* strtod would take "nan", "inf" and hex floats: numbers in outputs are decimal. */
	if (!*s || !(isdigit((unsigned char)*s) || *s == '-' || *s == '+' || *s == '.'))
		return -1;
	if (strpbrk(s, "xXnN"))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno == ERANGE && fabs(v) > 1.0)
		return -1;
	if (end == s || !isfinite(v))
		return -1;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return -1;
	*out = v;
	return 0;
}

int cparse_double_n(const char *s, size_t n, double *out)
{
	char tmp[128];

	if (n == 0 || n >= sizeof(tmp))
		return -1;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	return cparse_double(tmp, out);
}

char *read_file(const char *path, size_t max, size_t *len)
{
	struct buf b = BUF_INIT;
	char chunk[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			close(fd);
			buf_release(&b);
			errno = e;
			return NULL;
		}
		if (n == 0)
			break;
		if (b.len + (size_t)n > max) {
			close(fd);
			buf_release(&b);
			errno = EFBIG;
			return NULL;
		}
		buf_append(&b, chunk, (size_t)n);
	}
	close(fd);
	return buf_detach(&b, len);
}

int write_file_atomic(const char *path, const char *data, size_t len)
{
	struct buf tmp = BUF_INIT;
	const char *slash = strrchr(path, '/');
	size_t off = 0;
	int fd, e;

	/* The temporary name starts with a dot in the same directory, so readers
	 * that skip dot files never see a half-written file. */
	if (slash)
		buf_printf(&tmp, "%.*s/.%s.XXXXXX", (int)(slash - path), path, slash + 1);
	else
		buf_printf(&tmp, ".%s.XXXXXX", path);
	fd = mkstemp(tmp.data);
	if (fd < 0)
		goto fail;
	while (off < len) {
		ssize_t n = write(fd, data + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			e = errno;
			close(fd);
			unlink(tmp.data);
			errno = e;
			goto fail;
		}
		off += (size_t)n;
	}
	if (fsync(fd) || fchmod(fd, 0644)) {
		e = errno;
		close(fd);
		unlink(tmp.data);
		errno = e;
		goto fail;
	}
	if (close(fd) || rename(tmp.data, path)) {
		e = errno;
		unlink(tmp.data);
		errno = e;
		goto fail;
	}
	buf_release(&tmp);
	return 0;
fail:
	e = errno;
	buf_release(&tmp);
	errno = e;
	return -1;
}

static const char *root(const char *env, const char *dflt)
{
	const char *v = getenv(env);
	return v && *v ? v : dflt;
}

const char *root_proc(void)
{
	return root("KPERF_PROC_ROOT", "/proc");
}

const char *root_sys(void)
{
	return root("KPERF_SYS_ROOT", "/sys");
}

const char *root_boot(void)
{
	return root("KPERF_BOOT_ROOT", "/boot");
}

char *str_trim(char *s)
{
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

double sum_kb(const double *v, size_t n)
{
	double f = 0.0, c = 0.0;

	for (size_t i = 0; i < n; i++) {
		double x = v[i], t = f + x;
		if (fabs(f) >= fabs(x))
			c += (f - t) + x;
		else
			c += (x - t) + f;
		f = t;
	}
	return f + c;
}

void dvec_push(struct dvec *d, double x)
{
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 16;
		d->v = xrealloc(d->v, d->cap * sizeof(*d->v));
	}
	d->v[d->n++] = x;
}

void dvec_release(struct dvec *d)
{
	free(d->v);
	d->v = NULL;
	d->n = d->cap = 0;
}

double dvec_mean(const struct dvec *d)
{
	return d->n ? sum_kb(d->v, d->n) / (double)d->n : 0.0;
}

double dvec_pstddev(const struct dvec *d)
{
	double avg = dvec_mean(d), s = 0.0;

	if (!d->n)
		return 0.0;
	for (size_t i = 0; i < d->n; i++)
		s += (d->v[i] - avg) * (d->v[i] - avg);
	return sqrt(1.0 / (double)d->n * s);
}

int exit_status_of(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

void lines_init(struct lines *it, const char *text, size_t len)
{
	memset(it, 0, sizeof(*it));
	it->p = text;
	it->end = text + len;
}

char *lines_next(struct lines *it)
{
	const char *nl;
	size_t n;

	if (it->p >= it->end)
		return NULL;
	nl = memchr(it->p, '\n', (size_t)(it->end - it->p));
	n = nl ? (size_t)(nl - it->p) : (size_t)(it->end - it->p);
	if (n + 1 > it->cap) {
		it->cap = n + 1 > 256 ? n + 1 : 256;
		it->buf = xrealloc(it->buf, it->cap);
	}
	memcpy(it->buf, it->p, n);
	it->buf[n] = '\0';
	if (n && it->buf[n - 1] == '\r')
		it->buf[n - 1] = '\0';
	it->p += n + (nl != NULL);
	it->no++;
	return it->buf;
}

void lines_release(struct lines *it)
{
	free(it->buf);
	it->buf = NULL;
	it->cap = 0;
}
