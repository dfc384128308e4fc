/*
 * counters.h - process-wide counters for GET /metrics (Prometheus text).
 * Written from any worker thread, so every field is atomic.
 */
#ifndef KPERF_COUNTERS_H
#define KPERF_COUNTERS_H

#define COUNTERS_ROUTES 64
#define COUNTERS_BUCKETS 10 /* request latency histogram, see counters_bucket_us */

struct counters {
	_Atomic unsigned long route_requests[COUNTERS_ROUTES][6]; /* by route, status class */
	_Atomic unsigned long latency_bucket[COUNTERS_BUCKETS];   /* cumulative at export */
	_Atomic unsigned long decisions_made;
	_Atomic unsigned long alerts_sent;
	_Atomic unsigned long alerts_failed;
	_Atomic unsigned long db_connects;
	_Atomic unsigned long standby_fallbacks; /* reads a standby could not answer */
	_Atomic unsigned long requests_by_class[6]; /* index status / 100 */
	_Atomic unsigned long request_us_total;
	_Atomic unsigned long runs_created;
	_Atomic unsigned long runs_repeated;
	_Atomic unsigned long samples_created;
	_Atomic unsigned long ingest_commits;          /* ingest transactions committed */
	_Atomic unsigned long ingest_grouped_requests; /* requests committed with others */
	_Atomic unsigned long db_unavailable;
	_Atomic unsigned long compare_reads_helper;  /* targets read on a helper's connection */
	_Atomic unsigned long compare_reads_request; /* targets read after the base, on the request's */
	_Atomic unsigned long inbox_polls;           /* inbox polls that ended, either way */
	_Atomic unsigned long inbox_poll_failures;
	_Atomic unsigned long series_found;          /* series versions stored from inboxes */
};

extern struct counters counters;

/* Upper bounds of the latency buckets in microseconds (the last is +Inf). */
extern const long counters_bucket_us[COUNTERS_BUCKETS];

#endif
