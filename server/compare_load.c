/*
 * compare_load.c - one side of a comparison, read in three statements: its
 * runs, their samples in primary-key order (no sorting or grouping in the
 * server), and the names of metrics no earlier side met; grouping by (run,
 * metric) is done here.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "compare_load.h"
#include "db.h"
#include "util.h"

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
 * In primary-key order as the plan reads them; the loader checks and sorts
 * when not (no ORDER BY: sorting 75,000 rows cost the server ~15 ms). The
 * runs' arrival times ($3) let PostgreSQL keep only their months' partitions
 * when it plans, instead of planning all of them for a pruning at run time
 * (a join with run on (id, received_at) did: ~2 ms of planning a side). Read
 * by index (db_exec_indexed), however full the planner thinks the month is.
 */
static const char SQL_SIDE_SAMPLES[] =
	"SELECT s.run_id, s.metric_id, s.iteration, s.value FROM sample s"
	" WHERE s.run_id = ANY($1::bigint[]) AND s.at = ANY($3::timestamptz[])"
	"  AND ($2::text IS NULL OR s.metric_id IN (SELECT id FROM metric WHERE name LIKE $2))";

static const char SQL_SIDE_METRICS[] =
	"SELECT id, name, coalesce(direction, '') FROM metric WHERE id = ANY($1::bigint[])"
	" ORDER BY id";

struct side_run {
	long id;
	const char *machine, *suite, *params, *variant; /* borrowed from the result */
	json_t *dirs;
};

static int run_cmp(const void *a, const void *b)
{
	long x = ((const struct side_run *)a)->id, y = ((const struct side_run *)b)->id;
	return x < y ? -1 : x > y;
}

struct row {
	long run, metric;
	int iteration;
	double value;
};

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->run != y->run)
		return x->run < y->run ? -1 : 1;
	if (x->metric != y->metric)
		return x->metric < y->metric ? -1 : 1;
	return (x->iteration > y->iteration) - (x->iteration < y->iteration);
}

static int long_cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return x < y ? -1 : x > y;
}

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
 * Read the names and directions of the metrics ids[0..n) (sorted, repeats
 * allowed) that no side met before: the sides of a compare mostly share
 * their metrics, so the targets seldom read any. 0, or -1 with *failed.
 */
static int learn_metrics(PGconn *c, struct cmp_set *set, const long *ids, size_t n,
			 PGresult **failed)
{
	struct buf want = BUF_INIT;
	const char *params[1];
	PGresult *r;
	size_t nwant = 0;
	int nm;

	buf_putc(&want, '{');
	for (size_t i = 0; i < n; i++)
		if ((!i || ids[i] != ids[i - 1]) && !metric_of(set, ids[i]))
			buf_printf(&want, "%s%ld", nwant++ ? "," : "", ids[i]);
	buf_putc(&want, '}');
	if (!nwant) {
		buf_release(&want);
		return 0;
	}
	params[0] = buf_str(&want);
	r = side_exec(c, SQL_SIDE_METRICS, 1, params, failed);
	buf_release(&want);
	if (!r)
		return -1;
	nm = PQntuples(r);
	set->metrics =
		xrealloc(set->metrics, (set->nmetrics + (size_t)nm + 1) * sizeof(*set->metrics));
	for (int i = 0; i < nm; i++) {
		struct cmp_metric *m = &set->metrics[set->nmetrics++];
		m->id = strtol(PQgetvalue(r, i, 0), NULL, 10);
		m->name = xstrdup(PQgetvalue(r, i, 1));
		m->by_name = direction_of_name(m->name);
		m->direction = direction_parse(PQgetvalue(r, i, 2), m->by_name);
	}
	PQclear(r);
	qsort(set->metrics, set->nmetrics, sizeof(*set->metrics), metric_cmp);
	return 0;
}

