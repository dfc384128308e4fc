/*
 * regress.c - the decision workers. A queue entry (key group at a commit)
 * carries a version that each arriving run bumps; a worker claims a batch
 * of entries (every ready entry of up to REGRESS_BATCH_GROUPS key groups),
 * decides them in one transaction from one read of the groups
 * (regress_load.c), and deletes an entry only if the version it decided is
 * still current, so no run is missed and nothing blocks ingest. Entries
 * of small posts are claimed before a bulk import's; a second worker joins
 * while the queue is long.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/mail/alert.h"
#include "server/decide/bisect.h"
#include "server/decide/confirm.h"
#include "lib/buf.h"
#include "server/reads/commit_cache.h"
#include "server/counters.h"
#include "server/db/db.h"
#include "lib/idmap.h"
#include "server/db/migrate.h"
#include "server/decide/regress.h"
#include "server/decide/regress_claim.h"
#include "server/decide/regress_decide.h"
#include "server/decide/regress_load.h"
#include "lib/util.h"
#include "server/stats/verdict.h"

/* A regression counts as recovered when a later commit undoes 75% of it. */
#define REGRESS_RECOVERED_SHARE 0.75

/* Runs whose samples are read at once (a large group is read alone). */
#define REGRESS_CHUNK_RUNS 4096

/*
 * One worker per key group at a time, also across kperfd processes: a
 * transaction lock per group, tried (a group held elsewhere waits in the
 * queue). With the groups' names.
 */
static const char SQL_LOCK[] =
	"WITH l AS MATERIALIZED (SELECT id FROM unnest($1::int[]) AS u(id)"
	"  WHERE pg_try_advisory_xact_lock(hashtext('kperf.decide'), id))"
	" SELECT g.id, m.name, t.suite, t.params::text, v.knobs::text FROM l"
	" JOIN key_group g ON g.id = l.id JOIN machine m ON m.id = g.machine_id"
	" JOIN test t ON t.id = g.test_id JOIN variant v ON v.id = g.variant_id ORDER BY 1";

static const char SQL_UPSERT[] =
	"INSERT INTO decision AS d (machine_id, test_id, variant_id, metric_id, commit_id,"
	" base_commit_id, base_kind, direction, base_n, base_runs, base_mean, base_stddev_pct,"
	" target_n, target_runs, target_mean, target_stddev_pct, change_pct, change_abs, absolute,"
	" p_value, ci_lo_pct, ci_hi_pct, test_used, lkp_changed, verdict, kpi, role, kpi_rank,"
	" role_checked, command_differs)"
	" SELECT x.machine_id, x.test_id, x.variant_id, x.metric_id, x.commit_id, x.base_commit_id,"
	" x.base_kind, x.direction, x.base_n, x.base_runs, x.base_mean,"
	" x.base_stddev_pct, x.target_n, x.target_runs, x.target_mean, x.target_stddev_pct,"
	" x.change_pct, x.change_abs, x.absolute, x.p_value, x.ci_lo_pct, x.ci_hi_pct,"
	" x.test_used, x.lkp_changed, x.verdict, x.kpi, x.role, x.kpi_rank, true, x.command_differs"
	" FROM jsonb_to_recordset($1::jsonb) AS x(machine_id bigint, test_id bigint,"
	"  variant_id bigint, metric_id bigint, commit_id bigint, base_commit_id bigint,"
	"  base_kind text, direction text, base_n int,"
	"  base_runs int, base_mean float8, base_stddev_pct float8, target_n int, target_runs int,"
	"  target_mean float8, target_stddev_pct float8, change_pct float8, change_abs float8,"
	"  absolute bool, p_value float8, ci_lo_pct float8, ci_hi_pct float8, test_used text,"
	"  lkp_changed bool, verdict text, kpi bool, role text, kpi_rank smallint,"
	"  command_differs text)"
	" ON CONFLICT (machine_id, test_id, variant_id, metric_id, commit_id) DO UPDATE SET"
	" base_commit_id = EXCLUDED.base_commit_id, base_kind = EXCLUDED.base_kind,"
	" direction = EXCLUDED.direction, base_n = EXCLUDED.base_n, base_runs = EXCLUDED.base_runs,"
	" base_mean = EXCLUDED.base_mean, base_stddev_pct = EXCLUDED.base_stddev_pct,"
	" target_n = EXCLUDED.target_n, target_runs = EXCLUDED.target_runs,"
	" target_mean = EXCLUDED.target_mean, target_stddev_pct = EXCLUDED.target_stddev_pct,"
	" change_pct = EXCLUDED.change_pct, change_abs = EXCLUDED.change_abs,"
	" absolute = EXCLUDED.absolute, p_value = EXCLUDED.p_value,"
	" ci_lo_pct = EXCLUDED.ci_lo_pct, ci_hi_pct = EXCLUDED.ci_hi_pct,"
	" test_used = EXCLUDED.test_used, lkp_changed = EXCLUDED.lkp_changed,"
	" verdict = EXCLUDED.verdict, kpi = EXCLUDED.kpi, role = EXCLUDED.role,"
	" kpi_rank = EXCLUDED.kpi_rank, role_checked = true,"
	" command_differs = EXCLUDED.command_differs,"
	" decided_at = now()";

