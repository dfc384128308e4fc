/*
 * perfmon.h - the perf monitors of `run`: `perf record -a -g` (--profile)
 * and `perf lock record -a` (--lock-contention) recording system-wide from
 * just before each iteration's command starts to just after it ends, and
 * their reports turned into LKP's perf-profile metrics and perf-lock
 * metrics. perf starts with its events off and is switched on and off
 * through its control FIFO (perf record --control, -D -1), so perf's own
 * start-up and the write-out of its data are outside the iteration.
 */
#ifndef KPERF_PERFMON_H
#define KPERF_PERFMON_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#include "collectors/base/runcmd.h"
#include "collectors/host/perf.h"

/* Samples per second and CPU of a profile (perf record -F). */
#define PERFMON_PROFILE_HZ 1000
/* How long perf may take to start recording or to acknowledge a command, seconds. */
#define PERFMON_ACK_TIMEOUT_S 60
/* The event slot of perf-profile names, whatever event was sampled (LKP's names). */
#define PERFMON_PROFILE_NAME_EVENT "cycles-pp"

struct perfmon_opts {
	int profile;          /* --profile */
	int lock;             /* --lock-contention */
	const char *perf;     /* --perf PATH, or NULL: perf_find's search */
	const char *keep_dir; /* --keep-perf DIR: perf.data and reports kept there; NULL: removed */
};

/* One recording: a perf process and its control FIFOs. */
struct perfmon_rec {
	const char *kind; /* "profile" or "lock" */
	struct runcmd cmd; /* the perf process; cmd.pid 0 when not running */
	int ctl, ack;     /* -1 when closed */
	char data[PERF_PATH_MAX];
	char log[PERF_PATH_MAX];
	int have_data; /* stopped cleanly: data can be reported */
};

struct perfmon {
	struct perfmon_opts o;
	struct perf_tool tool;
	const char *event;           /* the profile's event: "cycles" or "cpu-clock" */
	char recorded[64];           /* the event the first report named, "" until then */
	char scratch[PERF_PATH_MAX]; /* FIFOs and perf's logs, and the data when not kept */
	long iteration;
	struct perfmon_rec prof, lock;
};

/*
 * Get ready for o: find perf (--perf, $PERF, search) and choose the event.
 * With neither monitor asked it does nothing and returns 0. Returns -1 with
 * err when no perf runs here or a directory cannot be made; release pm
 * with perfmon_release either way.
 */
int perfmon_init(struct perfmon *pm, const struct perfmon_opts *o, char *err, size_t errsz);

/* 1 when a monitor was asked for. */
int perfmon_active(const struct perfmon *pm);

/*
 * Start the recordings of iteration (from 1): when this returns 0 each one
 * records. Returns -1 with err (perf's own message) when one cannot start;
 * nothing is left running then.
 */
int perfmon_start(struct perfmon *pm, long iteration, char *err, size_t errsz);

/*
 * Stop the recordings (the command ended) and wait for perf to write its
 * data. Returns 0, or -1 with err when a recording failed (its data is lost).
 */
int perfmon_stop(struct perfmon *pm, char *err, size_t errsz);

/*
 * Report the iteration's recordings and append their metrics to metrics
 * (units and directions too): perf-profile.{calltrace,children,self}.
 * cycles-pp.* and perf-lock.*. Reports are kept beside the data in
 * --keep-perf. summary gets "perf-profile 412 rows, perf-lock 37 rows".
 * Returns 0, or -1 with err naming the report that failed (the metrics of
 * the others are added).
 */
int perfmon_collect(struct perfmon *pm, json_t *metrics, json_t *units, json_t *directions,
		    char *summary, size_t summarysz, char *err, size_t errsz);

/* Add what the run's monitors were to env: perf.version, perf-profile.event, ... */
void perfmon_environment(const struct perfmon *pm, json_t *env);

/* What records beside the command, for the status line ("" when nothing). */
void perfmon_describe(const struct perfmon *pm, char *out, size_t outsz);

/* Stop what still runs (SIGKILL), remove the scratch directory. Safe on a zeroed pm. */
void perfmon_release(struct perfmon *pm);

#endif
