/*
 * regress_load.c - a batch's key groups read for the decision worker: the
 * runs of all groups in one statement, their commits from the commit cache
 * (commit_cache.c) and ordered as trend.c orders them (commit_order.c), the
 * samples of all groups in one statement from the key-group index (and the
 * summaries of their archived runs, which stand in for their samples),
 * metric names from a process-wide table. One read serves a group's decisions,
 * their history noise and its change points.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "server/reads/commit_order.h"
#include "server/db/db.h"
#include "lib/idmap.h"
#include "lib/kperf_limits.h"
#include "server/decide/regress_load.h"
#include "lib/command.h"
#include "lib/util.h"

const char RL_SQL_RUNS[] =
	"SELECT r.id, r.commit_id, r.received_at, g.id::bigint, r.command FROM key_group g"
	" JOIN run r ON r.machine_id = g.machine_id AND r.test_id = g.test_id"
	"  AND r.variant_id = g.variant_id"
	" WHERE g.id = ANY($1::int[]) AND r.valid ORDER BY 4, 1";

/*
 * Every sample of the groups, from the key-group index (migration 008), in
 * (group, metric, run, iteration) order. Samples of invalid runs are read
 * too; runs not in the groups' lists (invalid, or committed since they were
 * read) are left out here. Read with sequential scans off: a month's
 * partition filled since its last ANALYZE looks empty to the planner.
 */
static const char SQL_SAMPLES[] =
	"SELECT s.key_group_id::bigint, s.metric_id, s.run_id, s.value FROM sample s"
	" WHERE s.key_group_id = ANY($1::int[])"
	" ORDER BY s.key_group_id, s.metric_id, s.run_id, s.iteration";
/* One group: its index ranges in order, values from the index, no sort (a
 * group of a million samples read alone, as its chunk). */
static const char SQL_SAMPLES_ONE[] =
	"SELECT s.key_group_id::bigint, s.metric_id, s.run_id, s.value FROM sample s"
	" WHERE s.key_group_id = ($1::int[])[1]"
	" ORDER BY s.metric_id, s.run_id, s.iteration";

/*
 * The summaries of the groups' archived runs (migration 015: a month's
 * samples summarised per run and metric, then detached), in (group, metric,
 * run) order. Read after the samples, in the same pipeline: a read
 * straddling an archive's commit meets a run's samples and its summary, and
 * keeps the samples.
 */
static const char SQL_SUMMARIES[] =
	"SELECT s.key_group_id::bigint, s.metric_id, s.run_id, s.n::bigint, s.mean, s.m2,"
	" s.min, s.max, coalesce(s.rsum, 'NaN') FROM sample_summary s"
	" WHERE s.key_group_id = ANY($1::int[]) ORDER BY 1, 2, 3";

/* Moved by every archive and restore (migration 015). */
static const char SQL_ARCHIVE_EPOCH[] = "SELECT n FROM archive_epoch";

/* Only the runs of decided commits and their bases: a run's "directions"
 * win over its metric's, and reading them decompresses its document. */
static const char SQL_DIRECTIONS[] =
	"SELECT id, (doc->'directions')::text FROM run WHERE id = ANY($1::bigint[])"
	" AND doc ? 'directions'";

static const char SQL_METRICS[] =
	"SELECT id, name, coalesce(direction, '') FROM metric WHERE id = ANY($1::bigint[])";

/* ---- metric names and directions: they never change once made ---- */

struct known {
	char *name;
	enum direction by_name, direction;
};

static pthread_mutex_t known_lock = PTHREAD_MUTEX_INITIALIZER;
static struct idmap known; /* id -> struct known */

static int run_cmp(const void *a, const void *b)
{
	long x = ((const struct rl_run *)a)->id, y = ((const struct rl_run *)b)->id;
	return x < y ? -1 : x > y;
}

static int long_cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return x < y ? -1 : x > y;
}

static struct rl_run *run_find(const struct rl_group *g, long id)
{
	struct rl_run key = {.id = id};
	if (!g->nruns)
		return NULL;
	return bsearch(&key, g->runs, g->nruns, sizeof(*g->runs), run_cmp);
}