/* Open regressions of each decided (group, commit) $1-$4 at older commits,
 * by the pair's index $5; read after the batch's decisions are stored. */
static const char SQL_OPEN[] =
	"SELECT x.i, d.id, d.metric_id, d.base_mean, d.target_mean"
	" FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::int[])"
	"  AS x(m, t, v, c, i)"
	" JOIN commits cc ON cc.id = x.c"
	" JOIN decision d ON d.machine_id = x.m AND d.test_id = x.t AND d.variant_id = x.v"
	"  AND d.commit_id <> x.c AND d.verdict = 'regression' AND d.recovered_by IS NULL"
	" JOIN commits rc ON rc.id = d.commit_id"
	" WHERE coalesce(cc.committed_at, cc.created_at) > coalesce(rc.committed_at, rc.created_at)"
	" ORDER BY x.i, d.id";

static const char SQL_RECOVERED[] =
	"WITH u AS (UPDATE decision d SET recovered_by = x.by, updated_at = now()"
	"  FROM unnest($1::bigint[], $2::bigint[]) AS x(id, by) WHERE d.id = x.id"
	"  RETURNING d.machine_id, d.test_id, d.variant_id, d.commit_id)"
	" SELECT DISTINCT machine_id, test_id, variant_id, commit_id FROM u ORDER BY 4, 1, 2, 3";

static const char SQL_CP_DELETE[] =
	"DELETE FROM change_point c USING unnest($1::bigint[], $2::bigint[], $3::bigint[])"
	"  AS x(m, t, v) WHERE c.machine_id = x.m AND c.test_id = x.t AND c.variant_id = x.v";

static const char SQL_CP_INSERT[] =
	"INSERT INTO change_point (machine_id, test_id, variant_id, metric_id, commit_id,"
	" prev_commit_id, shift_pct, ci_lo_pct, ci_hi_pct, p_value)"
	" SELECT x.machine_id, x.test_id, x.variant_id, x.metric_id, x.commit_id, x.prev_commit_id,"
	" x.shift_pct, x.ci_lo_pct, x.ci_hi_pct, x.p_value FROM jsonb_to_recordset($1::jsonb) AS"
	" x(machine_id bigint, test_id bigint, variant_id bigint, metric_id bigint, commit_id bigint,"
	"  prev_commit_id bigint, shift_pct float8, ci_lo_pct float8, ci_hi_pct float8,"
	"  p_value float8)";

/*
 * Decided: gone, unless a run bumped its version meanwhile. The rows are
 * locked first in ingest's order (commit, machine, test, variant: see
 * store.c's SQL_QUEUE), or an ingest transaction holding one and waiting
 * for another deadlocks with this statement.
 */
