/*
 * compare_sides.c - the reads and the arithmetic of one comparison: each
 * side's samples (cmp_load_side; the targets on a second connection while
 * the request's thread reads the base), the environments of the sides'
 * runs and their differences, and the rows, on two threads when many.
 */
#include <pthread.h>
#include <stdlib.h>

#include "server/counters.h"
#include "server/db/db.h"
#include "server/reads/compare_sides.h"
#include "lib/util.h"

/* What a side's runs were, besides the kernel: config, cmdline, knobs, and the
 * machine facts as each run reported them. Each run's document is read (and
 * decompressed) once, its metrics dropped: reading "doc->'kernel'" and
 * "doc->'machine'" apart decompressed it four times, 5.0 ms a side of three
 * runs against 1.7 ms. */
static const char SQL_ENV[] =
	"WITH r AS MATERIALIZED (SELECT variant_id, d->'kernel' AS kernel, d->'machine' AS machine"
	"  FROM (SELECT variant_id, doc - 'metrics' AS d FROM run WHERE id = ANY($1::bigint[])"
	"  OFFSET 0) x)"
	" SELECT jsonb_build_object("
	" 'config', (SELECT coalesce(jsonb_object_agg(k, vals), '{}') FROM (SELECT e.key AS k,"
	"   jsonb_agg(DISTINCT e.value) AS vals FROM r, jsonb_each(r.kernel->'config') e"
	"   GROUP BY e.key) x),"
	" 'cmdline', (SELECT jsonb_build_object('cmdline', coalesce(jsonb_agg(DISTINCT"
	"   r.kernel->'cmdline') FILTER (WHERE r.kernel ? 'cmdline'), '[]')) FROM r),"
	" 'variant', (SELECT coalesce(jsonb_object_agg(k, vals), '{}') FROM (SELECT e.key AS k,"
	"   jsonb_agg(DISTINCT e.value) AS vals FROM r JOIN variant v ON v.id = r.variant_id,"
	"   jsonb_each(v.knobs) e GROUP BY e.key) x),"
	" 'machine', (SELECT coalesce(jsonb_object_agg(k, vals), '{}') FROM (SELECT e.key AS k,"
	"   jsonb_agg(DISTINCT e.value) AS vals FROM r, jsonb_each(r.machine) e"
	"   GROUP BY e.key) x))::text";

/* Load side into set; 0, or -1 with *failed (logged) and the HTTP status. */
static int load_side(PGconn *c, struct cmp_set *set, int side, const struct cmp_filter *f,
		     size_t *runs, char **run_ids, int *status)
{
	PGresult *failed = NULL;
	int rc = cmp_load_side(c, set, side, f, &runs[side], &run_ids[side], &failed);

	if (rc) {
		*status = db_http_status(c, failed);
		db_log_error("loading samples", c, failed);
	}
	PQclear(failed);
	return rc;
}

/*
 * The targets, read by a helper thread on a connection of its own into a
 * set of their own while the request's thread reads the base, then merged:
 * reading a side is a statement at a time, so one side alone keeps neither
 * PostgreSQL nor kperfd busy. When the pool has no connection to spare,
 * the helper does nothing and the targets are read after the base.
 */
struct targets_job {
	int nsides;
	const struct cmp_filter *f;
	size_t *runs;
	char **run_ids;
	struct cmp_set set;
	int done, status; /* done: read (status 0) or failed (its HTTP status) */
	int reading;      /* the request reads a standby: so does the helper */
};

static void *load_targets(void *arg)
{
	struct targets_job *j = arg;
	PGconn *c;

	db_reading(j->reading, NULL);
	c = db_try_get();

	if (c) {
		j->done = 1;
		for (int i = 1; i < j->nsides && !j->status; i++)
			if (load_side(c, &j->set, i, &j->f[i], j->runs, j->run_ids, &j->status) &&
			    !j->status)
				j->status = 500;
	}
	db_release();
	return NULL;
}

/* Move the target cells of every key of from into set. */
static void merge_targets(struct cmp_set *set, int nsides, struct cmp_set *from)
{
	for (size_t i = 0; i < from->nkeys; i++) {
		struct cmp_key *k = from->keys[i];
		struct cmp_key *to = cmp_set_key(set, k->machine, k->suite, k->params, k->variant,
						 k->metric, k->direction);
		for (int s = 1; s < nsides; s++) {
			struct cmp_cell empty = to->cell[s];
			to->cell[s] = k->cell[s];
			k->cell[s] = empty;
		}
	}
}

