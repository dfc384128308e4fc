/*
 * perf.h - perf(1), the tool kperf-collect's monitors drive: finding a perf
 * that runs with this kernel, choosing the event a profile samples, and
 * running one perf command to completion with its output kept. The
 * monitors themselves (what runs beside an iteration) are in perfmon.h.
 */
#ifndef KPERF_PERF_H
#define KPERF_PERF_H

#include <stddef.h>

#include "lib/buf.h"

/* Longest path of a perf binary, its data or reports, bytes with the NUL. */
#define PERF_PATH_MAX 4096
/* Longest a perf command may take to report or to finish writing its data, seconds. */
#define PERF_COMMAND_TIMEOUT_S 3600
/* Output of a perf report kept at most, bytes (a folded report of a big machine). */
#define PERF_OUTPUT_MAX (256u * 1024u * 1024u)

struct perf_tool {
	char path[PERF_PATH_MAX]; /* a perf binary that ran `perf version` */
	char version[64];         /* what it printed after "perf version ", e.g. "6.1.187" */
};

/*
 * Find a perf that runs: given (--perf), else $PERF, else `perf` on $PATH,
 * else the versioned binaries distributions install beside a wrapper
 * (/usr/bin/perf_X.Y, perf in /usr/lib/linux-tools-R/ or /usr/lib/linux-tools/R/),
 * the running kernel's X.Y first, then newest first. Debian's /usr/bin/perf may be a wrapper that
 * only runs when a perf of the running kernel's version is installed: each candidate must answer
 * `perf version`. Returns 0, or -1 with err saying what was tried.
 */
int perf_find(const char *given, struct perf_tool *t, char *err, size_t errsz);

/*
 * The event a profile samples: "cycles" when the CPU has a hardware PMU
 * this process can open a cycles counter on, else "cpu-clock" (virtual
 * machines without a virtual PMU). Never fails.
 */
const char *perf_profile_event(void);

/*
 * Run t with argv (argv[0] is ignored: t->path runs) to completion: stdout
 * into out (stderr too when merge), stderr else into err_out (may be NULL:
 * discarded), each cut to PERF_OUTPUT_MAX. Killed after
 * PERF_COMMAND_TIMEOUT_S. Returns perf's exit status as a shell reports
 * it, or -1 when it cannot be started (errno set).
 */
int perf_capture(const struct perf_tool *t, char *const argv[], int merge, struct buf *out,
		 struct buf *err_out);

/* The last line of text that is not blank, into line (for messages). */
void perf_last_line(const char *text, size_t len, char *line, size_t linesz);

/*
 * What perf's output text says went wrong, into line: the line after its
 * "Error:" (with its "perf_event_paranoid setting is N" when it says so),
 * else its last line.
 */
void perf_message(const char *text, size_t len, char *line, size_t linesz);

#endif