static const char SQL_DONE[] =
	"WITH x AS (SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[],"
	"  $5::bigint[]) AS x(c, m, t, v, ver)),"
	" l AS MATERIALIZED (SELECT q.commit_id, q.machine_id, q.test_id, q.variant_id, x.ver"
	"  FROM decision_queue q JOIN x ON q.commit_id = x.c AND q.machine_id = x.m"
	"  AND q.test_id = x.t AND q.variant_id = x.v ORDER BY 1, 2, 3, 4 FOR UPDATE OF q)"
	" DELETE FROM decision_queue q USING l WHERE q.commit_id = l.commit_id"
	" AND q.machine_id = l.machine_id AND q.test_id = l.test_id AND q.variant_id = l.variant_id"
	" AND q.version = l.ver";

/* Back to the queue: after a pass with runs still arriving ($5 true: decide
 * again once they settle, as the stream rule says), or not taken (false:
 * its place kept). Locked in ingest's order, as above. */
static const char SQL_RELEASE[] =
	"WITH l AS MATERIALIZED (SELECT q.commit_id, q.machine_id, q.test_id, q.variant_id"
	"  FROM decision_queue q JOIN unnest($1::bigint[], $2::bigint[], $3::bigint[],"
	"  $4::bigint[]) AS x(c, m, t, v) ON q.commit_id = x.c AND q.machine_id = x.m"
	"  AND q.test_id = x.t AND q.variant_id = x.v ORDER BY 1, 2, 3, 4 FOR UPDATE OF q)"
	" UPDATE decision_queue q SET claimed_at = NULL,"
	" queued_at = CASE WHEN $5::bool THEN now() ELSE q.queued_at END FROM l"
	" WHERE q.commit_id = l.commit_id AND q.machine_id = l.machine_id"
	" AND q.test_id = l.test_id AND q.variant_id = l.variant_id";

static struct verdict_config vcfg;
static double alert_settle_s = 120;
static atomic_ulong passes; /* (group, commit) pairs decided */

/* One claimed queue entry. */
struct entry {
	long commit, machine, test, variant, version, key_group; /* key_group 0: none */
	int held; /* its group is this batch's */
};

struct batch {
	struct entry *e;
	size_t ne;
	struct rl_group *groups; /* held, by key_group */
	size_t ngroups;
	struct rd_pair *pairs; /* by group, commit date */
	size_t npairs;
	PGresult *names;         /* SQL_LOCK's, borrowed by groups */
	struct commit_gen *gen;
	struct buf rows, cps;    /* JSON arrays being built */
};

/* A bigint[] literal of n longs, taken with stride from base. */
static void ids_array(struct buf *b, const void *base, size_t n, size_t stride)
{
	buf_putc(b, '{');
	for (size_t i = 0; i < n; i++)
		buf_printf(b, "%s%ld", i ? "," : "",
			   *(const long *)((const char *)base + i * stride));
	buf_putc(b, '}');
}

static int key_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->key_group != y->key_group)
		return x->key_group < y->key_group ? -1 : 1;
	return x->commit < y->commit ? -1 : x->commit > y->commit;
}

static struct rl_group *group_of(struct batch *bt, long key_group)
{
	size_t lo = 0, hi = bt->ngroups;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (bt->groups[mid].key_group < key_group)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < bt->ngroups && bt->groups[lo].key_group == key_group ? &bt->groups[lo] : NULL;
}

/* ---- a batch: claim, read, decide, write, give the entries back ---- */

static void batch_release(struct batch *bt)
{
	for (size_t i = 0; i < bt->ngroups; i++)
		rl_group_release(&bt->groups[i]);
	for (size_t i = 0; i < bt->npairs; i++)
		rd_pair_release(&bt->pairs[i]);
	free(bt->groups);
	free(bt->pairs);
	free(bt->e);
	if (bt->gen)
		commit_cache_put(bt->gen);
	PQclear(bt->names);
	buf_release(&bt->rows);
	buf_release(&bt->cps);
}