size_t rl_commit_index(const struct rl_group *g, long id)
{
	size_t lo = 0, hi = g->ncommits;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (g->commits[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < g->ncommits && g->commits[lo].id == id ? lo : (size_t)-1;
}

/* The commits of g's runs by id, with their newest run and count. */
static void group_commits(struct rl_group *g)
{
	long *ids = xcalloc(g->nruns + 1, sizeof(*ids));
	size_t n = 0;

	for (size_t i = 0; i < g->nruns; i++)
		ids[i] = g->runs[i].commit;
	qsort(ids, g->nruns, sizeof(*ids), long_cmp);
	g->commits = xcalloc(g->nruns + 1, sizeof(*g->commits));
	for (size_t i = 0; i < g->nruns; i++)
		if (!n || g->commits[n - 1].id != ids[i])
			g->commits[n++].id = ids[i];
	g->ncommits = n;
	free(ids);
	for (size_t i = 0; i < g->nruns; i++) {
		struct rl_run *r = &g->runs[i];
		struct rl_commit *k = &g->commits[rl_commit_index(g, r->commit)];
		r->commit_idx = (size_t)(k - g->commits);
		k->nruns++;
		if (r->id > k->last_run)
			k->last_run = r->id;
	}
}

/* Drop the runs (and commits) whose commit is gone: trend.c does the same. */
static void drop_orphans(struct rl_group *g)
{
	size_t nr = 0, nc = 0, *map = xcalloc(g->ncommits + 1, sizeof(*map));

	for (size_t k = 0; k < g->ncommits; k++) {
		map[k] = g->commits[k].info ? nc : (size_t)-1;
		if (g->commits[k].info)
			g->commits[nc++] = g->commits[k];
	}
	for (size_t i = 0; i < g->nruns; i++) {
		if (map[g->runs[i].commit_idx] == (size_t)-1)
			continue;
		g->runs[nr] = g->runs[i];
		g->runs[nr++].commit_idx = map[g->runs[i].commit_idx];
	}
	g->nruns = nr;
	g->ncommits = nc;
	free(map);
}

/*
 * Each commit's rank in commit order, as trend.c's order_commits gives it:
 * nodes in commit id order, a commit's time its commit date, else the first
 * arrival of its runs.
 */
static void rank_commits(struct rl_group *g)
{
	struct commit_node *nodes = xcalloc(g->ncommits + 1, sizeof(*nodes));
	double *first = xcalloc(g->ncommits + 1, sizeof(*first));

	for (size_t k = 0; k < g->ncommits; k++)
		first[k] = -1;
	for (size_t i = 0; i < g->nruns; i++) {
		double t = (double)g->runs[i].received / 1e6;
		size_t k = g->runs[i].commit_idx;
		if (first[k] < 0 || t < first[k])
			first[k] = t;
	}
	for (size_t k = 0; k < g->ncommits; k++) {
		const struct commit_info *ci = g->commits[k].info;
		nodes[k].sha = ci->sha;
		nodes[k].parent = ci->parent;
		nodes[k].when = ci->has_date ? (double)ci->committed / 1e6 : first[k];
		nodes[k].index = k;
	}
	commit_order(nodes, g->ncommits);
	for (size_t r = 0; r < g->ncommits; r++)
		g->commits[nodes[r].index].rank = r;
	free(first);
	free(nodes);
}

/* The commits of every group from gen, reading the ones it lacks by id. */
static int find_commits(PGconn *c, struct commit_gen *gen, struct rl_group *groups, size_t n,
			PGresult **failed)
{
	size_t total = 0, k = 0;
	long *ids;
	const struct commit_info **info;

	for (size_t i = 0; i < n; i++)
		total += groups[i].ncommits;
	ids = xcalloc(total + 1, sizeof(*ids));
	info = xcalloc(total + 1, sizeof(*info));
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < groups[i].ncommits; j++)
			ids[k++] = groups[i].commits[j].id;
	if (commit_cache_fill(c, gen, ids, total, info, failed) < 0) {
		free(ids);
		free(info);
		return -1;
	}
	k = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < groups[i].ncommits; j++)
			groups[i].commits[j].info = info[k++];
	free(ids);
	free(info);
	return 0;
}

