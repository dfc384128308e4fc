/*
 * lease.h - the job an agent holds, as kperfd sees it: the calls on it
 * (heartbeat, fail, release: POST /api/v1/jobs/{id}/ACTION) and the
 * heartbeat thread that keeps the lease while the agent works, noting when
 * kperfd says it was lost (409).
 */
#ifndef KPERF_LEASE_H
#define KPERF_LEASE_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>

#include "collectors/base/config.h"

/*
 * POST /api/v1/jobs/<id>/<action> ("heartbeat", "fail", "release") with
 * {"machine": machine[, "reason": reason][, "final": true]}, within
 * timeout_s (final: a failure no machine could do better, it ends the job). Returns the HTTP status (0: no
 * answer); *answer (may be NULL) gets the parsed body of a 200 (the job),
 * else NULL. what is set to a short account of a failure (status, error
 * code and message, or why there was no answer).
 */
long lease_call(const struct collect_config *c, const char *machine, long job_id,
		const char *action, const char *reason, int final, long timeout_s, json_t **answer,
		char *what, size_t whatsz);

/* A status saying the lease is gone for good: 401, 403, 404, 409. */
int lease_status_lost(long status);

struct lease {
	const struct collect_config *c;
	const char *machine; /* borrowed: outlives the lease */
	long job_id;
	long interval_s; /* between heartbeats: lease_s / 3, at least 1 */
	atomic_int lost; /* kperfd said the lease is gone */
	char why[512];   /* what it said; read after lease_stop or once lost is set */
	int started;
	int stop;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

/*
 * Start heartbeats for job_id every lease_s / 3 seconds (at least 1) in a
 * thread of their own. Returns 0, or -1 (errno) when no thread could start.
 */
int lease_start(struct lease *l, const struct collect_config *c, const char *machine,
		long job_id, long lease_s);
/* Stop the heartbeats and wait for the thread; fine on a lease never started. */
void lease_stop(struct lease *l);
/* Nonzero once a heartbeat was answered with a lost lease. */
int lease_lost(struct lease *l);

#endif
