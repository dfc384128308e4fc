/*
 * regress.h - per-commit regression decisions, made by worker threads from
 * the queue that ingest fills: each queued key group (commit, machine, test,
 * variant) is compared with its parent or its series base, its children are
 * redone, regressions undone by a later commit get recovered_by, and the
 * group's change points are recomputed. Many groups are decided per
 * transaction; entries queued by small posts go before a bulk import's.
 */
#ifndef KPERF_REGRESS_H
#define KPERF_REGRESS_H

#include <libpq-fe.h>

/*
 * Decision worker threads: the first polls the queue; the others join it
 * while the queue is long. Each holds a pooled connection while it works
 * (size the pool for them).
 */
#define REGRESS_WORKERS 2

/*
 * Set the floors from a KPERF_FLOORS spec (see verdict_config_parse). Call
 * before regress_start. Returns 0, or -1 with a reason in err.
 */
int regress_configure(const char *floors, char *err, size_t errlen);

/* Start the workers (the first polls the queue every 200 ms); decisions that
 * match subscriptions queue mail due settle_s seconds later. 0 or -1. */
int regress_start(double settle_s);

/* Stop the workers and wait for them. */
void regress_stop(void);

/*
 * Claim a batch of ready queue entries and decide them on connection c, in
 * one transaction. Returns how many entries were decided (> 0), 0 when none
 * were ready (or their groups were being decided elsewhere), -1 on a
 * database error (logged; the entries go back to the queue).
 */
int regress_step(PGconn *c);

/* regress_worker.c's: how often the first worker polls the queue, and the
 * claim size that says the queue is long (the second worker joins). */
#define REGRESS_POLL_US 200000
#define REGRESS_HELP_ENTRIES 32

/* regress.c, for regress_worker.c: the settle time of the alerts it queues,
 * and the verdict configuration given back when the workers stop. */
void regress_settle(double settle_s);
void regress_release(void);

/* How many times this process decided a key group at one commit (every
 * metric of it), for /metrics. */
unsigned long regress_passes(void);

#endif