int rl_runs(PGconn *c, struct commit_gen *gen, struct rl_group *groups, size_t n,
	    const PGresult *runs, PGresult **failed)
{
	int nr = PQntuples(runs);
	size_t gi = 0;

	for (int i = 0; i < nr;) {
		long kg = (long)db_int8(runs, i, 3);
		int j = i;

		while (j < nr && db_int8(runs, j, 3) == kg)
			j++;
		while (gi < n && groups[gi].key_group < kg)
			gi++;
		if (gi < n && groups[gi].key_group == kg) {
			struct rl_group *g = &groups[gi];
			g->runs = xcalloc((size_t)(j - i) + 1, sizeof(*g->runs));
			for (int k = i; k < j; k++) {
				struct rl_run *r = &g->runs[g->nruns++];
				r->id = (long)db_int8(runs, k, 0);
				r->commit = (long)db_int8(runs, k, 1);
				r->received = db_int8(runs, k, 2);
				if (!PQgetisnull(runs, k, 4)) {
					struct buf w = BUF_INIT, cmd = BUF_INIT;
					buf_append(&cmd, PQgetvalue(runs, k, 4),
						   (size_t)PQgetlength(runs, k, 4));
					command_work_args(buf_str(&cmd), &w);
					r->work = xstrdup(buf_str(&w));
					buf_release(&w);
					buf_release(&cmd);
				}
			}
		}
		i = j;
	}
	for (size_t i = 0; i < n; i++)
		group_commits(&groups[i]);
	if (find_commits(c, gen, groups, n, failed))
		return -1;
	for (size_t i = 0; i < n; i++) {
		drop_orphans(&groups[i]);
		rank_commits(&groups[i]);
	}
	return 0;
}


/* A metric's name and directions, from the process-wide table or from r
 * (rows of SQL_METRICS sorted by id in byid) as g's own copy. 0 when the
 * metric is not known (not in the table, not in r). */
static int metric_set(struct rl_group *g, struct rl_metric *m, const PGresult *r, const int *byid,
		      int nrows)
{
	const struct known *k;
	int lo = 0, hi = nrows;

	pthread_mutex_lock(&known_lock);
	k = idmap_get(&known, m->id);
	if (k) {
		m->name = k->name;
		m->by_name = k->by_name;
		m->direction = k->direction;
	}
	pthread_mutex_unlock(&known_lock);
	if (k)
		return 1;
	while (lo < hi) { /* rows by id */
		int mid = lo + (hi - lo) / 2;
		if (strtol(PQgetvalue(r, byid[mid], 0), NULL, 10) < m->id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == nrows || strtol(PQgetvalue(r, byid[lo], 0), NULL, 10) != m->id)
		return 0;
	g->owned_names = xrealloc(g->owned_names, (g->nowned + 1) * sizeof(*g->owned_names));
	m->name = g->owned_names[g->nowned++] = xstrdup(PQgetvalue(r, byid[lo], 1));
	m->by_name = direction_of_name(m->name);
	m->direction = direction_parse(PQgetvalue(r, byid[lo], 2), m->by_name);
	return 1;
}

static const PGresult *sort_rows; /* for row_cmp; under known_lock */

static int row_cmp(const void *a, const void *b)
{
	long x = strtol(PQgetvalue(sort_rows, *(const int *)a, 0), NULL, 10);
	long y = strtol(PQgetvalue(sort_rows, *(const int *)b, 0), NULL, 10);
	return x < y ? -1 : x > y;
}

/* Name every metric of the groups: the process-wide table first, the
 * unknown ones read in one statement and kept while the table has room. */
static int name_metrics(PGconn *c, struct rl_group *groups, size_t n, PGresult **failed)
{
	struct buf a = BUF_INIT;
	const char *params[1];
	PGresult *r = NULL;
	int *byid = NULL, nrows = 0, nwant = 0;

	buf_putc(&a, '{');
	pthread_mutex_lock(&known_lock);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < groups[i].nmetrics; j++)
			if (!idmap_get(&known, groups[i].metrics[j].id))
				buf_printf(&a, "%s%ld", nwant++ ? "," : "", groups[i].metrics[j].id);
	pthread_mutex_unlock(&known_lock);
	buf_putc(&a, '}');
	if (nwant) {
		params[0] = buf_str(&a);
		r = db_exec(c, SQL_METRICS, 1, params);
		if (!db_ok(r)) {
			*failed = r;
			buf_release(&a);
			return -1;
		}
		nrows = PQntuples(r);
		byid = xcalloc((size_t)nrows + 1, sizeof(*byid));
		for (int i = 0; i < nrows; i++)
			byid[i] = i;
		pthread_mutex_lock(&known_lock);
		sort_rows = r;
		qsort(byid, (size_t)nrows, sizeof(*byid), row_cmp);
		sort_rows = NULL;
		for (int i = 0; i < nrows && known.len < LIMIT_METRIC_CACHE; i++) {
			long id = strtol(PQgetvalue(r, i, 0), NULL, 10);
			struct known *k;
			if (idmap_get(&known, id))
				continue;
			k = xcalloc(1, sizeof(*k));
			k->name = xstrdup(PQgetvalue(r, i, 1));
			k->by_name = direction_of_name(k->name);
			k->direction = direction_parse(PQgetvalue(r, i, 2), k->by_name);
			idmap_put(&known, id, k);
		}
		pthread_mutex_unlock(&known_lock);
	}
	for (size_t i = 0; i < n; i++) {
		struct rl_group *g = &groups[i];
		size_t kept = 0;
		for (size_t j = 0; j < g->nmetrics; j++) {
			if (metric_set(g, &g->metrics[j], r, byid, nrows))
				g->metrics[kept++] = g->metrics[j];
			else /* not in the metric table: no key, as compare_load.c */
				free(g->metrics[j].segs);
		}
		g->nmetrics = kept;
	}
	free(byid);
	PQclear(r);
	buf_release(&a);
	return 0;
}

