/*
 * compare_load.c - one side of a comparison: its runs, then each run's
 * samples in primary-key order (one statement a run; no sorting or grouping
 * in the server), and the names of metrics no earlier side met; grouping by
 * (run, metric) is done here, as each run's rows come.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "server/reads/compare_load.h"
#include "server/db/db.h"
#include "lib/idmap.h"
#include "lib/kperf_limits.h"
#include "lib/util.h"

/* The runs, with the qualified keys ($2) left out of params and variant. */
static const char SQL_SIDE_RUNS[] =
	"SELECT r.id, m.name, t.suite, (t.params - $2::text[])::text,"
	" (v.knobs - $2::text[])::text, coalesce(r.doc->'directions', '{}')::text, r.received_at"
	" FROM run r JOIN machine m ON m.id = r.machine_id JOIN test t ON t.id = r.test_id"
	" JOIN variant v ON v.id = r.variant_id"
	" WHERE r.commit_id = ANY($1::bigint[]) AND r.valid"
	"  AND (v.knobs || t.params) @> $3::jsonb"
	"  AND ($4::text IS NULL OR t.suite = $4) AND ($5::text IS NULL OR m.name = $5)"
	"  AND ($6::jsonb IS NULL OR v.knobs - $2::text[] = $6::jsonb - $2::text[])"
	"  AND ($7::jsonb IS NULL OR t.params - $2::text[] = $7::jsonb - $2::text[])"
	" ORDER BY r.id";

/*
 * One run's samples, in primary-key order (no sort: the index gives it).
 * Its arrival time ($2) is its samples' "at": PostgreSQL plans its month's
 * partition only, and probes the index for exactly that time. One statement
 * a run, not "run_id = ANY(runs)" for the side: that one read three runs of
 * 25,000 samples in 32 ms against 3 x 5.1 ms (bitmap scan, each row checked
 * again), and needed the run and iteration sent with every value. Read by
 * index (db_prefer_index), however full the planner thinks the month is.
 */
static const char SQL_RUN_SAMPLES[] =
	"SELECT s.metric_id, s.value FROM sample s WHERE s.run_id = $1 AND s.at = $2"
	"  AND ($3::text IS NULL OR s.metric_id IN (SELECT id FROM metric WHERE name LIKE $3))"
	" ORDER BY s.metric_id, s.iteration";

/*
 * Archived runs' summaries (migration 015), read when a run has no samples:
 * its key group's rows of its month (one per metric, the month's runs in
 * arrays), for every run of the side ($2) at once, since a side's runs
 * mostly share a key group and month (3 runs: one read, not three).
 */
static const char SQL_SIDE_SUMMARIES[] =
	"SELECT s.run_id, s.metric_id, s.n::bigint, s.mean, s.m2, s.min, s.max,"
	" coalesce(s.rsum, 'NaN') FROM sample_summary s"
	" WHERE s.key_group_id = (SELECT g.id FROM run r JOIN key_group g"
	"   ON g.machine_id = r.machine_id AND g.test_id = r.test_id AND g.variant_id = r.variant_id"
	"   WHERE r.id = $1)"
	"  AND s.month = (SELECT date_trunc('month', received_at AT TIME ZONE 'UTC')::date"
	"   FROM run WHERE id = $1)"
	"  AND s.run_id = ANY($2::bigint[])"
	"  AND ($3::text IS NULL OR s.metric_id IN (SELECT id FROM metric WHERE name LIKE $3))"
	" ORDER BY s.run_id, s.metric_id";

static const char SQL_SIDE_METRICS[] =
	"SELECT id, name, coalesce(direction, '') FROM metric WHERE id = ANY($1::bigint[])"
	" ORDER BY id";
static const char SQL_SPAN_METRICS[] =
	"SELECT id, name, coalesce(direction, '') FROM metric WHERE id BETWEEN $1 AND $2"
	" ORDER BY id";

struct side_run {
	long id;
	const char *machine, *suite, *params, *variant; /* borrowed from the result */
	json_t *dirs;
};

static PGresult *side_exec(PGconn *c, const char *sql, int n, const char *const *params,
			   PGresult **failed)
{
	PGresult *r = db_exec(c, sql, n, params);
	if (!db_ok(r)) {
		*failed = r;
		return NULL;
	}
	return r;
}

static int metric_cmp(const void *a, const void *b)
{
	long x = ((const struct cmp_metric *)a)->id, y = ((const struct cmp_metric *)b)->id;
	return x < y ? -1 : x > y;
}

