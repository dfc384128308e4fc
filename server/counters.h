/*
 * counters.h - process-wide counters for GET /metrics (Prometheus text).
 * Written from any worker thread, so every field is atomic.
 */
#ifndef KPERF_COUNTERS_H
#define KPERF_COUNTERS_H

struct counters {
	_Atomic unsigned long requests_by_class[6]; /* index status / 100 */
	_Atomic unsigned long request_us_total;
	_Atomic unsigned long runs_created;
	_Atomic unsigned long runs_repeated;
	_Atomic unsigned long samples_created;
	_Atomic unsigned long db_unavailable;
};

extern struct counters counters;

#endif
