/*
 * store.c - the SQL of ingest. Every statement is a constant with $n
 * parameters; JSON documents travel as parameters and PostgreSQL picks
 * their fields, so no value is ever spliced into SQL text. Per run: one
 * statement for the run and its dimensions; per transaction (which may hold
 * the runs of several requests): one for new metric names, one COPY of all
 * samples and one for the decision queue. A transaction of one run with
 * known metrics writes all of it in the run's statement (RUN_SAMPLES), sent
 * with its COMMIT. store_samples.c encodes the samples for both ways.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>

#include "lib/buf.h"
#include "server/db/db.h"
#include "lib/kperf_limits.h"
#include "lib/util.h"
#include "api/store.h"
#include "api/store_samples.h"

/* The posted machine as columns, from j (its JSON). */
#define MACHINE_COLS                                                                       \
	" j->>'name' AS name, j->>'cpu_model' AS cpu_model,"                               \
	" (j->>'nr_cpus')::numeric::int AS nr_cpus, (j->>'sockets')::numeric::int AS sockets," \
	" (j->>'memory_mb')::numeric::bigint AS memory_mb,"                                \
	" (j->>'numa_nodes')::numeric::int AS numa_nodes, coalesce(j->'info', '{}') AS info"

/* A stored machine m that the posted one (v) says nothing new about. */
#define MACHINE_HIT                                                                 \
	" m.name = v.name"                                                          \
	" AND m.cpu_model IS NOT DISTINCT FROM coalesce(v.cpu_model, m.cpu_model)"  \
	" AND m.nr_cpus IS NOT DISTINCT FROM coalesce(v.nr_cpus, m.nr_cpus)"        \
	" AND m.sockets IS NOT DISTINCT FROM coalesce(v.sockets, m.sockets)"        \
	" AND m.memory_mb IS NOT DISTINCT FROM coalesce(v.memory_mb, m.memory_mb)"  \
	" AND m.numa_nodes IS NOT DISTINCT FROM coalesce(v.numa_nodes, m.numa_nodes)" \
	" AND m.info @> v.info"

#define MACHINE_UPSERT                                                                     \
	" INSERT INTO machine AS m (name, cpu_model, nr_cpus, sockets, memory_mb,"         \
	"  numa_nodes, info) SELECT * FROM mv WHERE NOT EXISTS (SELECT 1 FROM mhit)"       \
	" ON CONFLICT (name) DO UPDATE SET cpu_model = coalesce(EXCLUDED.cpu_model, m.cpu_model)," \
	"  nr_cpus = coalesce(EXCLUDED.nr_cpus, m.nr_cpus),"                               \
	"  sockets = coalesce(EXCLUDED.sockets, m.sockets),"                               \
	"  memory_mb = coalesce(EXCLUDED.memory_mb, m.memory_mb),"                         \
	"  numa_nodes = coalesce(EXCLUDED.numa_nodes, m.numa_nodes),"                      \
	"  info = m.info || EXCLUDED.info, updated_at = now() RETURNING id"

/* The posted commit description as columns, from j. */
#define COMMIT_COLS                                                                          \
	" lower(j->>'sha') AS sha, lower(j->>'parent') AS parent_sha,"                       \
	"  j->>'subject' AS subject, j->>'author' AS author,"                                \
	"  (j->>'date')::timestamptz AS committed_at, j->>'branch' AS branch,"               \
	"  j->>'release' AS release, j->>'describe' AS describe, j->>'series' AS series,"    \
	"  substring(j->>'series' from '^(.+) v[0-9]{1,9}$') AS series_name,"                \
	"  substring(j->>'series' from ' v([0-9]{1,9})$')::int AS series_version,"           \
	"  j->>'message_id' AS message_id,"                                                  \
	"  CASE WHEN j ? 'files' THEN ARRAY(SELECT jsonb_array_elements_text(j->'files'))"   \
	"  END AS files"

