/*
 * harness_load.h - a lab's posts and a dashboard's reads against one kperfd
 * while a test takes its database away: posters post one small run per
 * request on keep-alive connections (a run answered 503 or not answered is
 * posted again under the same run_id), readers GET pages. Each request's
 * answer is kept by kind and time, so a test can say how long writes were
 * refused, what the refused requests got, and that every run answered 201
 * is stored exactly once.
 */
#ifndef KPERF_HARNESS_LOAD_H
#define KPERF_HARNESS_LOAD_H

#include <pthread.h>
#include <stdatomic.h>

#include "tests/integration/harness.h"

#define LOAD_POSTERS_MAX 16
#define LOAD_READERS_MAX 4
#define LOAD_RUNS_MAX 20000

struct load_poster {
	struct load *load;
	int id;
	unsigned char *acked; /* by run number */
	int n;                /* runs done (acknowledged or refused for good) */
	int acked_after;      /* acknowledged since the outage began */
	int refused;          /* refused since the outage began */
	double first_after;   /* seconds from the outage to its first 201 after a refusal, or -1 */
	double last_refused;  /* seconds from the outage to its last refusal, or -1 */
	/* refused while the database was away: 503 with Retry-After and a JSON
	 * "error", 503 without them, no answer (transport error, timeout) */
	int r503, r503_bare, none;
	int last_curl;        /* the curl error of the last unanswered one */
	int other;            /* neither 2xx nor 503 */
	long last_other;
	double slowest;       /* seconds, the longest request */
};

struct load_reader {
	struct load *load;
	int id;
	int ok, failed;
	long last_failed;
	double slowest, longest_gap; /* the longest time between two answered reads */
};

struct load {
	const struct kperfd *k;
	const char *prefix; /* run_id prefix, unique per round */
	int nposters, nreaders;
	atomic_int stop, after;
	double outage_at; /* harness_now() when load_outage was called */
	pthread_mutex_t mu; /* the threads' counters below, while they run */
	struct load_poster p[LOAD_POSTERS_MAX];
	struct load_reader r[LOAD_READERS_MAX];
	pthread_t pt[LOAD_POSTERS_MAX], rt[LOAD_READERS_MAX];
};

/* Start nposters posters and nreaders readers (GET /api/v1/machines and
 * /api/v1/series in turn, what the dashboard's first page reads) against k;
 * run_ids are PREFIX-cN-rM; prefix must live until load_check_stored. */
void load_start(struct load *l, const struct kperfd *k, const char *prefix, int nposters,
		int nreaders);
/* The outage begins now: later acknowledgements count as after it. */
void load_outage(struct load *l);
/* Wait until each poster had per_poster runs acknowledged after the outage
 * (at most seconds); 1 when they did. */
int load_wait_after(struct load *l, int per_poster, double seconds);
/* Stop and join every thread. */
void load_stop(struct load *l);

/* What the load saw, summed over its threads. */
struct load_sum {
	int acked, acked_after, r503, r503_bare, none, other;
	double first_after;  /* the earliest 201 after a refusal since the outage, s, or -1 */
	double last_refused; /* the last refusal since the outage, seconds, or -1 */
	int last_curl;
	double slowest_post, slowest_read, longest_read_gap;
	int reads_ok, reads_failed;
};
struct load_sum load_sum(struct load *l);
/* Assert every run acknowledged is stored exactly once in k's database
 * (over conninfo, NULL: k's own) and free the load's memory. */
void load_check_stored(struct load *l, const char *conninfo);

#endif
