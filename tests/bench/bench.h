/*
 * bench.h - what the benchmark programs share: a monotonic clock in seconds
 * and a libcurl write callback that drops the answer.
 */
#ifndef KPERF_BENCH_H
#define KPERF_BENCH_H

#include <stddef.h>
#include <time.h>

static inline double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline size_t discard(char *d, size_t s, size_t n, void *a)
{
	(void)d;
	(void)a;
	return s * n;
}

#endif