#define COMMIT_HIT_SHA                                                                       \
	" c.sha = v.sha"                                                                     \
	"  AND c.parent_sha IS NOT DISTINCT FROM coalesce(v.parent_sha, c.parent_sha)"       \
	"  AND c.subject IS NOT DISTINCT FROM coalesce(v.subject, c.subject)"                \
	"  AND c.author IS NOT DISTINCT FROM coalesce(v.author, c.author)"                   \
	"  AND c.committed_at IS NOT DISTINCT FROM coalesce(v.committed_at, c.committed_at)" \
	"  AND c.branch IS NOT DISTINCT FROM coalesce(v.branch, c.branch)"                   \
	"  AND c.release IS NOT DISTINCT FROM coalesce(v.release, c.release)"                \
	"  AND c.describe IS NOT DISTINCT FROM coalesce(v.describe, c.describe)"             \
	"  AND c.series IS NOT DISTINCT FROM coalesce(v.series, c.series)"                   \
	"  AND c.message_id IS NOT DISTINCT FROM coalesce(v.message_id, c.message_id)"       \
	"  AND c.files IS NOT DISTINCT FROM coalesce(v.files, c.files)"

#define COMMIT_INSERT                                                                        \
	" INSERT INTO commits AS c (sha, parent_sha, subject, author, committed_at,"         \
	"  branch, release, describe, series, series_name, series_version, message_id, files)" \
	"  SELECT * FROM cv WHERE NOT EXISTS (SELECT 1 FROM chit)"

#define COMMIT_CONFLICT_SHA                                                                  \
	" ON CONFLICT (sha) DO UPDATE SET"                                                   \
	"  parent_sha = coalesce(EXCLUDED.parent_sha, c.parent_sha),"                        \
	"  subject = coalesce(EXCLUDED.subject, c.subject),"                                 \
	"  author = coalesce(EXCLUDED.author, c.author),"                                    \
	"  committed_at = coalesce(EXCLUDED.committed_at, c.committed_at),"                  \
	"  branch = coalesce(EXCLUDED.branch, c.branch),"                                    \
	"  release = coalesce(EXCLUDED.release, c.release),"                                 \
	"  describe = coalesce(EXCLUDED.describe, c.describe),"                              \
	"  series = coalesce(EXCLUDED.series, c.series),"                                    \
	"  series_name = coalesce(EXCLUDED.series_name, c.series_name),"                     \
	"  series_version = coalesce(EXCLUDED.series_version, c.series_version),"            \
	"  message_id = coalesce(EXCLUDED.message_id, c.message_id),"                        \
	"  files = coalesce(EXCLUDED.files, c.files) RETURNING id"

#define COMMIT_HIT_RELEASE " c.sha IS NULL AND c.release = v.release"
#define COMMIT_CONFLICT_RELEASE                                                              \
	" ON CONFLICT (release) WHERE sha IS NULL DO UPDATE SET release = EXCLUDED.release"  \
	" RETURNING id"

#define COMMIT_UPSERT(HIT, CONFLICT)                                                 \
	"WITH cv AS (SELECT" COMMIT_COLS " FROM (SELECT $1::jsonb AS j) s),"          \
	" chit AS (SELECT c.id FROM commits c, cv v WHERE" HIT "),"                   \
	" cins AS (" COMMIT_INSERT CONFLICT ")"                                       \
	" SELECT id FROM chit UNION ALL SELECT id FROM cins"

static const char SQL_COMMIT_SHA[] = COMMIT_UPSERT(COMMIT_HIT_SHA, COMMIT_CONFLICT_SHA);
static const char SQL_COMMIT_RELEASE[] =
	COMMIT_UPSERT(COMMIT_HIT_RELEASE, COMMIT_CONFLICT_RELEASE);

/*
 * A run with its four dimensions in one statement (one round trip):
 * $1 machine, $2 commit, $3 suite, $4 params, $5 variant (JSON), $6 run_id,
 * $7 token id, $8 the run document. Each dimension is read first and written
 * only when new, so concurrent collectors do not queue behind row locks.
 * Answers one row: the run's id and received_at (NULL when the run_id is
 * stored already), the dimension ids and the key group of (machine,
 * test, variant), made when new.
 */
