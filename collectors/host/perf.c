/*
 * perf.c - finding a perf that works with the running kernel, the event a
 * profile samples on this CPU, and perf commands run to completion with
 * their output captured (runcmd: both pipes polled, a deadline, then SIGKILL).
 */
#include <errno.h>
#include <glob.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "collectors/base/cutil.h"
#include "collectors/base/runcmd.h"
#include "collectors/host/perf.h"

/* `perf version` must answer within this, seconds (the Debian wrapper answers at once). */
#define PERF_VERSION_TIMEOUT_S 20

static int run_path(const char *path, double timeout_s, char *const argv[], int merge,
		    struct buf *out, struct buf *err_out)
{
	struct runcmd c;

	runcmd_init(&c);
	c.argv = (const char *const *)argv;
	c.path = path;
	c.in = RUNCMD_IN_NULL;
	c.out = RUNCMD_OUT_CAPTURE;
	c.err = merge ? RUNCMD_OUT_MERGE : RUNCMD_OUT_CAPTURE;
	c.out_buf = out;
	c.err_buf = err_out;
	c.cap = PERF_OUTPUT_MAX;
	c.timeout_ms = (long)(timeout_s * 1000) + 1;
	return runcmd_run(&c);
}

int perf_capture(const struct perf_tool *t, char *const argv[], int merge, struct buf *out,
		 struct buf *err_out)
{
	return run_path(t->path, PERF_COMMAND_TIMEOUT_S, argv, merge, out, err_out);
}

void perf_last_line(const char *text, size_t len, char *line, size_t linesz)
{
	size_t end = len, start;

	while (end > 0 && strchr(" \t\r\n", text[end - 1]))
		end--;
	start = end;
	while (start > 0 && text[start - 1] != '\n')
		start--;
	snprintf(line, linesz, "%.*s", (int)(end - start), text + start);
}

/* The line of text (len bytes) that starts with prefix, without its newline, or NULL; *n its
 * length. */
static const char *line_with(const char *text, size_t len, const char *prefix, size_t *n)
{
	size_t pl = strlen(prefix);

	for (size_t i = 0; i + pl <= len; i++) {
		if ((i == 0 || text[i - 1] == '\n') && !memcmp(text + i, prefix, pl)) {
			const char *nl = memchr(text + i, '\n', len - i);
			*n = nl ? (size_t)(nl - (text + i)) : len - i;
			return text + i;
		}
	}
	return NULL;
}

void perf_message(const char *text, size_t len, char *line, size_t linesz)
{
	size_t n, pn = 0;
	const char *e = line_with(text, len, "Error:\n", &n);
	const char *para = line_with(text, len, "perf_event_paranoid setting is", &pn);

	if (!e) {
		perf_last_line(text, len, line, linesz);
		return;
	}
	e += n + 1;
	if ((size_t)(e - text) >= len) {
		snprintf(line, linesz, "Error:");
		return;
	}
	n = strcspn(e, "\n");
	if ((size_t)(e - text) + n > len)
		n = len - (size_t)(e - text);
	snprintf(line, linesz, "%.*s%s%.*s%s", (int)n, e, para ? " (" : "", (int)pn,
		 para ? para : "", para ? ")" : "");
}