/* Cut the rows [from, to) of one group (by metric, run, iteration) into
 * its metrics and their runs' segments: counted first, then filled. */
static void group_samples(struct rl_group *g, const PGresult *r, int from, int to)
{
	size_t nvals = 0, nm = 0;
	size_t *segs = NULL;
	long last_m = 0, last_r = 0;

	for (int pass = 0; pass < 2; pass++) {
		struct rl_metric *m = NULL;
		last_m = last_r = 0;
		for (int i = from; i < to; i++) {
			long mid = (long)db_int8(r, i, 1), rid = (long)db_int8(r, i, 2);
			const struct rl_run *run = run_find(g, rid);

			if (!run) /* invalid, or committed after the runs were read */
				continue;
			if (mid != last_m) {
				if (pass == 0) {
					segs = xrealloc(segs, (nm + 1) * sizeof(*segs));
					segs[nm++] = 0;
				} else {
					m = &g->metrics[g->nmetrics++];
					m->id = mid;
					m->segs = xcalloc(segs[g->nmetrics - 1] + 1, sizeof(*m->segs));
				}
				last_m = mid;
				last_r = 0;
			}
			if (rid != last_r) { /* a new run of this metric */
				if (pass == 0)
					segs[nm - 1]++;
				else
					m->segs[m->nsegs++] =
						(struct rl_seg){(size_t)(run - g->runs), nvals, 0, NULL};
				last_r = rid;
			}
			if (pass == 1) {
				g->vals[nvals] = db_float8(r, i, 3);
				m->segs[m->nsegs - 1].n++;
			}
			nvals++;
		}
		if (pass == 0) {
			g->metrics = xcalloc(nm + 1, sizeof(*g->metrics));
			g->vals = xcalloc(nvals + 1, sizeof(*g->vals));
			nvals = 0;
		}
	}
	free(segs);
}

static int seg_cmp(const void *a, const void *b)
{
	size_t x = ((const struct rl_seg *)a)->run, y = ((const struct rl_seg *)b)->run;
	return x < y ? -1 : x > y;
}

