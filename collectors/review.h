/*
 * review.h - kperf-collect's reads for a reviewer: compare, trend, series.
 */
#ifndef KPERF_REVIEW_H
#define KPERF_REVIEW_H

#include "collectors/base/config.h"

struct review_opts {
	const char *base, *target; /* compare's refs; series: base is its name */
	const char *machine, *suite, *params, *variant, *metric;
	const char *format; /* compare: table (default), lkp, mmtests, json */
};

/* Each prints to stdout; 0, 1 when kperfd did not answer 200 (said why),
 * 64 on a bad option. */
int review_compare(const struct collect_config *c, const struct review_opts *o);
int review_trend(const struct collect_config *c, const struct review_opts *o);
int review_series(const struct collect_config *c, const struct review_opts *o);

#endif
