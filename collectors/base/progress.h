/*
 * progress.h - what kperf-collect says while it works: a line per
 * iteration of `run`, per file of `import`, per batch of `commits` on
 * stderr, what was delivered on stdout, a live status line on a terminal
 * during long iterations, and --quiet, which silences all of it. Errors
 * (err_msg) are never silenced.
 */
#ifndef KPERF_PROGRESS_H
#define KPERF_PROGRESS_H

#include <stddef.h>

/* An iteration shows the status line once it has run this long, seconds. */
#define PROGRESS_STATUS_AFTER_S 2.0

/* --quiet for the whole process (set once by main). */
void progress_set_quiet(int quiet);
int progress_quiet(void);

/* "kperf-collect: <msg>" on stderr, unless quiet: progress and notes. */
void progress_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "kperf-collect: <msg>" on stdout, unless quiet: what was delivered. */
void progress_done(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* v with thousands separators, at most 2 decimals: "20,717,269", "2,444.54", "-0.5". */
void progress_number(double v, char *out, size_t outsz);
/* Seconds for people: "301 s", "42.5 s", "0.31 s". */
void progress_seconds(double s, char *out, size_t outsz);

/*
 * The status line of one iteration: "kperf-collect: <label>: 42 s, <extra>"
 * redrawn in place on stderr once a second, when stderr is a terminal and
 * not quiet. Clear it before writing other output to the terminal.
 */
struct progress_status {
	int on;    /* stderr is a terminal and not quiet */
	int shown; /* the line is on the terminal now */
	double started, drawn;
	char label[96];
	char extra[256];
};
/* Start one (label, extra copied); on decides nothing else. */
void progress_status_begin(struct progress_status *ps, const char *label, const char *extra);
/* Redraw when due (past PROGRESS_STATUS_AFTER_S, a second since the last). */
void progress_status_tick(struct progress_status *ps);
/* Take the line off the terminal (it comes back at the next tick). */
void progress_status_clear(struct progress_status *ps);

#endif
