/*
 * plan.c - plans, their targets and their jobs (see plan.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "server/db/db.h"
#include "server/robot/plan.h"

#define PLAN_ROW                                                                               \
	"json_build_object('id', p.id, 'name', p.name, 'inbox', (SELECT name FROM inbox"          \
	" WHERE id = p.inbox_id), 'branch', p.branch, 'match', json_build_object('subject',"       \
	" p.subject_glob, 'files', p.files_globs), 'tests', p.tests, 'machines', p.machines,"      \
	" 'runs', p.runs, 'report', json_build_object('mode', p.report_mode, 'cc', p.report_cc,"   \
	" 'clean', p.report_clean, 'regzbot', p.report_regzbot), 'created_at', p.created_at)"

/* Every plan of the series' inbox whose subject glob matches its subject
 * (or name) and whose file globs match a file a patch touches. */
static const char SQL_MATCH[] =
	"WITH s AS (SELECT * FROM posted_series WHERE id = $1::bigint AND base_sha IS NOT NULL),"
	" b AS (INSERT INTO commits (sha) SELECT base_sha FROM s"
	"  ON CONFLICT (sha) DO UPDATE SET sha = EXCLUDED.sha RETURNING id)"
	" INSERT INTO plan_target (plan_id, series_id, base_commit_id)"
	" SELECT p.id, s.id, b.id FROM plan p, s, b WHERE p.inbox_id = s.inbox_id"
	"  AND (p.subject_glob IS NULL OR s.subject LIKE kperf_glob_like(p.subject_glob)"
	"   OR s.name LIKE kperf_glob_like(p.subject_glob))"
	"  AND (p.files_globs = '{}' OR EXISTS (SELECT 1 FROM posted_patch pp, unnest(pp.files) f,"
	"   unnest(p.files_globs) g WHERE pp.series_id = s.id AND f LIKE kperf_glob_like(g)))"
	" ON CONFLICT DO NOTHING RETURNING id";

/*
 * A target's jobs: per test of its plan and machine the plan names that
 * offers it, the base (unless it has the runs already) and the head: the
 * series applied on the base, or the branch head.
 */
static const char SQL_JOBS[] =
	"WITH t AS (SELECT pt.id, pt.series_id, pt.head_commit_id, pt.base_commit_id, p.tests,"
	"  p.machines, p.runs, s.total, p.name FROM plan_target pt JOIN plan p ON p.id = pt.plan_id"
	"  LEFT JOIN posted_series s ON s.id = pt.series_id WHERE pt.id = $1::bigint),"
	" v AS (INSERT INTO variant (knobs) VALUES ('{}')"
	"  ON CONFLICT (knobs) DO UPDATE SET knobs = EXCLUDED.knobs RETURNING id),"
	" pairs AS (SELECT DISTINCT mo.machine_id, te.id AS test_id FROM t,"
	"  jsonb_to_recordset(t.tests) AS x(suite text, params jsonb)"
	"  JOIN test te ON te.suite = x.suite AND te.params = x.params"
	"  JOIN machine_offer mo ON mo.test_id = te.id JOIN machine m ON m.id = mo.machine_id"
	"  WHERE EXISTS (SELECT 1 FROM unnest(t.machines) g WHERE m.name LIKE kperf_glob_like(g))),"
	" base AS (SELECT kperf_job_add(t.base_commit_id, pairs.machine_id, pairs.test_id, v.id,"
	"   t.runs, 'plan', 'plan ' || t.name || ': the base', p_target => t.id)"
	"  FROM t, pairs, v WHERE (SELECT count(*) FROM run r WHERE r.commit_id = t.base_commit_id"
	"   AND r.machine_id = pairs.machine_id AND r.test_id = pairs.test_id AND r.valid)"
	"   < t.runs),"
	" head AS (SELECT kperf_job_add(coalesce(t.head_commit_id, t.base_commit_id),"
	"   pairs.machine_id, pairs.test_id, v.id, t.runs, 'plan',"
	"   'plan ' || t.name || CASE WHEN t.series_id IS NULL THEN ': the branch head'"
	"    ELSE ': the series, ' || t.total || ' patches' END,"
	"   p_series => t.series_id, p_patches => CASE WHEN t.series_id IS NOT NULL THEN t.total END,"
	"   p_target => t.id) FROM t, pairs, v)"
	" SELECT (SELECT count(*) FROM base) + (SELECT count(*) FROM head)";

