/*
 * store.h - writing runs, their dimensions (machine, commit, test, variant)
 * and their samples inside the caller's transaction. Each dimension is read
 * first and written only when new, so concurrent collectors posting for one
 * machine and commit do not queue behind each other's row locks.
 */
#ifndef KPERF_STORE_H
#define KPERF_STORE_H

#include <libpq-fe.h>

#include "lib/strmap.h"
#include "lib/ingest_decode.h"

/*
 * The end of every INSERT INTO decision_queue (commit_id, machine_id,
 * test_id, variant_id): a group queued already gets a new version (the
 * worker deletes its entry only when no run came while it decided) and the
 * time a run last arrived (the worker waits for a quiet quarter second); a
 * small post's run makes it a small post's entry (not bulk).
 */
#define STORE_QUEUE_ON_CONFLICT                                                                   \
	" ON CONFLICT (commit_id, machine_id, test_id, variant_id)"                                \
	" DO UPDATE SET version = decision_queue.version + 1, touched_at = now(),"                 \
	" bulk = decision_queue.bulk AND EXCLUDED.bulk"

/* A request of more runs than this is a bulk import: its decisions are
 * queued behind those of smaller posts (migration 011). */
#define STORE_BULK_RUNS 16

enum store_result { STORE_CREATED, STORE_SAME, STORE_CONFLICT, STORE_DB_ERROR };

/* One run to store; the caller sets run, token_id and bulk, store_runs the rest. */
struct store_item {
	const struct run_in *run;
	long token_id;                       /* 0: none */
	int bulk;                            /* from a request of > STORE_BULK_RUNS runs */
	enum store_result result;            /* CREATED, SAME or CONFLICT */
	long id;                             /* run.id */
	long machine, commit, test, variant; /* its dimensions' ids */
	long key_group;                      /* of (machine, test, variant) */
	char at[48];                         /* run.received_at, as PostgreSQL wrote it */
};

/*
 * Upsert a commit description (JSON with sha, or with release only when
 * has_sha is 0). Returns its id (> 0), or 0 on a database error with *failed
 * set to the result (the caller reports and PQclears it).
 */
long store_commit(PGconn *c, const char *commit_json, int has_sha, PGresult **failed);

/*
 * Store n runs with their samples and queue their decisions, in a
 * transaction of their own: BEGIN goes with the first run's statement and
 * COMMIT with the last statement (one round trip each fewer). A single run
 * whose metric ids are all known is one statement with its samples and
 * queue entry, then COMMIT; otherwise the samples go by COPY. Returns -1
 * when every run is stored (committed) or found stored with equal content;
 * the index of the first run stored already with other content (roll back);
 * -2 on a database error (*failed set; roll back). Metric ids learnt on the way go into fresh:
 * give them to store_publish after COMMIT, strmap_release them after ROLLBACK.
 */
long store_runs(PGconn *c, struct store_item *items, size_t n, struct strmap *fresh,
		PGresult **failed);

/* Remember committed metric ids for later transactions (releases fresh). */
void store_publish(struct strmap *fresh);

#endif