#define RUN_INSERT(COMMIT_HIT, COMMIT_CONFLICT)                                               \
	"WITH mv AS (SELECT" MACHINE_COLS " FROM (SELECT $1::jsonb AS j) s),"                 \
	" mhit AS (SELECT m.id FROM machine m, mv v WHERE" MACHINE_HIT "),"                   \
	" mins AS (" MACHINE_UPSERT "),"                                                      \
	" cv AS (SELECT" COMMIT_COLS " FROM (SELECT $2::jsonb AS j) s),"                      \
	" chit AS (SELECT c.id FROM commits c, cv v WHERE" COMMIT_HIT "),"                    \
	" cins AS (" COMMIT_INSERT COMMIT_CONFLICT "),"                                       \
	" thit AS (SELECT id FROM test WHERE suite = $3 AND params = $4::jsonb),"             \
	" tins AS (INSERT INTO test (suite, params) SELECT $3, $4::jsonb"                     \
	"  WHERE NOT EXISTS (SELECT 1 FROM thit)"                                             \
	"  ON CONFLICT (suite, params) DO UPDATE SET suite = EXCLUDED.suite RETURNING id),"   \
	" vhit AS (SELECT id FROM variant WHERE knobs = $5::jsonb),"                          \
	" vins AS (INSERT INTO variant (knobs) SELECT $5::jsonb"                              \
	"  WHERE NOT EXISTS (SELECT 1 FROM vhit)"                                             \
	"  ON CONFLICT (knobs) DO UPDATE SET knobs = EXCLUDED.knobs RETURNING id),"           \
	" d AS (SELECT (SELECT id FROM mhit UNION ALL SELECT id FROM mins) AS machine_id,"    \
	"  (SELECT id FROM chit UNION ALL SELECT id FROM cins) AS commit_id,"                 \
	"  (SELECT id FROM thit UNION ALL SELECT id FROM tins) AS test_id,"                   \
	"  (SELECT id FROM vhit UNION ALL SELECT id FROM vins) AS variant_id),"               \
	" ghit AS (SELECT g.id FROM key_group g, d WHERE g.machine_id = d.machine_id"         \
	"  AND g.test_id = d.test_id AND g.variant_id = d.variant_id),"                       \
	" gins AS (INSERT INTO key_group (machine_id, test_id, variant_id)"                   \
	"  SELECT machine_id, test_id, variant_id FROM d WHERE NOT EXISTS (SELECT 1 FROM ghit)" \
	"  ON CONFLICT (machine_id, test_id, variant_id)"                                     \
	"  DO UPDATE SET machine_id = EXCLUDED.machine_id RETURNING id),"                     \
	" r AS (INSERT INTO run (run_id, machine_id, commit_id, test_id, variant_id, release," \
	"  started_at, duration_s, exit_status, token_id, doc)"                               \
	"  SELECT $6::text, d.machine_id, d.commit_id, d.test_id, d.variant_id,"              \
	"  x->'kernel'->>'release', (x->>'started_at')::timestamptz,"                         \
	"  (x->>'duration_s')::float8, (x->>'exit_status')::numeric::int, $7::bigint, x"      \
	"  FROM d, (SELECT $8::jsonb AS x) s"                                                 \
	"  ON CONFLICT (run_id) DO NOTHING RETURNING id, received_at)"

#define RUN_ANSWER_COLS                                                                       \
	" SELECT r.id, r.received_at, d.machine_id, d.commit_id, d.test_id, d.variant_id,"    \
	"  (SELECT id FROM ghit UNION ALL SELECT id FROM gins)"
#define RUN_ANSWER RUN_ANSWER_COLS " FROM d LEFT JOIN r ON true"

/*
 * The same with the run's samples ($9 metric ids, $10 iterations, $11
 * values, as arrays in binary: no number is written out or parsed) and its
 * decision-queue entry, written only when the run is new: a request of one
 * run whose metric ids are all known is then one statement and a COMMIT,
 * where COPY took two round trips more (and ~0.3 ms of setting up a COPY
 * for 300 rows).
 */
#define RUN_SAMPLES                                                                           \
	", s AS (INSERT INTO sample (at, run_id, metric_id, iteration, value, key_group_id)"  \
	"  SELECT r.received_at, r.id, u.m, u.i, u.v,"                                       \
	"  (SELECT id FROM ghit UNION ALL SELECT id FROM gins)"                               \
	"  FROM r, unnest($9::bigint[], $10::int[], $11::float8[]) AS u(m, i, v)),"           \
	" q AS (INSERT INTO decision_queue (commit_id, machine_id, test_id, variant_id)"      \
	"  SELECT d.commit_id, d.machine_id, d.test_id, d.variant_id FROM d, r"               \
	STORE_QUEUE_ON_CONFLICT ")"

/* RUN_SAMPLES' answer: a run_id stored already (r is empty) makes the
 * statement fail with SQLSTATE STORED_ALREADY (migration 010), so the COMMIT
 * sent with it is skipped and nothing of the re-post is committed. */
#define STORED_ALREADY "KP409"
#define RUN_ANSWER_NEW                                                                        \
	RUN_ANSWER_COLS ", CASE WHEN r.id IS NULL THEN"                                       \
	" kperf_refuse('" STORED_ALREADY "', 'run_id ' || $6 || ' is stored already') END"    \
	" FROM d LEFT JOIN r ON true"

