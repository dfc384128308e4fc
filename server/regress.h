/*
 * regress.h - per-commit regression decisions, made by a worker thread from
 * the queue that ingest fills: each key group (commit, machine, test,
 * variant) is compared with its parent or its series base, its children are
 * redone, regressions undone by a later commit get recovered_by, and the
 * group's change points are recomputed.
 */
#ifndef KPERF_REGRESS_H
#define KPERF_REGRESS_H

#include <libpq-fe.h>

/*
 * Set the floors from a KPERF_FLOORS spec (see verdict_config_parse). Call
 * before regress_start. Returns 0, or -1 with a reason in err.
 */
int regress_configure(const char *floors, char *err, size_t errlen);

/* Start the worker thread (it polls the queue every 200 ms); decisions that
 * match subscriptions queue mail due settle_s seconds later. 0 or -1. */
int regress_start(double settle_s);

/* Stop the worker and wait for it. */
void regress_stop(void);

/*
 * Process one queued key group on connection c. Returns 1 when one was
 * processed, 0 when the queue had nothing ready, -1 on a database error
 * (logged; the entry is released for another try).
 */
int regress_step(PGconn *c);

#endif