/*
 * Join the summaries [from, to) of rows of SQL_SUMMARIES (one group's, by
 * metric and run) to its metrics as segments of no values: metrics only
 * archived runs have are added, and a summary of a run whose samples were
 * read too (a read straddling an archive) is left out. Metrics stay by id,
 * their segments by run.
 */
static void group_summaries(struct rl_group *g, const PGresult *r, int from, int to)
{
	size_t nm = 0, ni = 0, j = 0;
	struct rl_metric *ms = xcalloc(g->nmetrics + (size_t)(to - from) + 1, sizeof(*ms));

	g->summaries = xcalloc((size_t)(to - from) + 1, sizeof(*g->summaries));
	for (int i = from; i <= to;) {
		long mid = i < to ? (long)db_int8(r, i, 1) : 0;
		int e = i;
		struct rl_metric *m;
		size_t have;

		/* the metrics of samples alone, before this one */
		while (j < g->nmetrics && (i == to || g->metrics[j].id < mid))
			ms[nm++] = g->metrics[j++];
		if (i == to)
			break;
		while (e < to && db_int8(r, e, 1) == mid)
			e++;
		if (j < g->nmetrics && g->metrics[j].id == mid) {
			ms[nm] = g->metrics[j++];
		} else {
			memset(&ms[nm], 0, sizeof(ms[nm]));
			ms[nm].id = mid;
		}
		m = &ms[nm++];
		have = m->nsegs;
		m->segs = xrealloc(m->segs, (have + (size_t)(e - i) + 1) * sizeof(*m->segs));
		for (int k = i; k < e; k++) {
			const struct rl_run *run = run_find(g, (long)db_int8(r, k, 2));
			struct stats_moments *a = &g->summaries[ni];
			size_t ri, lo = 0, hi = have;

			if (!run) /* invalid, or committed after the runs were read */
				continue;
			ri = (size_t)(run - g->runs);
			while (lo < hi) { /* its samples read too? (segments by run) */
				size_t mi = lo + (hi - lo) / 2;
				if (m->segs[mi].run < ri)
					lo = mi + 1;
				else
					hi = mi;
			}
			if (lo < have && m->segs[lo].run == ri)
				continue;
			a->n = (size_t)db_int8(r, k, 3);
			a->mean = db_float8(r, k, 4);
			a->m2 = db_float8(r, k, 5);
			a->min = db_float8(r, k, 6);
			a->max = db_float8(r, k, 7);
			a->rsum = db_float8(r, k, 8);
			if (!a->n)
				continue;
			ni++;
			m->segs[m->nsegs++] = (struct rl_seg){ri, 0, 0, a};
		}
		if (m->nsegs > have)
			qsort(m->segs, m->nsegs, sizeof(*m->segs), seg_cmp);
		if (!m->nsegs) { /* none of its runs is the group's */
			free(m->segs);
			nm--;
		}
		i = e;
	}
	g->nsummaries = ni;
	free(g->metrics);
	g->metrics = ms;
	g->nmetrics = nm;
}

/* The "directions" of the runs marked want_dirs, from rows (id, text). */
static void group_directions(struct rl_group *groups, size_t n, const PGresult *r)
{
	for (int i = 0; i < PQntuples(r); i++) {
		long id = strtol(PQgetvalue(r, i, 0), NULL, 10);
		for (size_t k = 0; k < n; k++) {
			struct rl_run *run = run_find(&groups[k], id);
			if (run) {
				json_decref(run->dirs);
				run->dirs = json_loads(PQgetvalue(r, i, 1), 0, NULL);
				break;
			}
		}
	}
}

/* Hand each wanted group of groups[0..n) (by key_group) its rows of r
 * (ordered by key group, its first column). */
static void by_group(struct rl_group *groups, size_t n, const PGresult *r,
		     void (*take)(struct rl_group *, const PGresult *, int, int))
{
	int nr = PQntuples(r);

	for (int i = 0, gi = 0; i < nr;) {
		long id = (long)db_int8(r, i, 0);
		int j = i;
		while (j < nr && db_int8(r, j, 0) == id)
			j++;
		while ((size_t)gi < n && groups[gi].key_group < id)
			gi++;
		if ((size_t)gi < n && groups[gi].key_group == id && groups[gi].want_samples)
			take(&groups[gi], r, i, j);
		i = j;
	}
}