static const struct cmp_metric *metric_of(const struct cmp_set *set, long id)
{
	struct cmp_metric key = {.id = id};
	if (!set->nmetrics) /* no table yet: bsearch must not see NULL */
		return NULL;
	return bsearch(&key, set->metrics, set->nmetrics, sizeof(*set->metrics), metric_cmp);
}

/*
 * Metrics as every compare knows them, by id: a metric's name and direction
 * never change once it is made (no statement updates them), so they are
 * kept for the life of the process, up to LIMIT_METRIC_CACHE, and read from
 * the database once (5,000 names: ~2 ms of PostgreSQL and ~3 ms of kperfd,
 * matching the direction globs, per side of every compare before).
 */
struct known_metric {
	long id;
	char *name;
	enum direction by_name, direction;
};

static pthread_mutex_t known_lock = PTHREAD_MUTEX_INITIALIZER;
static struct idmap known; /* id -> struct known_metric */

/* Keep a metric read from the database; NULL when there is no room (or it
 * is kept already: then that one). The caller holds known_lock. */
static const struct known_metric *known_add(long id, const char *name, enum direction by_name,
					    enum direction direction)
{
	struct known_metric *m = idmap_get(&known, id);

	if (m)
		return m;
	if (known.len >= LIMIT_METRIC_CACHE)
		return NULL;
	m = xcalloc(1, sizeof(*m));
	m->id = id;
	m->name = xstrdup(name);
	m->by_name = by_name;
	m->direction = direction;
	idmap_put(&known, id, m);
	return m;
}

/* Append metric id to set's table (sorted afterwards by the caller). */
static void set_metric(struct cmp_set *set, long id, const char *name, int owned,
		       enum direction by_name, enum direction direction)
{
	struct cmp_metric *m = &set->metrics[set->nmetrics++];

	m->id = id;
	m->name = name;
	m->owned = owned;
	m->by_name = by_name;
	m->direction = direction;
}

/*
 * The names and directions of the metrics ids[0..n) (sorted, repeats
 * allowed) that the set has not met, from the kept ones, the rest read
 * from the database. Metrics made together have neighbouring ids: when the
 * wanted ones fill at least half of their span, the span is read as one
 * index range and the others skipped here (5,000 metrics: 3 ms against
 * 5.5 ms for a 5,000-id array). 0, or -1 with *failed.
 */
static int learn_metrics(PGconn *c, struct cmp_set *set, const long *ids, size_t n,
			 PGresult **failed)
{
	long *want = xcalloc(n + 1, sizeof(*want));
	struct buf list = BUF_INIT;
	char lo[24], hi[24];
	const char *params[2];
	PGresult *r;
	size_t nwant = 0, w = 0, had = set->nmetrics;
	int nm;

	set->metrics = xrealloc(set->metrics, (set->nmetrics + n + 1) * sizeof(*set->metrics));
	pthread_mutex_lock(&known_lock);
	for (size_t i = 0; i < n; i++) {
		struct cmp_metric key = {.id = ids[i]};
		const struct known_metric *k;
		if ((i && ids[i] == ids[i - 1]) || /* met before this call (sorted part) */
		    (had && bsearch(&key, set->metrics, had, sizeof(key), metric_cmp)))
			continue;
		if ((k = idmap_get(&known, ids[i])))
			set_metric(set, k->id, k->name, 0, k->by_name, k->direction);
		else
			want[nwant++] = ids[i];
	}
	pthread_mutex_unlock(&known_lock);
	if (set->nmetrics > had)
		qsort(set->metrics, set->nmetrics, sizeof(*set->metrics), metric_cmp);
	if (!nwant) {
		free(want);
		return 0;
	}
	if ((unsigned long)(want[nwant - 1] - want[0]) < 2 * nwant) {
		snprintf(lo, sizeof(lo), "%ld", want[0]);
		snprintf(hi, sizeof(hi), "%ld", want[nwant - 1]);
		params[0] = lo;
		params[1] = hi;
		r = side_exec(c, SQL_SPAN_METRICS, 2, params, failed);
	} else {
		buf_putc(&list, '{');
		for (size_t i = 0; i < nwant; i++)
			buf_printf(&list, "%s%ld", i ? "," : "", want[i]);
		buf_putc(&list, '}');
		params[0] = buf_str(&list);
		r = side_exec(c, SQL_SIDE_METRICS, 1, params, failed);
		buf_release(&list);
	}
	if (!r) {
		free(want);
		return -1;
	}
	nm = PQntuples(r);
	pthread_mutex_lock(&known_lock);
	for (int i = 0; i < nm; i++) {
		long id = strtol(PQgetvalue(r, i, 0), NULL, 10);
		const char *name = PQgetvalue(r, i, 1);
		const struct known_metric *k;
		enum direction by_name, direction;

		while (w < nwant && want[w] < id) /* both in id order */
			w++;
		if (w == nwant || want[w] != id)
			continue;
		by_name = direction_of_name(name);
		direction = direction_parse(PQgetvalue(r, i, 2), by_name);
		if ((k = known_add(id, name, by_name, direction)))
			set_metric(set, id, k->name, 0, k->by_name, k->direction);
		else /* no room: the set's own copy */
			set_metric(set, id, xstrdup(name), 1, by_name, direction);
	}
	pthread_mutex_unlock(&known_lock);
	PQclear(r);
	free(want);
	qsort(set->metrics, set->nmetrics, sizeof(*set->metrics), metric_cmp);
	return 0;
}

