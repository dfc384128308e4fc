/*
 * store.c - the SQL of ingest. Every statement is a constant with $n
 * parameters; JSON documents travel as parameters and PostgreSQL picks
 * their fields, so no value is ever spliced into SQL text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../server/counters.h"
#include "../server/db.h"
#include "../server/util.h"
#include "store.h"

static const char SQL_MACHINE[] =
	"WITH j AS (SELECT $1::jsonb AS j),"
	" v AS (SELECT j->>'name' AS name, j->>'cpu_model' AS cpu_model,"
	"  (j->>'nr_cpus')::numeric::int AS nr_cpus, (j->>'sockets')::numeric::int AS sockets,"
	"  (j->>'memory_mb')::numeric::bigint AS memory_mb,"
	"  (j->>'numa_nodes')::numeric::int AS numa_nodes, coalesce(j->'info', '{}') AS info"
	"  FROM j),"
	" hit AS (SELECT m.id FROM machine m, v WHERE m.name = v.name"
	"  AND m.cpu_model IS NOT DISTINCT FROM coalesce(v.cpu_model, m.cpu_model)"
	"  AND m.nr_cpus IS NOT DISTINCT FROM coalesce(v.nr_cpus, m.nr_cpus)"
	"  AND m.sockets IS NOT DISTINCT FROM coalesce(v.sockets, m.sockets)"
	"  AND m.memory_mb IS NOT DISTINCT FROM coalesce(v.memory_mb, m.memory_mb)"
	"  AND m.numa_nodes IS NOT DISTINCT FROM coalesce(v.numa_nodes, m.numa_nodes)"
	"  AND m.info @> v.info),"
	" ins AS (INSERT INTO machine AS m (name, cpu_model, nr_cpus, sockets, memory_mb,"
	"  numa_nodes, info)"
	"  SELECT * FROM v WHERE NOT EXISTS (SELECT 1 FROM hit)"
	"  ON CONFLICT (name) DO UPDATE SET cpu_model = coalesce(EXCLUDED.cpu_model, m.cpu_model),"
	"  nr_cpus = coalesce(EXCLUDED.nr_cpus, m.nr_cpus),"
	"  sockets = coalesce(EXCLUDED.sockets, m.sockets),"
	"  memory_mb = coalesce(EXCLUDED.memory_mb, m.memory_mb),"
	"  numa_nodes = coalesce(EXCLUDED.numa_nodes, m.numa_nodes),"
	"  info = m.info || EXCLUDED.info, updated_at = now() RETURNING id)"
	" SELECT id FROM hit UNION ALL SELECT id FROM ins";

#define COMMIT_VALUES                                                                        \
	" v AS (SELECT lower(j->>'sha') AS sha, lower(j->>'parent') AS parent_sha,"          \
	"  j->>'subject' AS subject, j->>'author' AS author,"                                \
	"  (j->>'date')::timestamptz AS committed_at, j->>'branch' AS branch,"               \
	"  j->>'release' AS release, j->>'describe' AS describe, j->>'series' AS series,"    \
	"  substring(j->>'series' from '^(.+) v[0-9]{1,9}$') AS series_name,"                \
	"  substring(j->>'series' from ' v([0-9]{1,9})$')::int AS series_version,"           \
	"  j->>'message_id' AS message_id,"                                                  \
	"  CASE WHEN j ? 'files' THEN ARRAY(SELECT jsonb_array_elements_text(j->'files'))"   \
	"  END AS files FROM j),"

static const char SQL_COMMIT_SHA[] =
	"WITH j AS (SELECT $1::jsonb AS j)," COMMIT_VALUES
	" hit AS (SELECT c.id FROM commits c, v WHERE c.sha = v.sha"
	"  AND c.parent_sha IS NOT DISTINCT FROM coalesce(v.parent_sha, c.parent_sha)"
	"  AND c.subject IS NOT DISTINCT FROM coalesce(v.subject, c.subject)"
	"  AND c.author IS NOT DISTINCT FROM coalesce(v.author, c.author)"
	"  AND c.committed_at IS NOT DISTINCT FROM coalesce(v.committed_at, c.committed_at)"
	"  AND c.branch IS NOT DISTINCT FROM coalesce(v.branch, c.branch)"
	"  AND c.release IS NOT DISTINCT FROM coalesce(v.release, c.release)"
	"  AND c.describe IS NOT DISTINCT FROM coalesce(v.describe, c.describe)"
	"  AND c.series IS NOT DISTINCT FROM coalesce(v.series, c.series)"
	"  AND c.message_id IS NOT DISTINCT FROM coalesce(v.message_id, c.message_id)"
	"  AND c.files IS NOT DISTINCT FROM coalesce(v.files, c.files)),"
	" ins AS (INSERT INTO commits AS c (sha, parent_sha, subject, author, committed_at,"
	"  branch, release, describe, series, series_name, series_version, message_id, files)"
	"  SELECT * FROM v WHERE NOT EXISTS (SELECT 1 FROM hit)"
	"  ON CONFLICT (sha) DO UPDATE SET"
	"  parent_sha = coalesce(EXCLUDED.parent_sha, c.parent_sha),"
	"  subject = coalesce(EXCLUDED.subject, c.subject),"
	"  author = coalesce(EXCLUDED.author, c.author),"
	"  committed_at = coalesce(EXCLUDED.committed_at, c.committed_at),"
	"  branch = coalesce(EXCLUDED.branch, c.branch),"
	"  release = coalesce(EXCLUDED.release, c.release),"
	"  describe = coalesce(EXCLUDED.describe, c.describe),"
	"  series = coalesce(EXCLUDED.series, c.series),"
	"  series_name = coalesce(EXCLUDED.series_name, c.series_name),"
	"  series_version = coalesce(EXCLUDED.series_version, c.series_version),"
	"  message_id = coalesce(EXCLUDED.message_id, c.message_id),"
	"  files = coalesce(EXCLUDED.files, c.files) RETURNING id)"
	" SELECT id FROM hit UNION ALL SELECT id FROM ins";

static const char SQL_COMMIT_RELEASE[] =
	"WITH j AS (SELECT $1::jsonb AS j)," COMMIT_VALUES
	" hit AS (SELECT c.id FROM commits c, v WHERE c.sha IS NULL AND c.release = v.release),"
	" ins AS (INSERT INTO commits AS c (sha, parent_sha, subject, author, committed_at,"
	"  branch, release, describe, series, series_name, series_version, message_id, files)"
	"  SELECT * FROM v WHERE NOT EXISTS (SELECT 1 FROM hit)"
	"  ON CONFLICT (release) WHERE sha IS NULL DO UPDATE SET release = EXCLUDED.release"
	"  RETURNING id)"
	" SELECT id FROM hit UNION ALL SELECT id FROM ins";

static const char SQL_TEST[] =
	"WITH hit AS (SELECT id FROM test WHERE suite = $1 AND params = $2::jsonb),"
	" ins AS (INSERT INTO test (suite, params) SELECT $1, $2::jsonb"
	"  WHERE NOT EXISTS (SELECT 1 FROM hit)"
	"  ON CONFLICT (suite, params) DO UPDATE SET suite = EXCLUDED.suite RETURNING id)"
	" SELECT id FROM hit UNION ALL SELECT id FROM ins";

static const char SQL_VARIANT[] =
	"WITH hit AS (SELECT id FROM variant WHERE knobs = $1::jsonb),"
	" ins AS (INSERT INTO variant (knobs) SELECT $1::jsonb"
	"  WHERE NOT EXISTS (SELECT 1 FROM hit)"
	"  ON CONFLICT (knobs) DO UPDATE SET knobs = EXCLUDED.knobs RETURNING id)"
	" SELECT id FROM hit UNION ALL SELECT id FROM ins";

static const char SQL_RUN[] =
	"INSERT INTO run (run_id, machine_id, commit_id, test_id, variant_id, release,"
	" started_at, duration_s, exit_status, token_id, doc)"
	" SELECT $1, $2, $3, $4, $5, d->'kernel'->>'release', (d->>'started_at')::timestamptz,"
	" (d->>'duration_s')::float8, (d->>'exit_status')::numeric::int, $6, d"
	" FROM (SELECT $7::jsonb AS d) s"
	" ON CONFLICT (run_id) DO NOTHING RETURNING id";

/* Equality of jsonb ignores key order, white space and number spelling. */
static const char SQL_RUN_SAME[] = "SELECT id, doc = $2::jsonb FROM run WHERE run_id = $1";

