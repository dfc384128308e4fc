/*
 * run.h - `kperf-collect run`: run a benchmark command N times between
 * counter snapshots, with perf recording beside it when asked (--profile,
 * --lock-contention), parse its output with the suite's parser, and deliver
 * one run document.
 */
#ifndef KPERF_RUN_H
#define KPERF_RUN_H

#include <jansson.h>

#include "collectors/base/config.h"
#include "collectors/deliver/rundoc.h"
#include "collectors/kernel/vm.h"

/* Exit status when the run could be neither posted nor spooled (EX_TEMPFAIL). */
#define EXIT_LOST 75
/* Exit status when the server refused the run for good (EX_DATAERR). */
#define EXIT_REJECTED 65
/* Exit status for a bad command line (EX_USAGE). */
#define EXIT_USAGE 64
/* Exit status when a monitor asked for cannot record here (EX_UNAVAILABLE). */
#define EXIT_UNAVAILABLE 69

/* A run in a QEMU guest: every iteration boots image and runs the command
 * there (vm.h); the guest's counters replace this machine's. */
struct run_vm {
	const struct vm_opts *opts;
	const char *image;       /* the bzImage */
	const char *config_path; /* its .config: the run's kernel.config */
	const char *config_sha;  /* names that config in the run's environment */
	const char *compiler;    /* `gcc --version`'s first line */
};

struct run_opts {
	struct run_meta meta;
	const char *parser;    /* output format; NULL: the suite's, when there is one */
	long iterations;       /* >= 1 */
	int dry_run;           /* print the document instead of delivering it */
	int quiet;             /* no echo of the command's output, no progress lines (but a
				* guest's boot time) */
	int profile;           /* perf record -a -g beside each iteration: perf-profile.* */
	int lock_contention;   /* perf lock record -a beside each iteration: perf-lock.* */
	const char *perf;      /* the perf to run (--perf), or NULL: $PERF, then a search */
	const char *keep_perf; /* keep perf.data and reports in this directory, or NULL */
	char **argv;           /* the command, NULL-terminated */
	const struct run_vm *vm; /* NULL: the command runs here */
	/*
	 * Asked after every iteration but the last (may be NULL): nonzero ends
	 * the run there, undelivered (RUN_STOPPED). The agent's SIGTERM and
	 * lost leases.
	 */
	int (*between)(void *arg);
	void *between_arg;
};

/* run_measure's status when o->between ended the run early. */
#define RUN_STOPPED (-2)

/*
 * What `run` does before delivering: run the command o->iterations times
 * between counter snapshots and parse its output. Returns the run document
 * (the caller owns it) with *status the command's exit status (0, or the
 * failing iteration's: the document then holds the iterations up to it);
 * or NULL with *status EXIT_USAGE (bad format or run_meta), EXIT_UNAVAILABLE
 * (a monitor asked for cannot record: perf missing or refused), RUN_STOPPED,
 * or the command's status (127: it cannot start) when there is nothing to send.
 * Unless o->quiet it says a line per iteration on stderr (and keeps a
 * status line on a terminal while one runs).
 */
json_t *run_measure(const struct collect_config *c, const struct run_opts *o, int *status);

/*
 * Run it. Returns the process exit status: 0; the command's own status when
 * it failed (the run is still delivered, marked by exit_status); EXIT_LOST;
 * EXIT_REJECTED; EXIT_UNAVAILABLE.
 */
int run_command(const struct collect_config *c, const struct run_opts *o);

#endif
