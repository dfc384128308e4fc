/*
 * confirm.c - confirmation before alerting, and the start of a bisection
 * (see confirm.h). kperf asks the labs for the runs it lacks: the jobs it
 * queues name a test the machine's own agent offers, nothing more.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/mail/alert.h"
#include "server/decide/confirm.h"
#include "server/db/db.h"
#include "lib/util.h"

struct lab_policy lab_policy = {3, 21600, 1, 1000, 120};

/* The decisions of the decided pairs: ($1..$4) machine, test, variant and
 * commit ids, one pair a position. */
#define DECIDED                                                                            \
	" JOIN unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[]) AS x(m, t, v, c)" \
	" ON d.machine_id = x.m AND d.test_id = x.t AND d.variant_id = x.v AND d.commit_id = x.c"

/*
 * Jobs for the missing runs of both sides of the waiting candidates ($5:
 * runs wanted): one per commit and key, unless one is queued or running
 * already, on the same machine, when its agent offers the test. What is
 * missing is counted in the run table now, not taken from the decision: a
 * job may have ended, its runs committed, since the decision read them.
 */
static const char SQL_CONFIRM_JOBS[] =
	"WITH d AS (SELECT d.id, d.machine_id, d.test_id, d.variant_id, d.base_commit_id,"
	"  d.commit_id, d.base_runs, d.target_runs FROM decision d" DECIDED
	"  WHERE d.kpi AND d.command_differs IS NULL AND d.verdict IN ('regression', 'improvement')"
	"  AND (d.base_runs < $5::int OR d.target_runs < $5::int)"
	"  AND EXISTS (SELECT 1 FROM machine_offer o WHERE o.machine_id = d.machine_id"
	"   AND o.test_id = d.test_id)),"
	" side AS (SELECT base_commit_id AS commit_id, machine_id, test_id, variant_id, id,"
	"  base_runs AS runs FROM d WHERE base_runs < $5::int UNION ALL SELECT commit_id,"
	"  machine_id, test_id, variant_id, id, target_runs FROM d WHERE target_runs < $5::int),"
	" stored AS (SELECT y.*, (SELECT count(*) FROM run r WHERE r.machine_id = y.machine_id"
	"  AND r.test_id = y.test_id AND r.variant_id = y.variant_id AND r.commit_id = y.commit_id"
	"  AND r.valid) AS now_runs FROM side y),"
	" want AS (SELECT DISTINCT ON (commit_id, machine_id, test_id, variant_id) commit_id,"
	"  machine_id, test_id, variant_id, id, $5::int - greatest(runs, now_runs)::int AS runs"
	"  FROM stored WHERE greatest(runs, now_runs) < $5::int"
	"  ORDER BY commit_id, machine_id, test_id, variant_id, greatest(runs, now_runs))"
	" SELECT kperf_job_add(w.commit_id, w.machine_id, w.test_id, w.variant_id, w.runs, 'confirm',"
	"  'confirm decision ' || w.id, p_decision => w.id) FROM want w"
	" WHERE NOT EXISTS (SELECT 1 FROM job j WHERE j.commit_id = w.commit_id"
	"  AND j.machine_id = w.machine_id AND j.test_id = w.test_id AND j.variant_id = w.variant_id"
	"  AND j.state IN ('queued', 'running'))";

/* The confirmation state of the decided pairs' decisions (see confirm.h). */
static const char SQL_CONFIRM_STATE[] =
	"UPDATE decision d SET confirmation = y.state,"
	" confirm_started_at = CASE WHEN y.state = 'waiting'"
	"  THEN coalesce(CASE WHEN d.confirmation = 'waiting' THEN d.confirm_started_at END, now())"
	"  ELSE d.confirm_started_at END"
	" FROM (SELECT d.id, CASE"
	"  WHEN d.kpi AND d.command_differs IS NULL AND d.verdict IN ('regression', 'improvement')"
	"   AND (d.base_runs < $5::int OR d.target_runs < $5::int)"
	"   THEN CASE WHEN d.confirmation = 'unconfirmed' THEN 'unconfirmed'"
	"    WHEN EXISTS (SELECT 1 FROM machine_offer o WHERE o.machine_id = d.machine_id"
	"     AND o.test_id = d.test_id) THEN 'waiting' ELSE 'unconfirmed' END"
	"  WHEN d.kpi AND d.command_differs IS NULL AND d.verdict IN ('regression', 'improvement')"
	"   THEN CASE WHEN d.confirmation IN ('waiting', 'unconfirmed') THEN 'confirmed'"
	"    ELSE d.confirmation END"
	/* judged only with all the runs it asked for: until then it waits */
	"  WHEN d.confirmation = 'waiting' AND (d.base_runs < $5::int OR d.target_runs < $5::int)"
	"   THEN 'waiting'"
	"  WHEN d.confirmation IS NOT NULL THEN 'refuted'"
	"  END AS state"
	"  FROM decision d" DECIDED ") y"
	" WHERE d.id = y.id AND d.confirmation IS DISTINCT FROM y.state";

/* A regression of a decided pair on the chain of a bisection of its key and
 * metric (running, or found: the commits it judged) belongs to it. */
