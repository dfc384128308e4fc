/*
 * store.h - writing the dimensions of a run (machine, commit, test, variant)
 * and a run with its samples, inside the caller's transaction. Each upsert
 * reads first and writes only what is new, so concurrent collectors posting
 * for one machine and commit do not queue behind each other's row locks.
 */
#ifndef KPERF_STORE_H
#define KPERF_STORE_H

#include <libpq-fe.h>

#include "ingest_decode.h"

enum store_result { STORE_CREATED, STORE_SAME, STORE_CONFLICT, STORE_DB_ERROR };

/*
 * Upsert a commit description (JSON with sha, or with release only when
 * has_sha is 0). Returns its id (> 0), or 0 on a database error with *failed
 * set to the result (the caller reports and PQclears it).
 */
long store_commit(PGconn *c, const char *commit_json, int has_sha, PGresult **failed);

/*
 * Store one run and its samples; *id gets the run's id. STORE_SAME when the
 * run_id exists with equal content, STORE_CONFLICT when with other content,
 * STORE_DB_ERROR with *failed set as above.
 */
enum store_result store_run(PGconn *c, const struct run_in *run, long token_id, long *id,
			    PGresult **failed);

#endif