int cmp_load_sides(PGconn *c, struct cmp_set *set, int nsides, const struct cmp_filter *f,
		   size_t *runs, char **run_ids, int *status)
{
	struct targets_job j = {nsides, f, runs, run_ids, {0}, 0, 0, db_reading_now()};
	pthread_t helper;
	int helped, rc = -1;

	*status = 0;
	cmp_set_init(&j.set, (size_t)nsides);
	helped = pthread_create(&helper, NULL, load_targets, &j) == 0;
	if (load_side(c, set, 0, &f[0], runs, run_ids, status))
		goto out;
	if (helped)
		pthread_join(helper, NULL);
	helped = 0;
	if (j.done && j.status) {
		*status = j.status;
		goto out;
	}
	if (j.done) {
		merge_targets(set, nsides, &j.set);
		counters.compare_reads_helper++;
	} else {
		for (int i = 1; i < nsides; i++)
			if (load_side(c, set, i, &f[i], runs, run_ids, status))
				goto out;
		counters.compare_reads_request++;
	}
	rc = 0;
out:
	if (helped)
		pthread_join(helper, NULL);
	cmp_set_release(&j.set);
	return rc;
}

int cmp_load_env(PGconn *c, int nsides, char *const *run_ids, json_t **env, PGresult **failed)
{
	for (int s = 0; s < nsides; s++) {
		const char *params[1] = {run_ids[s]};
		PGresult *r = db_exec(c, SQL_ENV, 1, params);
		if (!db_ok(r) || PQntuples(r) != 1) {
			*failed = r;
			return -1;
		}
		env[s] = json_loads(PQgetvalue(r, 0, 0), 0, NULL);
		PQclear(r);
		if (!env[s])
			env[s] = json_object();
	}
	return 0;
}

void cmp_env_diff(json_t *const *env, int nsides, cmp_env_diff_fn put, void *arg)
{
	static const char *const kinds[] = {"config", "cmdline", "variant", "machine"};

	for (int t = 1; t < nsides; t++) {
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
			json_t *bk = json_object_get(env[0], kinds[i]);
			json_t *tk = json_object_get(env[t], kinds[i]);
			json_t *keys = json_object();
			const char *key;
			json_t *v;

			json_object_foreach(bk, key, v)
				json_object_set(keys, key, json_true());
			json_object_foreach(tk, key, v)
				json_object_set(keys, key, json_true());
			json_object_foreach(keys, key, v) {
				json_t *bv = json_object_get(bk, key), *tv = json_object_get(tk, key);
				json_t *empty = json_array();
				if (!json_equal(bv ? bv : empty, tv ? tv : empty))
					put(arg, kinds[i], key, t, bv ? bv : empty, tv ? tv : empty);
				json_decref(empty);
			}
			json_decref(keys);
		}
	}
}

/* Rows of keys [from, to), each after a comma but the first. */
struct rows_job {
	const struct cmp_set *set;
	int nsides;
	cmp_row_shown_fn shown;
	cmp_row_put_fn put;
	const void *arg;
	size_t from, to;
	struct buf *out;
	size_t nrows;
};

static void *put_rows(void *arg)
{
	struct rows_job *j = arg;

	for (size_t i = j->from; i < j->to; i++) {
		for (int t = 1; t < j->nsides; t++) {
			struct cmp_row row;
			if (cmp_row_compute(j->set->keys[i], t, &row) ||
			    (j->shown && !j->shown(&row, j->arg)))
				continue;
			if (j->nrows++)
				buf_putc(j->out, ',');
			j->put(j->out, &row, j->arg);
		}
	}
	return NULL;
}

/*
 * Many rows are computed and written by two threads, each half of the keys:
 * PostgreSQL has nothing to do meanwhile, and the rows of a 5,000-metric
 * compare take ~25 ms (Welch quantiles, then 3 MB of numbers).
 */
#define CMP_ROWS_SPLIT_MIN 1000

void cmp_rows_write(const struct cmp_set *set, int nsides, cmp_row_shown_fn shown,
		    cmp_row_put_fn put, const void *arg, struct buf *b)
{
	struct buf tail = BUF_INIT;
	struct rows_job j[2] = {{set, nsides, shown, put, arg, 0, set->nkeys, b, 0},
				{set, nsides, shown, put, arg, 0, 0, &tail, 0}};
	pthread_t helper;
	int split = 0;

	if (set->nkeys >= CMP_ROWS_SPLIT_MIN) {
		j[0].to = j[1].from = set->nkeys / 2;
		j[1].to = set->nkeys;
		split = pthread_create(&helper, NULL, put_rows, &j[1]) == 0;
		if (!split)
			j[0].to = set->nkeys;
	}
	put_rows(&j[0]);
	if (split) {
		pthread_join(helper, NULL);
		if (j[0].nrows && j[1].nrows)
			buf_putc(b, ',');
		buf_append(b, tail.data, tail.len);
	}
	buf_release(&tail);
}
