/*
 * plan.h - the plan and plan_target tables: what a plan tests (series
 * versions of an inbox matching its subject and file globs, or each new
 * head of a branch), and the jobs that measure a target and its base on
 * every machine the plan names whose agent offers the test.
 */
#ifndef KPERF_ROBOT_PLAN_H
#define KPERF_ROBOT_PLAN_H

#include <libpq-fe.h>

#include "lib/buf.h"

/* In the caller's transaction: a target of every plan series_id matches,
 * with its jobs. Targets made, or -1. */
int plan_match_series(PGconn *c, long series_id);

/* A branch plan's target for each new head of its branch, with jobs; and
 * jobs for targets no machine could take yet. Targets or jobs made, or -1. */
int plan_sweep(PGconn *c);

/* A plan as posted (checked by the API): stored, its row as JSON in out.
 * 0, 1 when the name is taken, 2 when the inbox does not exist, -1. */
struct plan_in {
	const char *name, *inbox, *branch, *subject;
	const char *files, *machines, *cc; /* text[] literals */
	const char *tests;                 /* [{suite, params}] JSON, params canonical */
	const char *mode;                  /* "send" or "hold" */
	long runs;
	int clean, regzbot;
};
int plan_add(PGconn *c, const struct plan_in *p, struct buf *out);
int plan_list_json(PGconn *c, struct buf *out);

#endif
