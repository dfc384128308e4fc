/*
 * rundoc.h - one run document per the ingest contract: run_id, machine,
 * kernel, variant, test, environment, with the metrics, units and
 * directions added by the caller; and its delivery (POST, else spool).
 */
#ifndef KPERF_RUNDOC_H
#define KPERF_RUNDOC_H

#include <jansson.h>
#include <stddef.h>
#include <time.h>

#include "collectors/base/config.h"

/* The server's limit on output_tail, bytes. */
#define RUNDOC_OUTPUT_TAIL_MAX (64u * 1024u)
/* The server's limits on a run's metrics and values. */
#define RUNDOC_METRICS_MAX 10000
#define RUNDOC_VALUES_MAX 100000

struct run_meta {
	const char *suite;   /* test.suite: 1-64 of A-Za-z0-9._- */
	json_t *params;      /* test.params (strings), borrowed; may be NULL */
	json_t *variant;     /* knobs given on the command line, borrowed; may be NULL */
	const char *commit;  /* 40 hex digits, or NULL */
	const char *series;  /* "name vN", or NULL */
	const char *release; /* overrides the running kernel's release, or NULL */
	long job_id;         /* > 0: the run counts toward this job ("job": {"id": N}) */
};

/*
 * A new run document for this machine and kernel, without metrics. Returns
 * NULL with err set when meta breaks a contract rule (suite, commit).
 */
json_t *rundoc_new(const struct collect_config *c, const struct run_meta *meta, char *err,
		   size_t errsz);

/* "<machine>-<UTC yyyymmddThhmmssZ>-<8 random hex>" into out (outsz >= 128). */
void rundoc_run_id(const char *machine, char *out, size_t outsz);
/* t as "2020-06-16T10:00:00Z". */
void rundoc_time(time_t t, char out[32]);

/*
 * The last max bytes of s (len bytes) as valid UTF-8: the cut moves forward
 * to a character boundary, invalid bytes and NULs become '?'. Caller frees.
 */
char *rundoc_utf8_tail(const char *s, size_t len, size_t max);

/*
 * Drop metrics past the server's limits (the last added first) and say so;
 * returns the number of metrics dropped.
 */
size_t rundoc_enforce_limits(json_t *doc);

enum outcome {
	OUTCOME_DELIVERED, /* the server has it */
	OUTCOME_SPOOLED,   /* in the spool, for `flush` */
	OUTCOME_REJECTED,  /* the server refused it; kept in spool/rejected/ */
	OUTCOME_LOST,      /* neither posted nor spooled */
};

/* POST doc; on no answer or a 5xx spool it. Prints what happened. */
enum outcome rundoc_deliver(const struct collect_config *c, json_t *doc);

/*
 * Check a run document (JSON text) with kperfd's own ingest decoder
 * (lib/ingest_decode.c, linked into kperf-collect): 0 when kperfd would take
 * it, else -1 with "field: message" in err.
 */
int rundoc_check(const char *json, size_t len, char *err, size_t cap);

#endif