/*
 * Add one run's samples (metric_id, value rows in (metric, iteration)
 * order) to set's side: one cell run per metric.
 */
static void add_run(struct cmp_set *set, int side, const struct side_run *run, PGresult *r)
{
	int ns = PQntuples(r);
	double *vals = xcalloc((size_t)ns + 1, sizeof(*vals));
	const struct cmp_prefix *prefix =
		cmp_set_prefix(set, run->machine, run->suite, run->params, run->variant);

	for (int i = 0, start = 0; i < ns; i++) {
		long mid = (long)db_int8(r, i, 0);
		const struct cmp_metric *m;

		vals[i - start] = db_float8(r, i, 1);
		if (i + 1 < ns && db_int8(r, i + 1, 0) == mid)
			continue;
		if ((m = metric_of(set, mid))) {
			const char *said = json_string_value(json_object_get(run->dirs, m->name));
			struct cmp_key *k = cmp_set_key_in(
				set, prefix, m->name,
				said ? direction_parse(said, m->by_name) : m->direction);
			cmp_cell_add_run(&k->cell[side], vals, (size_t)(i + 1 - start));
		}
		start = i + 1;
	}
	free(vals);
}

/* The rows [*lo, *hi) of run id in r (SQL_SIDE_SUMMARIES, by run); 1 when
 * there are some. */
static int summary_rows(const PGresult *r, long id, int *lo, int *hi)
{
	int a = 0, b = r ? PQntuples(r) : 0;

	while (a < b) { /* the first row of a run >= id */
		int m = a + (b - a) / 2;
		if (db_int8(r, m, 0) < id)
			a = m + 1;
		else
			b = m;
	}
	*lo = *hi = a;
	while (r && *hi < PQntuples(r) && db_int8(r, *hi, 0) == id)
		(*hi)++;
	return *hi > *lo;
}

/* The same for an archived run: its rows [lo, hi) of SQL_SIDE_SUMMARIES, one per metric. */
static void add_run_summaries(struct cmp_set *set, int side, const struct side_run *run,
			      const PGresult *r, int lo, int hi)
{
	const struct cmp_prefix *prefix =
		cmp_set_prefix(set, run->machine, run->suite, run->params, run->variant);

	for (int i = lo; i < hi; i++) {
		const struct cmp_metric *m = metric_of(set, (long)db_int8(r, i, 1));
		struct stats_moments mo = {(size_t)db_int8(r, i, 2), db_float8(r, i, 3),
					   db_float8(r, i, 4), db_float8(r, i, 5),
					   db_float8(r, i, 6), db_float8(r, i, 7)};
		const char *said;
		struct cmp_key *k;

		if (!m)
			continue;
		said = json_string_value(json_object_get(run->dirs, m->name));
		k = cmp_set_key_in(set, prefix, m->name,
				   said ? direction_parse(said, m->by_name) : m->direction);
		cmp_cell_add_summary(&k->cell[side], &mo);
	}
}

/* An archived run (no samples): its summaries, from the side's read of its
 * key group and month when that has them, else read now. 0, or -1. */