static const char SQL_RUN_SHA[] = RUN_INSERT(COMMIT_HIT_SHA, COMMIT_CONFLICT_SHA) RUN_ANSWER;
static const char SQL_RUN_RELEASE[] =
	RUN_INSERT(COMMIT_HIT_RELEASE, COMMIT_CONFLICT_RELEASE) RUN_ANSWER;
static const char SQL_RUN_SHA_SAMPLES[] =
	RUN_INSERT(COMMIT_HIT_SHA, COMMIT_CONFLICT_SHA) RUN_SAMPLES RUN_ANSWER_NEW;
static const char SQL_RUN_RELEASE_SAMPLES[] =
	RUN_INSERT(COMMIT_HIT_RELEASE, COMMIT_CONFLICT_RELEASE) RUN_SAMPLES RUN_ANSWER_NEW;

/* Equality of jsonb ignores key order, white space and number spelling. */
static const char SQL_RUN_SAME[] = "SELECT id, doc = $2::jsonb FROM run WHERE run_id = $1";

/*
 * Ids of metric names ($1, with units $2 and directions $3 for new ones),
 * inserting the new ones in name order so concurrent transactions cannot
 * deadlock. A name committed by another transaction after this statement's
 * snapshot is missing from the answer; the caller reads it again.
 */
static const char SQL_METRICS[] =
	"WITH n AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) AS n(name, unit, dir)),"
	" ins AS (INSERT INTO metric (name, unit, direction)"
	"  SELECT name, unit, dir FROM n WHERE NOT EXISTS (SELECT 1 FROM metric m"
	"  WHERE m.name = n.name) ORDER BY name ON CONFLICT (name) DO NOTHING RETURNING id, name)"
	" SELECT id, name FROM ins UNION ALL SELECT m.id, m.name FROM metric m JOIN n USING (name)";

static const char SQL_METRICS_AGAIN[] = "SELECT id, name FROM metric WHERE name = ANY($1::text[])";

/* Ask the decision worker to (re)decide these key groups (sorted, so
 * concurrent transactions lock queue rows in one order); a run arriving while
 * the worker decides bumps version, so the entry survives for another pass.
 * $5: each run's bulk flag; a key group is bulk when all its runs are. */
static const char SQL_QUEUE[] =
	"INSERT INTO decision_queue (commit_id, machine_id, test_id, variant_id, bulk)"
	" SELECT c, m, t, v, bool_and(b) FROM unnest($1::bigint[], $2::bigint[], $3::bigint[],"
	"  $4::bigint[], $5::bool[]) AS u(c, m, t, v, b)"
	" GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4" STORE_QUEUE_ON_CONFLICT;

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

/* ---- metric ids: a process-wide cache of names known to be committed ---- */

static pthread_mutex_t metric_lock = PTHREAD_MUTEX_INITIALIZER;
static struct strmap metric_cache;

void store_publish(struct strmap *fresh)
{
	pthread_mutex_lock(&metric_lock);
	for (size_t i = 0; i < fresh->cap; i++)
		if (fresh->slots[i].key && metric_cache.len < LIMIT_METRIC_CACHE)
			strmap_put(&metric_cache, fresh->slots[i].key, fresh->slots[i].val);
	pthread_mutex_unlock(&metric_lock);
	strmap_release(fresh);
}

long store_metric_id(const struct strmap *fresh, const char *name)
{
	long id = strmap_get(fresh, name);
	if (!id) {
		pthread_mutex_lock(&metric_lock);
		id = strmap_get(&metric_cache, name);
		pthread_mutex_unlock(&metric_lock);
	}
	return id;
}

/* One element of a PostgreSQL array literal: NULL or a quoted string. */
static void array_elem(struct buf *b, const char *s)
{
	if (b->len > 1)
		buf_putc(b, ',');
	if (!s) {
		buf_puts(b, "NULL");
		return;
	}
	buf_putc(b, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			buf_putc(b, '\\');
		buf_putc(b, *s);
	}
	buf_putc(b, '"');
}

static int metrics_answer(PGresult *r, struct strmap *fresh)
{
	for (int i = 0; i < PQntuples(r); i++)
		strmap_put(fresh, PQgetvalue(r, i, 1), strtol(PQgetvalue(r, i, 0), NULL, 10));
	PQclear(r);
	return 0;
}