/* Sorted, so concurrent runs insert new names in one order and cannot deadlock. */
static const char SQL_METRICS[] =
	"INSERT INTO metric (name, unit, direction)"
	" SELECT k, r.doc->'units'->>k, r.doc->'directions'->>k"
	" FROM run r, jsonb_object_keys(r.doc->'metrics') k"
	" WHERE r.id = $1 AND NOT EXISTS (SELECT 1 FROM metric m WHERE m.name = k)"
	" ORDER BY k ON CONFLICT (name) DO NOTHING";

static const char SQL_SAMPLES[] =
	"INSERT INTO sample (run_id, metric_id, iteration, value)"
	" SELECT r.id, m.id, (e.i - 1)::int, e.v::float8"
	" FROM run r CROSS JOIN LATERAL jsonb_each(r.doc->'metrics') AS kv(name, vals)"
	" JOIN metric m ON m.name = kv.name"
	" CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(kv.vals) = 'array'"
	"  THEN kv.vals ELSE jsonb_build_array(kv.vals) END) WITH ORDINALITY AS e(v, i)"
	" WHERE r.id = $1";

/* Ask the decision worker to (re)decide this key group; a run arriving while
 * the worker decides bumps version, so the entry survives for another pass. */
static const char SQL_QUEUE[] =
	"INSERT INTO decision_queue (commit_id, machine_id, test_id, variant_id)"
	" VALUES ($1, $2, $3, $4) ON CONFLICT (commit_id, machine_id, test_id, variant_id)"
	" DO UPDATE SET version = decision_queue.version + 1, queued_at = now()";