/* The claimed entries from the claim's rows, sorted by group and commit. */
static void read_entries(struct batch *bt, const PGresult *r)
{
	bt->ne = (size_t)PQntuples(r);
	bt->e = xcalloc(bt->ne + 1, sizeof(*bt->e));
	for (size_t i = 0; i < bt->ne; i++) {
		struct entry *e = &bt->e[i];
		e->commit = strtol(PQgetvalue(r, (int)i, 0), NULL, 10);
		e->machine = strtol(PQgetvalue(r, (int)i, 1), NULL, 10);
		e->test = strtol(PQgetvalue(r, (int)i, 2), NULL, 10);
		e->variant = strtol(PQgetvalue(r, (int)i, 3), NULL, 10);
		e->version = strtol(PQgetvalue(r, (int)i, 4), NULL, 10);
		e->key_group = strtol(PQgetvalue(r, (int)i, 5), NULL, 10); /* NULL: "" -> 0 */
	}
	qsort(bt->e, bt->ne, sizeof(*bt->e), key_cmp);
}

/* Entries as the bigint[] literals of RL_SQL_PLAN, SQL_DONE and SQL_RELEASE:
 * those whose held flag is held (all when held < 0). */
static void entry_arrays(const struct batch *bt, int held, struct buf a[6])
{
	for (int k = 0; k < 6; k++)
		buf_putc(&a[k], '{');
	for (size_t i = 0; i < bt->ne; i++) {
		const struct entry *e = &bt->e[i];
		const long v[6] = {e->commit, e->machine, e->test, e->variant, e->version,
				   e->key_group};
		if (held >= 0 && e->held != held)
			continue;
		for (int k = 0; k < 6; k++) {
			if (a[k].len > 1)
				buf_putc(&a[k], ',');
			if (k == 5 && !v[k])
				buf_puts(&a[k], "NULL");
			else
				buf_printf(&a[k], "%ld", v[k]);
		}
	}
	for (int k = 0; k < 6; k++)
		buf_putc(&a[k], '}');
}

static void arrays_release(struct buf *a, int n)
{
	for (int k = 0; k < n; k++)
		buf_release(&a[k]);
}

/* The held groups (from SQL_LOCK's rows) and the pairs to decide (from
 * RL_SQL_PLAN's). */
static void read_plan(struct batch *bt, PGresult *names, const PGresult *plan)
{
	int ng = PQntuples(names), np = PQntuples(plan);

	bt->names = names;
	bt->groups = xcalloc((size_t)ng + 1, sizeof(*bt->groups));
	for (int i = 0; i < ng; i++) {
		struct rl_group *g = &bt->groups[bt->ngroups++];
		g->key_group = strtol(PQgetvalue(names, i, 0), NULL, 10);
		g->mname = PQgetvalue(names, i, 1);
		g->suite = PQgetvalue(names, i, 2);
		g->params = PQgetvalue(names, i, 3);
		g->knobs = PQgetvalue(names, i, 4);
	}
	for (size_t i = 0; i < bt->ne; i++) {
		struct entry *e = &bt->e[i];
		struct rl_group *g = e->key_group ? group_of(bt, e->key_group) : NULL;
		e->held = g || !e->key_group; /* no key group: no runs, nothing to decide */
		if (g) {
			g->machine = e->machine;
			g->test = e->test;
			g->variant = e->variant;
		}
	}
	for (size_t i = 0; i < bt->ngroups; i++) {
		struct rl_group *g = &bt->groups[i];
		snprintf(g->ids[0], sizeof(g->ids[0]), "%ld", g->machine);
		snprintf(g->ids[1], sizeof(g->ids[1]), "%ld", g->test);
		snprintf(g->ids[2], sizeof(g->ids[2]), "%ld", g->variant);
	}
	bt->pairs = xcalloc((size_t)np + 1, sizeof(*bt->pairs));
	for (int i = 0; i < np; i++) {
		struct rl_group *g = group_of(bt, strtol(PQgetvalue(plan, i, 0), NULL, 10));
		struct rd_pair *p = &bt->pairs[bt->npairs];
		if (!g) /* a group held by another worker */
			continue;
		p->g = g;
		p->x = strtol(PQgetvalue(plan, i, 1), NULL, 10);
		p->base = strtol(PQgetvalue(plan, i, 2), NULL, 10);
		snprintf(p->kind, sizeof(p->kind), "%s", PQgetvalue(plan, i, 3));
		bt->npairs++;
	}
}

