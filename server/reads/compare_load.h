/*
 * compare_load.h - reading one side of a comparison from PostgreSQL into a
 * cmp_set: the runs of some commits (filtered by trend-key fields), their
 * samples grouped by run and metric. Used by the compare, series and
 * mail (the LKP table of an alert).
 */
#ifndef KPERF_COMPARE_LOAD_H
#define KPERF_COMPARE_LOAD_H

#include <libpq-fe.h>

#include "server/stats/compare.h"

/* Which runs a side is made of; NULL fields match anything. */
struct cmp_filter {
	const char *commit_ids;  /* bigint[] literal, e.g. "{3,7}" */
	const char *qual_keys;   /* text[] literal: keys left out of params and variant */
	const char *qual;        /* JSON object the runs' knobs and params must contain */
	const char *suite;
	const char *machine;
	const char *metric_like; /* a LIKE pattern over metric names */
	const char *variant;     /* JSON object: knobs equal to it (qualified keys aside) */
	const char *params;      /* JSON object: params equal to it (qualified keys aside) */
};

/*
 * Add the samples of the runs f selects to set's side. *nruns gets the run
 * count, *run_ids (when not NULL) a malloc'd bigint[] literal of them.
 * Returns 0, or -1 with *failed set to the failed result (the caller
 * reports and PQclears it).
 */
int cmp_load_side(PGconn *c, struct cmp_set *set, int side, const struct cmp_filter *f,
		  size_t *nruns, char **run_ids, PGresult **failed);

#endif
