/*
 * jobs.h - work for the labs (table job, migration 013): what the ingest
 * path and the policies (confirmation, bisection) need of it. The HTTP
 * resources /api/v1/jobs are in jobs.c, declared in api.h.
 */
#ifndef KPERF_JOBS_H
#define KPERF_JOBS_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stddef.h>

#include "api/store.h"

/*
 * Count the stored runs of items that name a job ("job": {"id": N}) toward
 * it: only when the job is leased to the run's machine and the run is of
 * the job's commit, test and variant; a job whose runs have all arrived is
 * done. Runs already counted count once. After the runs' COMMIT; 0 or -1
 * (logged).
 */
int jobs_count_runs(PGconn *c, const struct store_item *items, size_t n);

struct reply;
/* POST /api/v1/jobs/ID/applied, the lease checked: {"commits": [sha...]},
 * the commits the lab made from the job's series, patch 1 first; answered. */
void jobs_applied(PGconn *c, struct reply *rp, const char *id, json_t *body);
/* A series job failed with reason: "does not apply ..." or "does not build ..."
 * marks its series does_not_apply or does_not_build. 0 or -1. */
int jobs_failed_series(PGconn *c, const char *id, const char *reason);

#endif