int cmp_load_side(PGconn *c, struct cmp_set *set, int side, const struct cmp_filter *f,
		  size_t *nruns, char **run_ids, PGresult **failed)
{
	PGresult *runs = NULL, *samples = NULL;
	struct side_run *rs = NULL;
	long *mids = NULL;
	size_t nm_ids = 0;
	struct row *rows = NULL;
	int sorted = 1;
	double *vals = NULL;
	size_t nvals = 0, cap = 0;
	struct buf ids = BUF_INIT, ats = BUF_INIT;
	const char *params[7];
	int nr, ns, rc = -1;

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
	buf_putc(&ats, '{');
	for (int i = 0; i < nr; i++) {
		rs[i].id = strtol(PQgetvalue(runs, i, 0), NULL, 10);
		rs[i].machine = PQgetvalue(runs, i, 1);
		rs[i].suite = PQgetvalue(runs, i, 2);
		rs[i].params = PQgetvalue(runs, i, 3);
		rs[i].variant = PQgetvalue(runs, i, 4);
		rs[i].dirs = json_loads(PQgetvalue(runs, i, 5), 0, NULL);
		buf_printf(&ids, "%s%ld", i ? "," : "", rs[i].id);
		buf_printf(&ats, "%s\"%s\"", i ? "," : "", PQgetvalue(runs, i, 6));
	}
	buf_putc(&ids, '}');
	buf_putc(&ats, '}');
	*nruns = (size_t)nr;
	if (run_ids)
		*run_ids = xstrdup(buf_str(&ids));
	params[0] = buf_str(&ids);
	params[1] = f->metric_like;
	params[2] = buf_str(&ats);
	samples = db_exec_indexed(c, SQL_SIDE_SAMPLES, 3, params);
	if (!db_ok(samples)) {
		*failed = samples;
		samples = NULL;
		goto out;
	}
	ns = PQntuples(samples);
	rows = xcalloc((size_t)ns + 1, sizeof(*rows));
	for (int i = 0; i < ns; i++) {
		rows[i] = (struct row){db_int8(samples, i, 0), db_int8(samples, i, 1),
				       (int)db_int4(samples, i, 2), db_float8(samples, i, 3)};
		sorted &= !i || row_cmp(&rows[i - 1], &rows[i]) < 0;
	}
	if (!sorted)
		qsort(rows, (size_t)ns, sizeof(*rows), row_cmp);
	PQclear(samples);
	samples = NULL;
	/* the metrics met, each once, by id (a run's iterations of a metric are
	 * adjacent: only the first of them is sorted) */
	mids = xcalloc((size_t)ns + 1, sizeof(*mids));
	for (int i = 0; i < ns; i++)
		if (!i || rows[i].metric != rows[i - 1].metric || rows[i].run != rows[i - 1].run)
			mids[nm_ids++] = rows[i].metric;
	qsort(mids, nm_ids, sizeof(*mids), long_cmp);
	if (learn_metrics(c, set, mids, nm_ids, failed))
		goto out;

	/* rows come in (run, metric, iteration) order: one group per run and metric */
	for (int i = 0; i < ns; i++) {
		long run_id = rows[i].run, mid = rows[i].metric;
		if (nvals == cap) {
			cap = cap ? cap * 2 : 64;
			vals = xrealloc(vals, cap * sizeof(double));
		}
		vals[nvals++] = rows[i].value;
		if (i + 1 < ns && rows[i + 1].run == run_id && rows[i + 1].metric == mid)
			continue;
		{
			struct side_run key = {run_id, 0, 0, 0, 0, NULL};
			const struct side_run *run = bsearch(&key, rs, (size_t)nr, sizeof(*rs), run_cmp);
			const struct cmp_metric *m = metric_of(set, mid);
			if (run && m) {
				const char *said = json_string_value(json_object_get(run->dirs, m->name));
				struct cmp_key *k;

				k = cmp_set_key(set, run->machine, run->suite, run->params, run->variant,
						m->name,
						said ? direction_parse(said, m->by_name) : m->direction);
				cmp_cell_add_run(&k->cell[side], vals, nvals);
			}
		}
		nvals = 0;
	}
	rc = 0;
out:
	for (int i = 0; rs && rs[i].id; i++)
		json_decref(rs[i].dirs);
	free(rs);
	free(mids);
	free(rows);
	free(vals);
	buf_release(&ids);
	buf_release(&ats);
	PQclear(runs);
	PQclear(samples);
	return rc;
}