/* Resolve every metric name of the created runs into fresh (those not cached),
 * creating the new ones with the unit and direction of their first run. */
static int resolve_metrics(PGconn *c, struct store_item *items, size_t n, struct strmap *fresh,
			   PGresult **failed)
{
	struct buf names = {0}, units = {0}, dirs = {0};
	struct strmap asked = {0};
	const char *params[3];
	size_t nasked = 0, known = fresh->len;
	PGresult *r;
	int rc = 0;

	buf_putc(&names, '{');
	buf_putc(&units, '{');
	buf_putc(&dirs, '{');
	for (size_t i = 0; i < n; i++) {
		json_t *run = items[i].run->json, *vals;
		json_t *u = json_object_get(run, "units"), *d = json_object_get(run, "directions");
		const char *name;

		if (items[i].result != STORE_CREATED)
			continue;
		json_object_foreach(json_object_get(run, "metrics"), name, vals) {
			if (store_metric_id(fresh, name) || strmap_get(&asked, name))
				continue;
			strmap_put(&asked, name, 1);
			nasked++;
			array_elem(&names, name);
			array_elem(&units, json_string_value(json_object_get(u, name)));
			array_elem(&dirs, json_string_value(json_object_get(d, name)));
		}
	}
	buf_putc(&names, '}');
	buf_putc(&units, '}');
	buf_putc(&dirs, '}');
	params[0] = names.data;
	params[1] = units.data;
	params[2] = dirs.data;
	if (nasked) {
		r = db_exec(c, SQL_METRICS, 3, params);
		if (!db_ok(r)) {
			*failed = r;
			rc = -1;
		} else if (metrics_answer(r, fresh), fresh->len - known < nasked) {
			r = db_exec(c, SQL_METRICS_AGAIN, 1, params);
			if (!db_ok(r)) {
				*failed = r;
				rc = -1;
			} else {
				metrics_answer(r, fresh);
			}
		}
	}
	strmap_release(&asked);
	buf_release(&names);
	buf_release(&units);
	buf_release(&dirs);
	return rc;
}

static void array_id(struct buf *b, long id)
{
	buf_printf(b, "%s%ld", b->len > 1 ? "," : "", id);
}

/* Queue the created runs' keys for decisions, and COMMIT. */
static int queue_decisions(PGconn *c, struct store_item *items, size_t n, PGresult **failed)
{
	struct buf a[5] = {{0}};
	const char *params[5];
	PGresult *r;
	int any = 0;

	for (int k = 0; k < 5; k++)
		buf_putc(&a[k], '{');
	for (size_t i = 0; i < n; i++) {
		if (items[i].result != STORE_CREATED)
			continue;
		array_id(&a[0], items[i].commit);
		array_id(&a[1], items[i].machine);
		array_id(&a[2], items[i].test);
		array_id(&a[3], items[i].variant);
		buf_puts(&a[4], a[4].len > 1 ? "," : "");
		buf_putc(&a[4], items[i].bulk ? 't' : 'f');
		any = 1;
	}
	for (int k = 0; k < 5; k++) {
		buf_putc(&a[k], '}');
		params[k] = a[k].data;
	}
	if (any) { /* the COMMIT in the same round trip */
		const struct db_stmt st[2] = {{SQL_QUEUE, 5, params, 0, NULL, NULL},
					      {"COMMIT", 0, NULL, 0, NULL, NULL}};
		r = db_exec_batch(c, 2, st, 1);
	} else {
		r = db_exec(c, "COMMIT", 0, NULL);
	}
	for (int k = 0; k < 5; k++)
		buf_release(&a[k]);
	if (r && !db_ok(r)) {
		*failed = r;
		return -1;
	}
	PQclear(r);
	return 0;
}

/* Insert one run with its dimensions, after BEGIN in the same round trip
 * when begin; 0, 1 when its run_id was stored already (item->result says
 * whether with equal content), -1 on a database error. With samples
 * (RUN_SAMPLES' three arrays, begin set) its samples and queue entry too,
 * and the COMMIT in the same round trip: 0 once committed, 2 when the run_id
 * was stored already (nothing committed; the caller rolls back). */
