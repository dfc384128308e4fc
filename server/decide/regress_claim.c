/*
 * regress_claim.c - the decision queue's claim: the ready entries of up to
 * REGRESS_BATCH_GROUPS key groups, taken by one worker as a batch in a
 * transaction of its own (regress.c decides them).
 */
#include <libpq-fe.h>

#include "server/db/db.h"
#include "server/decide/regress_claim.h"
#include "lib/util.h"

/*
 * A batch: every ready entry of the key groups of the first
 * REGRESS_BATCH_GROUPS ready entries (at most REGRESS_BATCH_MAX entries), so
 * a group's commits are decided together from one read, each commit once
 * (a commit's children are redone with it: queued together, they were each
 * decided twice). 32 groups of 9 commits take 50-100 ms on the 2-core build
 * machine; a fresh commit's entry waits for the batches under way.
 */
#define REGRESS_BATCH_GROUPS "32"
#define REGRESS_BATCH_MAX "4096"

/*
 * A queued group is decided once no run has arrived for it for a quarter
 * second (touched_at), so the runs of a batch, or of collectors posting
 * together, are decided once; under a steady stream of runs it is decided
 * every two seconds (queued_at, reset when a pass ends with runs still
 * arriving). Deciding once per run kept a core busy re-reading histories,
 * and four times a second still took as much of PostgreSQL as the ingest.
 */
#define REGRESS_QUIET "interval '250 milliseconds'"
#define REGRESS_MAX_WAIT "interval '2 seconds'"
#define REGRESS_CLAIM_TTL "interval '5 minutes'"

#define READY(q)                                                                          \
	" ((" q ".claimed_at IS NULL AND (" q ".touched_at < now() - " REGRESS_QUIET        \
	"   OR " q ".queued_at < now() - " REGRESS_MAX_WAIT "))"                             \
	"  OR " q ".claimed_at < now() - " REGRESS_CLAIM_TTL ")"

/*
 * The claim, committed on its own (no row lock of the queue is held while
 * deciding: ingest bumps the entries' versions meanwhile; see regress_claim).
 * cand: the first ready entries, small posts' (bulk false) before a bulk
 * import's, of groups no worker holds; a batch is of small posts' groups
 * alone when there are any. pick: every ready entry of those groups, locked
 * by a MATERIALIZED CTE that runs once (a subquery joined to the UPDATE
 * once left claimed entries unreturned, to wait 5 minutes for their claim
 * to expire).
 */
static const char SQL_CLAIM[] =
	"WITH cand AS (SELECT q.machine_id, q.test_id, q.variant_id, q.bulk FROM decision_queue q"
	"  WHERE" READY("q") " AND NOT EXISTS (SELECT 1 FROM decision_queue o"
	"   WHERE o.machine_id = q.machine_id AND o.test_id = q.test_id"
	"   AND o.variant_id = q.variant_id AND o.claimed_at >= now() - " REGRESS_CLAIM_TTL ")"
	"  ORDER BY q.bulk, q.queued_at LIMIT " REGRESS_BATCH_GROUPS "),"
	" grp AS (SELECT DISTINCT machine_id, test_id, variant_id FROM cand"
	"  WHERE bulk = (SELECT bool_and(bulk) FROM cand)),"
	" pick AS MATERIALIZED (SELECT q.commit_id, q.machine_id, q.test_id, q.variant_id"
	"  FROM decision_queue q JOIN grp USING (machine_id, test_id, variant_id)"
	"  WHERE" READY("q") " ORDER BY q.queued_at LIMIT " REGRESS_BATCH_MAX
	"  FOR UPDATE OF q SKIP LOCKED)"
	" UPDATE decision_queue q SET claimed_at = now() FROM pick p"
	" WHERE (q.commit_id, q.machine_id, q.test_id, q.variant_id)"
	"  = (p.commit_id, p.machine_id, p.test_id, p.variant_id)"
	" RETURNING q.commit_id, q.machine_id, q.test_id, q.variant_id, q.version,"
	"  (SELECT g.id FROM key_group g WHERE g.machine_id = q.machine_id"
	"   AND g.test_id = q.test_id AND g.variant_id = q.variant_id)";

/* The claim's transaction (regress_claim.h): SQL_CLAIM under kperf.claim. */
PGresult *regress_claim(PGconn *c)
{
	const struct db_stmt st[4] = {
		{"BEGIN", 0, NULL, 0, NULL, NULL},
		{"SELECT pg_advisory_xact_lock(hashtext('kperf.claim'))", 0, NULL, 0, NULL, NULL},
		{SQL_CLAIM, 0, NULL, 0, NULL, NULL},
		{"COMMIT", 0, NULL, 0, NULL, NULL}};
	PGresult *out = db_exec_batch(c, 4, st, 2);

	if (!db_ok(out)) { /* the first failure: nothing claimed */
		db_log_error("claiming queued decisions", c, out);
		PQclear(out);
		if (PQtransactionStatus(c) != PQTRANS_IDLE)
			PQclear(PQexec(c, "ROLLBACK"));
		return NULL;
	}
	return out;
}
