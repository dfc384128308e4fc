/*
 * bisect.h - bisection to the first bad commit: the chain from a
 * good commit to a bad one (first parents), its midpoint measured by the
 * labs (jobs of confirm_runs runs, or the runs it has already), judged
 * against both ends by the verdict rules, the range narrowed, until the first
 * bad commit is next to the last good one ('found'), or a step cannot be
 * judged with the most runs allowed ('inconclusive').
 */
#ifndef KPERF_BISECT_H
#define KPERF_BISECT_H

#include <libpq-fe.h>

/* The most runs a step is measured with before it is called inconclusive,
 * in units of lab_policy.confirm_runs. */
#define BISECT_MAX_RUNS_FACTOR 2

/* Advance every running bisection as far as the runs stored allow: judge
 * the midpoints that have their runs, queue jobs for the next ones. Each
 * bisection in its own transaction. Returns how many changed, or -1. */
int bisect_step(PGconn *c);

/*
 * Start one by hand: good and bad are commit ids, bad a first-parent
 * descendant of good (at most lab_policy.ancestor_depth commits); the key
 * and metric ids. Returns the bisection id (> 0), 0 when bad does not descend
 * from good, -1 on a database error (*failed set for the caller).
 */
long bisect_start(PGconn *c, const char *good, const char *bad, const char *machine,
		  const char *test, const char *variant, const char *metric, PGresult **failed);

#endif