int rl_samples(PGconn *c, struct rl_group *groups, size_t n, PGresult **failed)
{
	struct buf kg = BUF_INIT, runs = BUF_INIT;
	const char *p1[1], *p2[1];
	struct db_stmt st[7];
	PGresult *r[7] = {0};
	int rc = 0;

	size_t nwant = 0;

	buf_putc(&kg, '{');
	buf_putc(&runs, '{');
	for (size_t i = 0; i < n; i++) {
		if (!groups[i].want_samples)
			continue;
		buf_printf(&kg, "%s%ld", nwant++ ? "," : "", groups[i].key_group);
		for (size_t j = 0; j < groups[i].nruns; j++)
			if (groups[i].runs[j].want_dirs)
				buf_printf(&runs, "%s%ld", runs.len > 1 ? "," : "", groups[i].runs[j].id);
	}
	buf_putc(&kg, '}');
	buf_putc(&runs, '}');
	if (!nwant)
		goto out;
	p1[0] = buf_str(&kg);
	p2[0] = buf_str(&runs);
	st[0] = db_prefer_index_stmt(1);
	st[1] = (struct db_stmt){SQL_ARCHIVE_EPOCH, 0, NULL, 0, NULL, NULL};
	st[2] = (struct db_stmt){nwant == 1 ? SQL_SAMPLES_ONE : SQL_SAMPLES, 1, p1, 1, NULL, NULL};
	st[3] = (struct db_stmt){SQL_SUMMARIES, 1, p1, 1, NULL, NULL};
	st[4] = (struct db_stmt){SQL_ARCHIVE_EPOCH, 0, NULL, 0, NULL, NULL};
	st[5] = db_prefer_index_stmt(0);
	st[6] = (struct db_stmt){SQL_DIRECTIONS, 1, p2, 0, NULL, NULL};
	/* each statement sees the commits before it: an archive or restore
	 * committed between the samples and the summaries would hide a month
	 * or show it twice; the epoch around them says so, and they are read
	 * again */
	for (int attempt = 0;; attempt++) {
		if (db_pipeline_send(c, 7, st)) {
			*failed = PQmakeEmptyPGresult(c, PGRES_FATAL_ERROR);
			rc = -1;
			goto out;
		}
		for (int i = 0; i < 7; i++)
			r[i] = db_pipeline_next(c);
		db_pipeline_end(c);
		for (int i = 0; i < 7 && !rc; i++)
			if (!db_ok(r[i])) { /* the first to fail (the others were aborted) */
				*failed = r[i];
				r[i] = NULL;
				rc = -1;
			}
		if (rc)
			goto out;
		if (!strcmp(PQgetvalue(r[1], 0, 0), PQgetvalue(r[4], 0, 0)) || attempt == 4)
			break;
		for (int i = 0; i < 7; i++) {
			PQclear(r[i]);
			r[i] = NULL;
		}
	}
	by_group(groups, n, r[2], group_samples);
	by_group(groups, n, r[3], group_summaries);
	group_directions(groups, n, r[6]);
	rc = name_metrics(c, groups, n, failed);
out:
	for (int i = 0; i < 7; i++)
		PQclear(r[i]);
	buf_release(&kg);
	buf_release(&runs);
	return rc;
}

void rl_group_release(struct rl_group *g)
{
	for (size_t i = 0; i < g->nruns; i++) {
		json_decref(g->runs[i].dirs);
		free(g->runs[i].work);
	}
	for (size_t i = 0; i < g->nmetrics; i++)
		free(g->metrics[i].segs);
	for (size_t i = 0; i < g->nowned; i++)
		free(g->owned_names[i]);
	free(g->owned_names);
	free(g->metrics);
	free(g->vals);
	free(g->summaries);
	free(g->commits);
	free(g->runs);
	g->runs = NULL;
	g->commits = NULL;
	g->metrics = NULL;
	g->vals = NULL;
	g->summaries = NULL;
	g->owned_names = NULL;
	g->nruns = g->ncommits = g->nmetrics = g->nowned = g->nsummaries = 0;
}
