/*
 * regress_decide.h - the numbers of the decision worker, from a key group
 * read by regress_load.c: one commit decided against its base (both sides'
 * runs as a compare reads them, the history noise, kperf's verdict and
 * Benjamini-Hochberg across the metrics), and the group's change points.
 * Pure: rows of JSON out, for regress.c to store.
 */
#ifndef KPERF_REGRESS_DECIDE_H
#define KPERF_REGRESS_DECIDE_H

#include <stddef.h>

#include "lib/buf.h"
#include "server/decide/regress_load.h"
#include "server/stats/verdict.h"

/* Commits of a history the noise is pooled over (the newest runs'). */
#define REGRESS_HISTORY_COMMITS 30
/* The false-discovery rate across the metrics of one commit pair. */
#define REGRESS_FDR_Q 0.05
/* Commits a history needs before change points are looked for in it. */
#define REGRESS_CP_COMMITS 4

/* A commit of a loaded group to decide against its base. */
struct rd_pair {
	struct rl_group *g;
	long x, base;     /* commit ids */
	char kind[16];    /* "parent", "series_base" or "ancestor" */
	int decided;      /* rd_decide stored rows (both sides had runs) */
	long *tm_ids;     /* the target's metrics with samples, and their means */
	double *tm_means; /* (what recoveries compare) */
	size_t ntm;
};

/*
 * Decide p->x against p->base for every metric of p->g (its samples read),
 * appending one JSON object per metric to rows (a JSON array being built,
 * '[' written: objects are joined with ','), with the fields of
 * regress.c's SQL_UPSERT. Returns 1 when decided; 0 when the base or the
 * target has no runs of the group (no decision, as before).
 */
int rd_decide(struct rd_pair *p, const struct verdict_config *cfg, struct buf *rows);

/* The change points of every metric of g, as JSON objects appended to cps
 * (as rows above), with the fields of regress.c's SQL_CP_INSERT. */
void rd_change_points(const struct rl_group *g, struct buf *cps);

/* Free what rd_decide gave p (accepts a pair never decided). */
void rd_pair_release(struct rd_pair *p);

#endif