/*
 * What to read of the samples: a group's when a pair of it has runs on both
 * sides, or when its history is long enough for change points (else, as
 * before, its samples are not read: an ingest streaming runs of one commit
 * would have them read again every two seconds); and the "directions" of
 * the pairs' runs.
 */
static void want_samples(struct batch *bt)
{
	for (size_t i = 0; i < bt->ngroups; i++)
		bt->groups[i].want_samples = bt->groups[i].ncommits >= REGRESS_CP_COMMITS;
	for (size_t i = 0; i < bt->npairs; i++) {
		struct rl_group *g = bt->pairs[i].g;
		if (rl_commit_index(g, bt->pairs[i].x) == (size_t)-1 ||
		    rl_commit_index(g, bt->pairs[i].base) == (size_t)-1)
			continue; /* no decision: a side without runs */
		g->want_samples = 1;
		for (size_t r = 0; r < g->nruns; r++)
			if (g->runs[r].commit == bt->pairs[i].x || g->runs[r].commit == bt->pairs[i].base)
				g->runs[r].want_dirs = 1;
	}
}

/*
 * BEGIN, take the groups, and read what to decide, the commit epoch and
 * every run of the groups: one round trip. 0, or -1 (logged).
 */
static int batch_begin(PGconn *c, struct batch *bt)
{
	struct buf kg = BUF_INIT, a[6] = {BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT};
	const char *pk[1], *pp[6];
	char depth[16];
	PGresult *r[5] = {0}, *failed = NULL;
	const char *what[5] = {"begin", "taking key groups", "planning decisions",
			       "reading the commit epoch", "reading runs"};
	int rc = 0;

	buf_putc(&kg, '{');
	for (size_t i = 0; i < bt->ne; i++)
		if (bt->e[i].key_group && (!i || bt->e[i].key_group != bt->e[i - 1].key_group))
			buf_printf(&kg, "%s%ld", kg.len > 1 ? "," : "", bt->e[i].key_group);
	buf_putc(&kg, '}');
	pk[0] = buf_str(&kg);
	entry_arrays(bt, -1, a);
	pp[0] = a[0].data;
	pp[1] = a[1].data;
	pp[2] = a[2].data;
	pp[3] = a[3].data;
	pp[4] = a[5].data;
	snprintf(depth, sizeof(depth), "%ld", lab_policy.ancestor_depth);
	pp[5] = depth;
	{
		const struct db_stmt st[5] = {{"BEGIN", 0, NULL, 0, NULL, NULL},
					      {SQL_LOCK, 1, pk, 0, NULL, NULL},
					      {RL_SQL_PLAN, 6, pp, 0, NULL, NULL},
					      {COMMIT_CACHE_SQL_EPOCH, 0, NULL, 1, NULL, NULL},
					      {RL_SQL_RUNS, 1, pk, 1, NULL, NULL}};
		if (db_pipeline_send(c, 5, st)) {
			log_error("sending a decision batch failed: %s", PQerrorMessage(c));
			rc = -1;
			goto out;
		}
	}
	for (int i = 0; i < 5; i++)
		r[i] = db_pipeline_next(c);
	db_pipeline_end(c);
	for (int i = 0; i < 5; i++)
		if (!db_ok(r[i])) { /* the first to fail (the others were aborted) */
			db_log_error(what[i], c, r[i]);
			rc = -1;
			goto out;
		}
	read_plan(bt, r[1], r[2]);
	r[1] = NULL; /* the groups' names, kept by bt */
	bt->gen = commit_cache_take(PQntuples(r[3]) ? db_int8(r[3], 0, 0) : -1);
	if (rl_runs(c, bt->gen, bt->groups, bt->ngroups, r[4], &failed)) {
		db_log_error("reading commits", c, failed);
		PQclear(failed);
		rc = -1;
		goto out;
	}
	want_samples(bt);
out:
	for (int i = 0; i < 5; i++)
		PQclear(r[i]);
	buf_release(&kg);
	arrays_release(a, 6);
	return rc;
}