/* Run a statement that answers one id. 0 on a database error (*failed set). */
static long one_id(PGconn *c, const char *sql, int n, const char *const *params,
		   PGresult **failed)
{
	PGresult *r = db_exec(c, sql, n, params);
	int64_t id = 0;

	if (!db_ok(r)) {
		*failed = r;
		return 0;
	}
	if (PQntuples(r) < 1 || parse_int64(PQgetvalue(r, 0, 0), 1, INT64_MAX, &id)) {
		/* Cannot happen with these statements; report as an internal error. */
		PQclear(r);
		*failed = PQmakeEmptyPGresult(c, PGRES_FATAL_ERROR);
		return 0;
	}
	PQclear(r);
	return (long)id;
}

long store_commit(PGconn *c, const char *commit_json, int has_sha, PGresult **failed)
{
	const char *params[1] = {commit_json};
	return one_id(c, has_sha ? SQL_COMMIT_SHA : SQL_COMMIT_RELEASE, 1, params, failed);
}

static int exec_ok(PGconn *c, const char *sql, const char *id, PGresult **failed)
{
	const char *params[1] = {id};
	PGresult *r = db_exec(c, sql, 1, params);
	if (!db_ok(r)) {
		*failed = r;
		return -1;
	}
	PQclear(r);
	return 0;
}

enum store_result store_run(PGconn *c, const struct run_in *run, long token_id, long *id,
			    PGresult **failed)
{
	char machine[24], commit[24], test[24], variant[24], token[24], rid[24];
	const char *params[7];
	long mid, cid, tid, vid;
	PGresult *r;

	*failed = NULL;
	params[0] = run->machine;
	if (!(mid = one_id(c, SQL_MACHINE, 1, params, failed)))
		return STORE_DB_ERROR;
	if (!(cid = store_commit(c, run->commit, run->has_sha, failed)))
		return STORE_DB_ERROR;
	params[0] = run->suite;
	params[1] = run->params;
	if (!(tid = one_id(c, SQL_TEST, 2, params, failed)))
		return STORE_DB_ERROR;
	params[0] = run->variant;
	if (!(vid = one_id(c, SQL_VARIANT, 1, params, failed)))
		return STORE_DB_ERROR;

	snprintf(machine, sizeof(machine), "%ld", mid);
	snprintf(commit, sizeof(commit), "%ld", cid);
	snprintf(test, sizeof(test), "%ld", tid);
	snprintf(variant, sizeof(variant), "%ld", vid);
	snprintf(token, sizeof(token), "%ld", token_id);
	params[0] = run->run_id;
	params[1] = machine;
	params[2] = commit;
	params[3] = test;
	params[4] = variant;
	params[5] = token_id > 0 ? token : NULL;
	params[6] = run->doc;
	r = db_exec(c, SQL_RUN, 7, params);
	if (!db_ok(r)) {
		*failed = r;
		return STORE_DB_ERROR;
	}
	if (PQntuples(r) == 0) {
		int same;
		PQclear(r);
		params[1] = run->doc;
		r = db_exec(c, SQL_RUN_SAME, 2, params);
		if (!db_ok(r) || PQntuples(r) != 1) {
			*failed = r;
			return STORE_DB_ERROR;
		}
		*id = strtol(PQgetvalue(r, 0, 0), NULL, 10);
		same = !strcmp(PQgetvalue(r, 0, 1), "t");
		PQclear(r);
		return same ? STORE_SAME : STORE_CONFLICT;
	}
	*id = strtol(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	snprintf(rid, sizeof(rid), "%ld", *id);
	if (exec_ok(c, SQL_METRICS, rid, failed) || exec_ok(c, SQL_SAMPLES, rid, failed))
		return STORE_DB_ERROR;
	params[0] = commit;
	params[1] = machine;
	params[2] = test;
	params[3] = variant;
	r = db_exec(c, SQL_QUEUE, 4, params);
	if (!db_ok(r)) {
		*failed = r;
		return STORE_DB_ERROR;
	}
	PQclear(r);
	return STORE_CREATED;
}