/* 0 when path answers `perf version` ("perf version X"), filling t. */
static int try_perf(const char *path, struct perf_tool *t, struct buf *tried)
{
	char *const argv[] = {"perf", "version", NULL};
	struct buf out = BUF_INIT;
	struct stat sb;
	int rc = -1, st;

	if (tried->len)
		buf_puts(tried, "; ");
	if (stat(path, &sb) || access(path, X_OK)) {
		buf_printf(tried, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(sb.st_mode)) {
		buf_printf(tried, "%s: not a file", path);
		return -1;
	}
	st = run_path(path, PERF_VERSION_TIMEOUT_S, argv, 1, &out, NULL);
	if (st == 0 && !strncmp(buf_str(&out), "perf version ", 13)) {
		const char *v = buf_str(&out) + 13;
		size_t n = strcspn(v, " \r\n");
		snprintf(t->path, sizeof(t->path), "%s", path);
		snprintf(t->version, sizeof(t->version), "%.*s", (int)n, v);
		rc = 0;
	} else {
		char last[200];
		perf_last_line(buf_str(&out), out.len, last, sizeof(last));
		buf_printf(tried, "%s: `perf version` exited %d%s%s", path, st, *last ? ": " : "",
			    last);
	}
	buf_release(&out);
	return rc;
}

static int by_version_desc(const void *a, const void *b)
{
	return strverscmp(*(char *const *)b, *(char *const *)a);
}

int perf_find(const char *given, struct perf_tool *t, char *err, size_t errsz)
{
	static const char *const globs[] = {"/usr/bin/perf_[0-9]*", "/usr/lib/linux-tools-*/perf",
					    "/usr/lib/linux-tools/*/perf", NULL};
	const char *env = getenv("PERF"), *path = getenv("PATH");
	struct buf tried = BUF_INIT;
	struct utsname u;
	char mm[64] = "";
	int rc = -1;

	memset(t, 0, sizeof(*t));
	if (given || (env && *env)) {
		const char *p = given ? given : env;
		if (!try_perf(p, t, &tried))
			rc = 0;
		else
			snprintf(err, errsz, "perf %s (%s) does not run: %s", p,
				 given ? "--perf" : "$PERF", buf_str(&tried));
		buf_release(&tried);
		return rc;
	}
	/* `perf` on $PATH */
	for (const char *d = path ? path : "/usr/local/bin:/usr/bin:/bin"; *d && rc;) {
		size_t n = strcspn(d, ":");
		char cand[PERF_PATH_MAX];
		if (n &&
		    (size_t)snprintf(cand, sizeof(cand), "%.*s/perf", (int)n, d) < sizeof(cand) &&
		    access(cand, X_OK) == 0 && !try_perf(cand, t, &tried))
			rc = 0;
		d += n + (d[n] == ':');
	}
	/* versioned binaries: the running kernel's major.minor first, then newest first */
	if (rc && uname(&u) == 0) {
		size_t dots = 0, i;
		for (i = 0; u.release[i] && i + 1 < sizeof(mm); i++) {
			if (u.release[i] == '.' && ++dots == 2)
				break;
			if (!strchr("0123456789.", u.release[i]))
				break;
			mm[i] = u.release[i];
		}
		mm[i] = '\0';
	}
	for (int pass = 0; rc && pass < 2; pass++) {
		for (const char *const *g = globs; *g && rc; g++) {
			glob_t gl;
			if (glob(*g, 0, NULL, &gl))
				continue;
			qsort(gl.gl_pathv, gl.gl_pathc, sizeof(char *), by_version_desc);
			for (size_t i = 0; i < gl.gl_pathc && rc; i++) {
				int matches = *mm && strstr(gl.gl_pathv[i], mm) != NULL;
				if (pass == 0 ? matches : !matches)
					if (!try_perf(gl.gl_pathv[i], t, &tried))
						rc = 0;
			}
			globfree(&gl);
		}
	}
	if (rc)
		snprintf(err, errsz,
			 "no perf that runs with kernel %s (Debian: apt-get install linux-perf; "
			 "or name one with --perf PATH or $PERF)%s%s",
			 *mm ? mm : "?", tried.len ? ": " : "", buf_str(&tried));
	buf_release(&tried);
	return rc;
}

const char *perf_profile_event(void)
{
	struct perf_event_attr a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_HARDWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	a.sample_period = 1000003; /* a sampling event, as perf record opens it */
	a.disabled = 1;
	a.exclude_kernel = 1; /* allowed at perf_event_paranoid 2: we ask if the PMU exists */
	a.exclude_hv = 1;
	fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0UL);
	if (fd >= 0) {
		close((int)fd);
		return "cycles";
	}
	/* no such PMU (ENOENT, EOPNOTSUPP, ENODEV, EINVAL); EACCES says nothing about it */
	return errno == EACCES || errno == EPERM ? "cycles" : "cpu-clock";
}