/* Read the groups' samples a few at a time, decide their pairs and find
 * their change points; each group's read is freed once used. */
static int batch_decide(PGconn *c, struct batch *bt)
{
	size_t first = 0, pi = 0;

	buf_putc(&bt->rows, '[');
	buf_putc(&bt->cps, '[');
	while (first < bt->ngroups) {
		size_t end = first, runs = 0;
		PGresult *failed = NULL;

		while (end < bt->ngroups &&
		       (runs == 0 || runs + bt->groups[end].nruns <= REGRESS_CHUNK_RUNS)) {
			if (bt->groups[end].want_samples)
				runs += bt->groups[end].nruns;
			end++;
		}
		if (rl_samples(c, bt->groups + first, end - first, &failed)) {
			db_log_error("reading samples", c, failed);
			PQclear(failed);
			return -1;
		}
		for (; pi < bt->npairs && bt->pairs[pi].g < bt->groups + end; pi++)
			if (rd_decide(&bt->pairs[pi], &vcfg, &bt->rows))
				atomic_fetch_add(&passes, 1);
		for (size_t i = first; i < end; i++) {
			rd_change_points(&bt->groups[i], &bt->cps);
			rl_group_release(&bt->groups[i]);
		}
		first = end;
	}
	buf_putc(&bt->rows, ']');
	buf_putc(&bt->cps, ']');
	return 0;
}

static int alert_pair(PGconn *c, const char *m, const char *t, const char *v, long commit)
{
	char id[24];
	snprintf(id, sizeof(id), "%ld", commit);
	return alert_enqueue(c, m, t, v, id, alert_settle_s);
}

static int pair_by_commit(const void *a, const void *b)
{
	const struct rd_pair *x = *(const struct rd_pair *const *)a, *y = *(const struct rd_pair *const *)b;
	if (x->x != y->x)
		return x->x < y->x ? -1 : 1;
	return x->g->key_group < y->g->key_group ? -1 : x->g->key_group > y->g->key_group;
}

/*
 * Regressions the batch's commits undo: an older open regression of the
 * group is recovered by the first of them (in commit order) whose level
 * comes back 75% of the way. Its subscribers get a follow-up.
 */
static int mark_recoveries(PGconn *c, struct batch *bt, const PGresult *open)
{
	struct buf ids = BUF_INIT, by = BUF_INIT;
	struct idmap marked = {0};
	int rc = 0;

	buf_putc(&ids, '{');
	buf_putc(&by, '{');
	for (int i = 0; i < PQntuples(open); i++) {
		const struct rd_pair *p = &bt->pairs[strtol(PQgetvalue(open, i, 0), NULL, 10)];
		long id = strtol(PQgetvalue(open, i, 1), NULL, 10);
		long metric = strtol(PQgetvalue(open, i, 2), NULL, 10);
		double before = strtod(PQgetvalue(open, i, 3), NULL);
		double after = strtod(PQgetvalue(open, i, 4), NULL);
		double need = after + REGRESS_RECOVERED_SHARE * (before - after);

		if (idmap_get(&marked, id))
			continue;
		for (size_t k = 0; k < p->ntm; k++) {
			double now = p->tm_means[k];
			if (p->tm_ids[k] != metric)
				continue;
			if ((before > after && now >= need) || (before < after && now <= need)) {
				idmap_put(&marked, id, (void *)p);
				buf_printf(&ids, "%s%ld", ids.len > 1 ? "," : "", id);
				buf_printf(&by, "%s%ld", by.len > 1 ? "," : "", p->x);
			}
			break;
		}
	}
	buf_putc(&ids, '}');
	buf_putc(&by, '}');
	if (ids.len > 2) {
		const char *params[2] = {ids.data, by.data};
		PGresult *u = db_exec(c, SQL_RECOVERED, 2, params);
		if (!db_ok(u)) {
			db_log_error("marking recoveries", c, u);
			rc = -1;
		}
		for (int i = 0; !rc && i < PQntuples(u); i++)
			rc = alert_enqueue(c, PQgetvalue(u, i, 0), PQgetvalue(u, i, 1),
					   PQgetvalue(u, i, 2), PQgetvalue(u, i, 3), alert_settle_s);
		PQclear(u);
	}
	idmap_release(&marked);
	buf_release(&ids);
	buf_release(&by);
	return rc;
}

