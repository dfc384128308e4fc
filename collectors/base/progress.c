/*
 * progress.c - progress lines, the terminal's status line and --quiet.
 * The status line is "\r<text>\033[K" on stderr, cut to the terminal's
 * width so it never wraps, and erased with "\r\033[K".
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "collectors/base/cutil.h"
#include "collectors/base/progress.h"

static int quiet;

void progress_set_quiet(int q)
{
	quiet = q;
}

int progress_quiet(void)
{
	return quiet;
}

static void say(FILE *f, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

static void say(FILE *f, const char *fmt, va_list ap)
{
	char line[2048];

	if (quiet)
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(f, "kperf-collect: %s\n", line);
	fflush(f);
}

void progress_say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(stderr, fmt, ap);
	va_end(ap);
}

void progress_done(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(stdout, fmt, ap);
	va_end(ap);
}

void progress_number(double v, char *out, size_t outsz)
{
	char digits[64], frac[8] = "";
	double a = fabs(v), ip;
	size_t n, o = 0, lead;
	double r = round(a * 100) / 100;

	if (!isfinite(v) || a >= 1e18) {
		snprintf(out, outsz, "%g", v);
		return;
	}
	ip = floor(r);
	if (r - ip >= 0.005) {
		snprintf(frac, sizeof(frac), "%.2f", r - ip);
		memmove(frac, frac + 1, strlen(frac)); /* ".xy" */
		if (frac[2] == '0')
			frac[2] = '\0';
	}
	snprintf(digits, sizeof(digits), "%.0f", ip);
	n = strlen(digits);
	lead = n % 3 ? n % 3 : 3;
	if (v < 0 && r > 0 && o + 1 < outsz)
		out[o++] = '-';
	for (size_t i = 0; i < n && o + 2 < outsz; i++) {
		if (i >= lead && (i - lead) % 3 == 0)
			out[o++] = ',';
		out[o++] = digits[i];
	}
	out[o] = '\0';
	snprintf(out + o, outsz - o, "%s", frac);
}

void progress_seconds(double s, char *out, size_t outsz)
{
	if (s >= 100)
		snprintf(out, outsz, "%.0f s", s);
	else if (s >= 10)
		snprintf(out, outsz, "%.1f s", s);
	else
		snprintf(out, outsz, "%.2f s", s);
}

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void progress_status_begin(struct progress_status *ps, const char *label, const char *extra)
{
	memset(ps, 0, sizeof(*ps));
	ps->on = !quiet && isatty(2);
	ps->started = mono();
	snprintf(ps->label, sizeof(ps->label), "%s", label);
	snprintf(ps->extra, sizeof(ps->extra), "%s", extra ? extra : "");
}

void progress_status_tick(struct progress_status *ps)
{
	double t = mono();
	struct winsize ws;
	size_t cols = 80;
	char line[512];
	int n;

	if (!ps->on || t - ps->started < PROGRESS_STATUS_AFTER_S ||
	    (ps->shown && t - ps->drawn < 1))
		return;
	if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10)
		cols = ws.ws_col;
	n = snprintf(line, sizeof(line), "kperf-collect: %s: %.0f s%s%s", ps->label,
		     t - ps->started, ps->extra[0] ? ", " : "", ps->extra);
	if (n < 0)
		return;
	if ((size_t)n >= cols)
		line[cols - 1] = '\0'; /* one column short: the cursor never wraps */
	fprintf(stderr, "\r%s\033[K", line);
	fflush(stderr);
	ps->shown = 1;
	ps->drawn = t;
}

void progress_status_clear(struct progress_status *ps)
{
	if (!ps->shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	ps->shown = 0;
}