static const char SQL_STATE[] =
	"UPDATE plan_target SET state = $2, detail = $3, updated_at = now() WHERE id = $1::bigint"
	/* a target no machine takes yet is tried each second: written once */
	" AND (state, detail) IS DISTINCT FROM ($2, $3)";

/* Jobs for target id: their number, 0 when no machine offers a test yet. */
static int queue(PGconn *c, const char *id)
{
	const char *p[1] = {id};
	PGresult *r = db_exec(c, SQL_JOBS, 1, p);
	int n;

	if (!db_ok(r)) {
		db_log_error("queueing a plan's jobs", c, r);
		PQclear(r);
		return -1;
	}
	n = (int)strtol(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	{
		const char *q[3] = {id, "queued",
				    n ? NULL : "no machine the plan names offers its tests yet"};
		if (db_do(c, SQL_STATE, 3, q))
			return -1;
	}
	if (n && db_do(c,
		       "UPDATE posted_series SET state = 'queued', updated_at = now() WHERE id ="
		       " (SELECT series_id FROM plan_target WHERE id = $1::bigint)"
		       " AND state = 'posted'",
		       1, p))
		return -1;
	return n;
}

int plan_match_series(PGconn *c, long series_id)
{
	char sid[24];
	const char *p[1] = {sid};
	PGresult *r;
	int n = 0;

	snprintf(sid, sizeof(sid), "%ld", series_id);
	r = db_exec(c, SQL_MATCH, 1, p);
	if (!db_ok(r)) {
		db_log_error("matching a series to plans", c, r);
		PQclear(r);
		return -1;
	}
	for (int i = 0; i < PQntuples(r); i++, n++)
		if (queue(c, PQgetvalue(r, i, 0)) < 0) {
			PQclear(r);
			return -1;
		}
	PQclear(r);
	return n;
}

/*
 * A branch's head: a commit of the branch no other commit of it names as
 * parent, newest first. Its base: the plan's last tested head, else where
 * the branch forked (the parent of its oldest first-parent ancestor on the
 * branch).
 */
static const char SQL_BRANCH_HEADS[] =
	"WITH h AS (SELECT p.id AS plan_id, p.branch, c.id AS head FROM plan p"
	"  JOIN LATERAL (SELECT c.* FROM commits c WHERE c.branch = p.branch AND c.sha IS NOT NULL"
	"   AND NOT EXISTS (SELECT 1 FROM commits k WHERE k.branch = p.branch"
	"    AND k.parent_sha = c.sha)"
	"   ORDER BY c.committed_at DESC NULLS LAST, c.id DESC LIMIT 1) c ON true"
	"  WHERE p.branch IS NOT NULL"
	"  AND NOT EXISTS (SELECT 1 FROM plan_target t WHERE t.plan_id = p.id"
	"   AND t.head_commit_id = c.id)),"
	" f AS (SELECT h.*, (SELECT t.head_commit_id FROM plan_target t WHERE t.plan_id = h.plan_id"
	"   ORDER BY t.id DESC LIMIT 1) AS last,"
	"  (WITH RECURSIVE up(parent, depth) AS (SELECT c.parent_sha, 0 FROM commits c"
	"    WHERE c.id = h.head UNION ALL SELECT c.parent_sha, up.depth + 1 FROM up"
	"    JOIN commits c ON c.sha = up.parent AND c.branch = h.branch WHERE up.depth < 100000)"
	"   SELECT parent FROM up ORDER BY depth DESC LIMIT 1) AS fork FROM h),"
	" fc AS (INSERT INTO commits (sha) SELECT DISTINCT fork FROM f"
	"  WHERE f.last IS NULL AND f.fork IS NOT NULL"
	"  ON CONFLICT (sha) DO UPDATE SET sha = EXCLUDED.sha RETURNING id, sha)"
	" INSERT INTO plan_target (plan_id, head_commit_id, base_commit_id)"
	" SELECT f.plan_id, f.head, coalesce(f.last, fc.id) FROM f LEFT JOIN fc ON fc.sha = f.fork"
	" WHERE coalesce(f.last, fc.id) IS NOT NULL"
	" ON CONFLICT DO NOTHING RETURNING id";

int plan_sweep(PGconn *c)
{
	PGresult *r = db_exec(c, SQL_BRANCH_HEADS, 0, NULL);
	int n = 0;

	if (!db_ok(r)) {
		db_log_error("finding new branch heads", c, r);
		PQclear(r);
		return -1;
	}
	for (int i = 0; i < PQntuples(r); i++, n++)
		if (queue(c, PQgetvalue(r, i, 0)) < 0) {
			PQclear(r);
			return -1;
		}
	PQclear(r);
	r = db_exec(c,
		    "SELECT pt.id FROM plan_target pt WHERE pt.state = 'queued'"
		    " AND NOT EXISTS (SELECT 1 FROM job j WHERE j.plan_target_id = pt.id)"
		    " ORDER BY pt.id LIMIT 16 FOR UPDATE SKIP LOCKED",
		    0, NULL);
	if (!db_ok(r)) {
		PQclear(r);
		return -1;
	}
	for (int i = 0; i < PQntuples(r); i++) {
		int q = queue(c, PQgetvalue(r, i, 0));
		if (q < 0) {
			PQclear(r);
			return -1;
		}
		n += q;
	}
	PQclear(r);
	return n;
}

int plan_add(PGconn *c, const struct plan_in *in, struct buf *out)
{
	char runs[16];
	const char *p[12] = {in->name,	in->inbox, in->branch, in->subject, in->files,
			     in->tests, in->machines, runs, in->mode, in->cc,
			     in->clean ? "true" : "false", in->regzbot ? "true" : "false"};
	PGresult *r;
	int rc = 0;

	snprintf(runs, sizeof(runs), "%ld", in->runs);
	if (in->inbox) {
		const char *q[1] = {in->inbox};
		r = db_exec(c, "SELECT 1 FROM inbox WHERE name = $1", 1, q);
		rc = !db_ok(r) ? -1 : PQntuples(r) ? 0 : 2;
		PQclear(r);
		if (rc)
			return rc;
	}
	return db_text(c,
		       "WITH te AS (INSERT INTO test (suite, params) SELECT x.suite, x.params"
		       "  FROM jsonb_to_recordset($6::jsonb) AS x(suite text, params jsonb)"
		       "  ON CONFLICT (suite, params) DO NOTHING),"
		       " p AS (INSERT INTO plan (name, inbox_id, branch, subject_glob, files_globs,"
		       "  tests, machines, runs, report_mode, report_cc, report_clean, report_regzbot)"
		       "  VALUES ($1, (SELECT id FROM inbox WHERE name = $2), $3, $4, $5::text[],"
		       "  $6::jsonb, $7::text[], $8::int, $9, $10::text[], $11::boolean, $12::boolean)"
		       "  ON CONFLICT (name) DO NOTHING RETURNING *)"
		       " SELECT " PLAN_ROW "::text FROM p",
		       12, p, out, "adding a plan");
}

int plan_list_json(PGconn *c, struct buf *out)
{
	return db_text(c,
		       "SELECT coalesce(json_agg(" PLAN_ROW " ORDER BY p.name), '[]')::text"
		       " FROM plan p",
		       0, NULL, out, "listing plans") ? -1 : 0;
}