/*
 * Store the decisions, mark recoveries, queue the alerts (commit by commit,
 * so two workers lock the outbox's rows in one order), replace the groups'
 * change points, and COMMIT. 0, or -1 (logged).
 */
static int batch_write(PGconn *c, struct batch *bt)
{
	struct buf a[5] = {BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT}, g3[3] = {BUF_INIT,
		    BUF_INIT, BUF_INIT};
	const struct rd_pair **order = xcalloc(bt->npairs + 1, sizeof(*order));
	const char *pu[1], *po[5], *pd[3], *pc[1];
	PGresult *r[3] = {0};
	size_t nd = 0;
	int rc = -1;

	for (int k = 0; k < 5; k++)
		buf_putc(&a[k], '{');
	for (size_t i = 0; i < bt->npairs; i++) {
		const struct rd_pair *p = &bt->pairs[i];
		if (!p->decided)
			continue;
		order[nd++] = p;
		buf_printf(&a[0], "%s%ld", a[0].len > 1 ? "," : "", p->g->machine);
		buf_printf(&a[1], "%s%ld", a[1].len > 1 ? "," : "", p->g->test);
		buf_printf(&a[2], "%s%ld", a[2].len > 1 ? "," : "", p->g->variant);
		buf_printf(&a[3], "%s%ld", a[3].len > 1 ? "," : "", p->x);
		buf_printf(&a[4], "%s%zu", a[4].len > 1 ? "," : "", i);
	}
	for (int k = 0; k < 5; k++) {
		buf_putc(&a[k], '}');
		po[k] = a[k].data;
	}
	if (nd) {
		const struct db_stmt st[2] = {{SQL_UPSERT, 1, pu, 0, NULL, NULL},
					      {SQL_OPEN, 5, po, 0, NULL, NULL}};
		pu[0] = buf_str(&bt->rows);
		if (db_pipeline_send(c, 2, st)) {
			log_error("storing decisions failed: %s", PQerrorMessage(c));
			goto out;
		}
		r[0] = db_pipeline_next(c);
		r[1] = db_pipeline_next(c);
		db_pipeline_end(c);
		if (!db_ok(r[0]) || !db_ok(r[1])) {
			db_log_error(db_ok(r[0]) ? "reading open regressions" : "storing decisions", c,
				     db_ok(r[0]) ? r[1] : r[0]);
			goto out;
		}
		if (mark_recoveries(c, bt, r[1]))
			goto out;
		qsort(order, nd, sizeof(*order), pair_by_commit);
		/* confirmation runs asked for, bisections started: the batch at once */
		if (confirm_after_decide(c, po[0], po[1], po[2], po[3]))
			goto out;
		for (size_t i = 0; i < nd; i++) {
			const struct rl_group *g = order[i]->g;
			if (alert_pair(c, g->ids[0], g->ids[1], g->ids[2], order[i]->x))
				goto out;
		}
	}
	ids_array(&g3[0], &bt->groups[0].machine, bt->ngroups, sizeof(*bt->groups));
	ids_array(&g3[1], &bt->groups[0].test, bt->ngroups, sizeof(*bt->groups));
	ids_array(&g3[2], &bt->groups[0].variant, bt->ngroups, sizeof(*bt->groups));
	for (int k = 0; k < 3; k++)
		pd[k] = g3[k].data;
	pc[0] = buf_str(&bt->cps);
	{
		const struct db_stmt st[3] = {{SQL_CP_DELETE, 3, pd, 0, NULL, NULL},
					      {SQL_CP_INSERT, 1, pc, 0, NULL, NULL},
					      {"COMMIT", 0, NULL, 0, NULL, NULL}};
		PGresult *x = db_exec_batch(c, 3, st, 2);
		if (!db_ok(x)) {
			db_log_error("storing change points", c, x);
			PQclear(x);
			goto out;
		}
		PQclear(x);
	}
	rc = 0;
out:
	for (int i = 0; i < 3; i++)
		PQclear(r[i]);
	free(order);
	arrays_release(a, 5);
	arrays_release(g3, 3);
	return rc;
}

