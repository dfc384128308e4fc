/*
 * confirm.h - the lab loop's policies after a decision: confirm
 * a KPI change decided from too few runs before it is mailed, and start a
 * bisection of a confirmed regression whose base is not its parent. Both run
 * in the decision worker's transaction; the bisection itself advances in
 * bisect.c.
 */
#ifndef KPERF_CONFIRM_H
#define KPERF_CONFIRM_H

#include <libpq-fe.h>

struct lab_policy {
	long confirm_runs;        /* KPERF_CONFIRM_RUNS (3); 0 or 1: confirm nothing */
	double confirm_timeout_s; /* KPERF_CONFIRM_TIMEOUT_S (6 h) */
	int bisect;               /* KPERF_BISECT (1) */
	long ancestor_depth;      /* KPERF_ANCESTOR_DEPTH (1000) */
	double settle_s;          /* KPERF_ALERT_SETTLE_S, for the mail of a found bisection */
};

extern struct lab_policy lab_policy;

/*
 * After the decisions of a batch's pairs were written, in the same
 * transaction; the pairs as bigint[] literals of machine, test, variant and
 * commit ids, one pair a position (one round trip per step for the batch):
 *  - confirmation: a KPI regression or improvement with fewer than
 *    confirm_runs runs on a side is 'waiting' when the machine's agent offers
 *    the test (jobs are queued for the missing runs of both sides, once),
 *    else 'unconfirmed'; decided again with enough runs it is 'confirmed',
 *    and a change that went away is 'refuted';
 *  - bisection: a KPI regression on the chain of a running or found
 *    bisection of its key and metric belongs to it; else a confirmed one
 *    (or one with enough runs from the start) whose base is not its parent
 *    starts one.
 * 0, or -1 (logged; the caller rolls back).
 */
int confirm_after_decide(PGconn *c, const char *machines, const char *tests,
			 const char *variants, const char *commits);

/*
 * Decisions waiting past the timeout, or whose confirmation jobs all failed,
 * become 'unconfirmed' and their commits' mail is queued. Returns how many,
 * or -1 (logged).
 */
int confirm_sweep(PGconn *c);

#endif