static const char SQL_COVER[] =
	"UPDATE decision d SET bisection_id = b.id FROM bisection b,"
	" unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[]) AS x(m, t, v, c)"
	" WHERE d.machine_id = x.m AND d.test_id = x.t AND d.variant_id = x.v AND d.commit_id = x.c"
	" AND d.kpi AND d.command_differs IS NULL AND d.verdict = 'regression'"
	" AND d.bisection_id IS NULL AND b.machine_id = d.machine_id AND b.test_id = d.test_id"
	" AND b.variant_id = d.variant_id AND b.metric_id = d.metric_id"
	" AND b.state IN ('running', 'found') AND d.commit_id = ANY (b.chain[2:])";

/*
 * Bisections for the decided pairs' confirmed regressions whose base is not
 * their parent: the first-parent chain from each commit back to its base
 * ($5: at most this many commits), good first.
 */
static const char SQL_START[] =
	"WITH cand AS (SELECT d.* FROM decision d" DECIDED
	"  WHERE d.kpi AND d.command_differs IS NULL AND d.verdict = 'regression' AND d.base_kind <> 'parent'"
	"  AND d.bisection_id IS NULL AND (d.confirmation IS NULL OR d.confirmation = 'confirmed')),"
	" chain AS (SELECT * FROM (WITH RECURSIVE up(did, base, id, parent_sha, depth, path) AS ("
	"  SELECT cand.id, cand.base_commit_id, c.id, c.parent_sha, 0, ARRAY[c.id]"
	"  FROM cand JOIN commits c ON c.id = cand.commit_id"
	"  UNION ALL SELECT up.did, up.base, p.id, p.parent_sha, up.depth + 1, p.id || up.path"
	"  FROM up JOIN commits p ON p.sha = up.parent_sha"
	"  WHERE up.depth < $5::int AND up.id <> up.base)"
	"  SELECT did, id, path FROM up) z),"
	" ins AS (INSERT INTO bisection (decision_id, machine_id, test_id, variant_id, metric_id,"
	"  good_commit_id, bad_commit_id, chain)"
	"  SELECT cand.id, cand.machine_id, cand.test_id, cand.variant_id, cand.metric_id,"
	"  cand.base_commit_id, cand.commit_id, chain.path FROM cand"
	"  JOIN chain ON chain.did = cand.id AND chain.id = cand.base_commit_id"
	"  RETURNING id, decision_id)"
	" UPDATE decision d SET bisection_id = ins.id FROM ins WHERE d.id = ins.decision_id"
	" RETURNING ins.id";

int confirm_after_decide(PGconn *c, const char *machines, const char *tests,
			 const char *variants, const char *commits)
{
	char runs[16], depth[16];
	const char *p5[5] = {machines, tests, variants, commits, runs};
	const char *ps[5] = {machines, tests, variants, commits, depth};
	PGresult *r;

	snprintf(runs, sizeof(runs), "%ld", lab_policy.confirm_runs);
	snprintf(depth, sizeof(depth), "%ld", lab_policy.ancestor_depth);
	if (lab_policy.confirm_runs > 1 &&
	    (db_do(c, SQL_CONFIRM_JOBS, 5, p5) || db_do(c, SQL_CONFIRM_STATE, 5, p5)))
		return -1;
	if (db_do(c, SQL_COVER, 4, p5))
		return -1;
	if (!lab_policy.bisect)
		return 0;
	r = db_exec(c, SQL_START, 5, ps);
	if (!db_ok(r)) {
		db_log_error("starting a bisection", c, r);
		PQclear(r);
		return -1;
	}
	for (int i = 0; i < PQntuples(r); i++)
		log_info("bisection %s started", PQgetvalue(r, i, 0));
	PQclear(r);
	return 0;
}

/* Waiting past the timeout, or with every confirmation job of it ended
 * without the runs: unconfirmed; the commits' groups, to queue their mail. */
static const char SQL_SWEEP[] =
	"UPDATE decision d SET confirmation = 'unconfirmed' WHERE d.confirmation = 'waiting'"
	" AND (d.confirm_started_at < now() - make_interval(secs => $1::float8)"
	"  OR (EXISTS (SELECT 1 FROM job j WHERE j.decision_id = d.id"
	"    AND j.state IN ('failed', 'cancelled'))"
	"   AND NOT EXISTS (SELECT 1 FROM job j WHERE j.decision_id = d.id"
	"    AND j.state IN ('queued', 'running'))))"
	" RETURNING d.machine_id, d.test_id, d.variant_id, d.commit_id";

int confirm_sweep(PGconn *c)
{
	char timeout[32];
	const char *p[1] = {timeout};
	PGresult *r;
	int n, rc = 0;

	snprintf(timeout, sizeof(timeout), "%.3f", lab_policy.confirm_timeout_s);
	r = db_exec(c, SQL_SWEEP, 1, p);
	if (!db_ok(r)) {
		db_log_error("ending confirmations", c, r);
		PQclear(r);
		return -1;
	}
	n = PQntuples(r);
	for (int i = 0; i < n && !rc; i++)
		rc = alert_enqueue(c, PQgetvalue(r, i, 0), PQgetvalue(r, i, 1), PQgetvalue(r, i, 2),
				   PQgetvalue(r, i, 3), 0);
	PQclear(r);
	return rc ? -1 : n;
}