/*
 * After COMMIT (or ROLLBACK): the decided entries leave the queue unless a
 * run bumped their version meanwhile (then they are decided again once
 * their runs settle); entries of groups another worker held keep their
 * place. ok 0: nothing was decided, everything goes back.
 */
static void batch_finish(PGconn *c, struct batch *bt, int ok)
{
	struct buf d[6] = {BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT};
	struct buf u[6] = {BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT};
	const char *pd[5], *pr[5], *pu[5];
	PGresult *x;

	entry_arrays(bt, ok ? 1 : -1, d);
	entry_arrays(bt, 0, u);
	for (int k = 0; k < 4; k++) {
		pd[k] = pr[k] = d[k].data;
		pu[k] = u[k].data;
	}
	pd[4] = d[4].data;
	pr[4] = "true";
	pu[4] = "false";
	{
		const struct db_stmt st[3] = {{SQL_DONE, 5, pd, 0, NULL, NULL},
					      {SQL_RELEASE, 5, pr, 0, NULL, NULL},
					      {SQL_RELEASE, 5, pu, 0, NULL, NULL}};
		/* nothing decided: all back, on a connection reopened if it broke
		 * (db_exec retries once outside a transaction) */
		x = ok ? db_exec_batch(c, 3, st, 2) : db_exec(c, SQL_RELEASE, 5, pr);
	}
	if (!db_ok(x))
		db_log_error("giving back queue entries", c, x);
	PQclear(x);
	arrays_release(d, 6);
	arrays_release(u, 6);
}

int regress_step(PGconn *c)
{
	const struct batch zero = {0};
	struct batch bt = zero;
	PGresult *r = regress_claim(c);
	size_t held = 0;
	int rc;

	if (!r)
		return -1;
	read_entries(&bt, r);
	PQclear(r);
	if (!bt.ne) {
		batch_release(&bt);
		return 0;
	}
	rc = batch_begin(c, &bt);
	if (!rc && !(rc = batch_decide(c, &bt)))
		rc = batch_write(c, &bt);
	if (rc && PQstatus(c) == CONNECTION_OK && PQtransactionStatus(c) != PQTRANS_IDLE)
		PQclear(PQexec(c, "ROLLBACK"));
	batch_finish(c, &bt, !rc);
	for (size_t i = 0; i < bt.ne; i++)
		held += bt.e[i].held;
	batch_release(&bt);
	if (rc)
		return -1;
	return (int)held;
}

int regress_configure(const char *floors, char *err, size_t errlen)
{
	return verdict_config_parse(&vcfg, floors, err, errlen);
}

void regress_settle(double settle_s)
{
	alert_settle_s = settle_s;
}

void regress_release(void)
{
	verdict_config_release(&vcfg);
}

unsigned long regress_passes(void)
{
	return atomic_load(&passes);
}