static int load_archived(PGconn *c, struct cmp_set *set, int side, const struct side_run *run,
			 const char *run_id, const char *side_ids, const char *metric_like,
			 PGresult **sums, PGresult **failed)
{
	int lo, hi, bad;
	long *mids;

	if (!summary_rows(*sums, run->id, &lo, &hi)) {
		const char *p[3] = {run_id, side_ids, metric_like};
		PQclear(*sums);
		*sums = db_exec_binary(c, SQL_SIDE_SUMMARIES, 3, p);
		if (!db_ok(*sums)) {
			*failed = *sums;
			*sums = NULL;
			return -1;
		}
		summary_rows(*sums, run->id, &lo, &hi);
	}
	mids = xcalloc((size_t)(hi - lo) + 1, sizeof(*mids));
	for (int i = lo; i < hi; i++)
		mids[i - lo] = (long)db_int8(*sums, i, 1);
	bad = learn_metrics(c, set, mids, (size_t)(hi - lo), failed);
	free(mids);
	if (!bad)
		add_run_summaries(set, side, run, *sums, lo, hi);
	return bad;
}

/* The distinct metric ids of a run's samples, in order. */
static long *metric_ids(PGresult *r, size_t *n)
{
	int ns = PQntuples(r);
	long *ids = xcalloc((size_t)ns + 1, sizeof(*ids));

	*n = 0;
	for (int i = 0; i < ns; i++) {
		long mid = (long)db_int8(r, i, 0);
		if (!*n || ids[*n - 1] != mid)
			ids[(*n)++] = mid;
	}
	return ids;
}

int cmp_load_side(PGconn *c, struct cmp_set *set, int side, const struct cmp_filter *f,
		  size_t *nruns, char **run_ids, PGresult **failed)
{
	PGresult *runs = NULL, *samples = NULL, *sums = NULL;
	struct side_run *rs = NULL;
	struct buf ids = BUF_INIT;
	const char *params[7];
	int nr, indexed = 0, rc = -1;

	*failed = NULL;
	params[0] = f->commit_ids;
	params[1] = f->qual_keys ? f->qual_keys : "{}";
	params[2] = f->qual ? f->qual : "{}";
	params[3] = f->suite;
	params[4] = f->machine;
	params[5] = f->variant;
	params[6] = f->params;
	if (!(runs = side_exec(c, SQL_SIDE_RUNS, 7, params, failed)))
		goto out;
	nr = PQntuples(runs);
	rs = xcalloc((size_t)nr + 1, sizeof(*rs));
	buf_putc(&ids, '{');
	for (int i = 0; i < nr; i++) {
		rs[i].id = strtol(PQgetvalue(runs, i, 0), NULL, 10);
		rs[i].machine = PQgetvalue(runs, i, 1);
		rs[i].suite = PQgetvalue(runs, i, 2);
		rs[i].params = PQgetvalue(runs, i, 3);
		rs[i].variant = PQgetvalue(runs, i, 4);
		rs[i].dirs = json_loads(PQgetvalue(runs, i, 5), 0, NULL);
		buf_printf(&ids, "%s%ld", i ? "," : "", rs[i].id);
	}
	buf_putc(&ids, '}');
	*nruns = (size_t)nr;
	if (run_ids)
		*run_ids = xstrdup(buf_str(&ids));

	/* run by run, in id order, each as its rows come: a cell's runs are in
	 * id order, and only one run's rows are held at a time */
	db_prefer_index(c, indexed = 1);
	for (int i = 0; i < nr; i++) {
		size_t nm;
		long *mids;
		int bad;

		params[0] = PQgetvalue(runs, i, 0);
		params[1] = PQgetvalue(runs, i, 6);
		params[2] = f->metric_like;
		samples = db_exec_binary(c, SQL_RUN_SAMPLES, 3, params);
		if (db_ok(samples) && !PQntuples(samples)) { /* archived? */
			PQclear(samples);
			samples = NULL;
			if (load_archived(c, set, side, &rs[i], PQgetvalue(runs, i, 0), buf_str(&ids),
					  f->metric_like, &sums, failed))
				goto out;
			continue;
		}
		if (!db_ok(samples)) {
			*failed = samples;
			samples = NULL;
			goto out;
		}
		mids = metric_ids(samples, &nm);
		bad = learn_metrics(c, set, mids, nm, failed);
		free(mids);
		if (bad)
			goto out;
		add_run(set, side, &rs[i], samples);
		PQclear(samples);
		samples = NULL;
	}
	rc = 0;
out:
	if (indexed)
		db_prefer_index(c, 0);
	for (int i = 0; rs && rs[i].id; i++)
		json_decref(rs[i].dirs);
	free(rs);
	buf_release(&ids);
	PQclear(runs);
	PQclear(samples);
	PQclear(sums);
	return rc;
}