static int insert_run(PGconn *c, struct store_item *it, int begin, const struct buf *samples,
		      PGresult **failed)
{
	const struct run_in *run = it->run;
	char token[24];
	const char *params[11] = {run->machine, run->commit, run->suite, run->params, run->variant,
				  run->run_id, NULL, run->doc};
	int lengths[11] = {0}, formats[11] = {0};
	const char *sql = run->has_sha ? SQL_RUN_SHA : SQL_RUN_RELEASE;
	int np = 8;
	PGresult *r;

	snprintf(token, sizeof(token), "%ld", it->token_id);
	params[6] = it->token_id > 0 ? token : NULL;
	if (samples) {
		sql = run->has_sha ? SQL_RUN_SHA_SAMPLES : SQL_RUN_RELEASE_SAMPLES;
		np = 11;
		for (int i = 0; i < 3; i++) {
			params[8 + i] = samples[i].data;
			lengths[8 + i] = (int)samples[i].len;
			formats[8 + i] = 1;
		}
	}
	if (begin) {
		const struct db_stmt st[3] = {{"BEGIN", 0, NULL, 0, NULL, NULL},
					      {sql, np, params, 0, lengths, formats},
					      {"COMMIT", 0, NULL, 0, NULL, NULL}};
		r = db_exec_batch(c, samples ? 3 : 2, st, 1);
	} else {
		r = db_exec(c, sql, np, params);
	}
	if (samples && !db_ok(r)) {
		const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
		if (state && !strcmp(state, STORED_ALREADY)) {
			PQclear(r);
			return 2;
		}
	}
	if (!db_ok(r) || PQntuples(r) != 1) {
		*failed = r;
		return -1;
	}
	it->machine = strtol(PQgetvalue(r, 0, 2), NULL, 10);
	it->commit = strtol(PQgetvalue(r, 0, 3), NULL, 10);
	it->test = strtol(PQgetvalue(r, 0, 4), NULL, 10);
	it->variant = strtol(PQgetvalue(r, 0, 5), NULL, 10);
	it->key_group = strtol(PQgetvalue(r, 0, 6), NULL, 10);
	if (!PQgetisnull(r, 0, 0)) {
		it->id = strtol(PQgetvalue(r, 0, 0), NULL, 10);
		snprintf(it->at, sizeof(it->at), "%s", PQgetvalue(r, 0, 1));
		it->result = STORE_CREATED;
		PQclear(r);
		return 0;
	}
	PQclear(r);
	params[0] = run->run_id;
	params[1] = run->doc;
	r = db_exec(c, SQL_RUN_SAME, 2, params);
	if (!db_ok(r) || PQntuples(r) != 1) {
		*failed = r;
		return -1;
	}
	it->id = strtol(PQgetvalue(r, 0, 0), NULL, 10);
	it->result = !strcmp(PQgetvalue(r, 0, 1), "t") ? STORE_SAME : STORE_CONFLICT;
	PQclear(r);
	return 1;
}

/* A transaction of one run whose metric ids are all known: one statement for
 * the run, its samples and its queue entry, and its COMMIT, in one round trip
 * (see RUN_SAMPLES). -1 stored, -2 a database error, 1 when the run_id was
 * stored already: rolled back, for the caller to store the general way. */
static long store_one(PGconn *c, struct store_item *it, const struct buf a[3], PGresult **failed)
{
	int rc = insert_run(c, it, 1, a, failed);

	if (rc < 0)
		return -2;
	if (rc == 2) {
		PQclear(PQexec(c, "ROLLBACK"));
		return 1;
	}
	return -1;
}

long store_runs(PGconn *c, struct store_item *items, size_t n, struct strmap *fresh,
		PGresult **failed)
{
	int any = 0;

	*failed = NULL;
	if (n == 1) {
		struct buf a[3] = {BUF_INIT, BUF_INIT, BUF_INIT};
		long rc = store_samples_arrays(items[0].run, fresh, a) ? store_one(c, items, a, failed)
								   : 1;
		for (int i = 0; i < 3; i++)
			buf_release(&a[i]);
		if (rc != 1)
			return rc;
	}
	for (size_t i = 0; i < n; i++) {
		int rc = insert_run(c, &items[i], i == 0, NULL, failed);
		if (rc < 0)
			return -2;
		if (rc == 1 && items[i].result == STORE_CONFLICT)
			return (long)i;
		any |= rc == 0;
	}
	if (!any) {
		PGresult *r = db_exec(c, "COMMIT", 0, NULL);
		if (!db_ok(r)) {
			*failed = r;
			return -2;
		}
		PQclear(r);
		return -1;
	}
	if (resolve_metrics(c, items, n, fresh, failed) ||
	    store_copy_samples(c, items, n, fresh, failed) || queue_decisions(c, items, n, failed))
		return -2;
	return -1;
}
