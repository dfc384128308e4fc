/*
 * test_archive_decide.c - decisions after `kperfd archive`: the decision
 * worker reads the summaries of archived runs (sample_summary) in place of
 * their samples, so an archived history counts as history, an archived base
 * is compared by its moments, and change points stay where they were.
 *
 * Two machines get the same runs of the same commits. Machine A's history is
 * moved six months back (runs and samples) and archived; machine B's stays
 * hot. The commits posted afterwards must then be decided alike on both:
 * A from summaries, B from samples.
 */
#include <criterion/criterion.h>
#include <libpq-fe.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/integration/harness.h"

KPERFD_SUITE(archive_decide, 180);

#define MA "arch-dec-a" /* archived */
#define MB "arch-dec-b" /* hot: the control */
#define TPUT "vm-scalability.throughput"
#define ELAPSED "vm-scalability.time.elapsed_time"
#define NHIST 10 /* history commits c0..c9, archived on A */
#define RUNS 3   /* runs per commit, ITERS values each */
#define ITERS 2

static void sha_of(char out[41], int k)
{
	snprintf(out, 41, "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee%02u", (unsigned)k % 100u);
}

/* The throughput of commit k: a 6% step up at c5, then c10 5.7% down (a
 * regression against its archived base), c11 1.1% below c10. */
static double level_of(int k)
{
	return k < 5 ? 1000 : k < NHIST ? 1060 : k == NHIST ? 1000 : 992.5;
}

/* The elapsed time: 10% up at c5 (a regression to bisect), back at c10. */
static double elapsed_of(int k)
{
	return k >= 5 && k < NHIST ? 330 : 300;
}

/* ~0.6% noise, the same for both machines; c10 and c11 (the pair of case
 * 1) 1.7 times as noisy: Welch on the pair alone finds no change there,
 * the history's quieter noise (joined by the pair's) does. */
static double noise(int k, int salt, int i, int j)
{
	double amp = k >= NHIST ? 1.7 * 0.009 : 0.009;
	return amp * (double)((k * 4 + salt + i * 3 + j * 5) % 7 - 3) / 3.0;
}

static void post_run(const char *machine, int k, int i)
{
	char sha[41], parent[41], id[64];
	double t[ITERS], e[ITERS];

	sha_of(sha, k);
	sha_of(parent, k - 1);
	for (int j = 0; j < ITERS; j++) {
		t[j] = level_of(k) * (1 + noise(k, 0, i, j));
		e[j] = elapsed_of(k) * (1 + noise(k, 3, i, j + 1));
	}
	snprintf(id, sizeof(id), "%s-%d-%d", machine, k, i);
	struct run_doc d = {
		.run_id = id,
		.machine = machine,
		.commit = sha,
		.parent = k ? parent : NULL,
		.suite = "vm-scalability",
		.params = json_pack("{s:s}", "test", "lru-file-mmap-read"),
		.metrics = json_pack("{s:[f,f],s:[f,f]}", TPUT, t[0], t[1], ELAPSED, e[0], e[1]),
	};

	harness_store_run(&K, &d);
}

static void post_commit(int k)
{
	for (int i = 0; i < RUNS; i++) {
		post_run(MA, k, i);
		post_run(MB, k, i);
	}
}

/* Until the decision queue is empty, at most 60 s. */
static void settle(void)
{
	double end = harness_now() + 60;

	while (harness_count(&K, "SELECT count(*) FROM decision_queue") > 0) {
		cr_assert_lt(harness_now(), end, "decisions not made within 60 s");
		usleep(50000);
	}
}

/* Statements of one transaction with text parameters; asserts they worked. */
static void sql_do(PGconn *c, const char *sql, int n, const char *const *params)
{
	PGresult *r = PQexecParams(c, sql, n, NULL, params, NULL, NULL, 0);
	ExecStatusType st = PQresultStatus(r);
	cr_assert(st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK, "%s: %s", sql,
		  PQerrorMessage(c));
	PQclear(r);
}

/* Machine A's runs and samples six months back, then every month before
 * the next one archived by the kperfd binary. */
static void archive_machine_a(void)
{
	const char *pa[1] = {MA};
	PGconn *c = harness_db(&K);
	PGresult *r;
	char month[8], *out = NULL, *err = NULL;
	int rc;

	sql_do(c, "SELECT kperf_sample_partitions(now() - interval '8 months', now())", 0, NULL);
	sql_do(c, "BEGIN", 0, NULL);
	sql_do(c,
	       "UPDATE sample SET at = at - interval '6 months' WHERE run_id IN"
	       " (SELECT r.id FROM run r JOIN machine m ON m.id = r.machine_id WHERE m.name = $1)",
	       1, pa);
	sql_do(c,
	       "UPDATE run SET received_at = received_at - interval '6 months'"
	       " WHERE machine_id = (SELECT id FROM machine WHERE name = $1)",
	       1, pa);
	sql_do(c, "COMMIT", 0, NULL);
	/* the month after the moved one (UTC, as the partitions are) */
	r = PQexecParams(c,
			 "SELECT to_char(date_trunc('month', min(received_at) AT TIME ZONE 'UTC')"
			 " + interval '1 month', 'YYYY-MM') FROM run r JOIN machine m"
			 " ON m.id = r.machine_id WHERE m.name = $1",
			 1, NULL, pa, NULL, NULL, 0);
	cr_assert_eq(PQresultStatus(r), PGRES_TUPLES_OK, "%s", PQerrorMessage(c));
	snprintf(month, sizeof(month), "%s", PQgetvalue(r, 0, 0));
	PQclear(r);
	PQfinish(c);
	{
		const char *args[] = {"archive", "--before", month, NULL};
		rc = kperfd_cli(&K, args, &out, &err);
	}
	cr_assert_eq(rc, 0, "kperfd archive --before %s: %d\n%s\n%s", month, rc, out, err);
	free(out);
	free(err);
	/* A's samples left the hot table, its summaries are there; B's untouched */
	cr_assert_eq(harness_count_params(&K,
					  "SELECT count(*) FROM sample WHERE run_id IN (SELECT r.id"
					  " FROM run r JOIN machine m ON m.id = r.machine_id"
					  " WHERE m.name = $1)",
					  1, pa),
		     0);
	cr_assert_eq(harness_count_params(&K,
					  "SELECT count(*) FROM sample_summary WHERE run_id IN"
					  " (SELECT r.id FROM run r JOIN machine m ON"
					  " m.id = r.machine_id WHERE m.name = $1) AND n = 2",
					  1, pa),
		     NHIST * RUNS * 2);
	{
		const char *pb[1] = {MB};
		cr_assert_eq(harness_count_params(&K,
						  "SELECT count(*) FROM sample WHERE run_id IN"
						  " (SELECT r.id FROM run r JOIN machine m ON"
						  " m.id = r.machine_id WHERE m.name = $1)",
						  1, pb),
			     NHIST * RUNS * 2 * ITERS);
	}
}

struct dec {
	long id;
	char test[16], verdict[16];
	double change_pct, p, base_mean, target_mean;
	long base_n, target_n, base_runs;
};

/* The decision of machine's commit k on metric, asserted to exist. */
static void decision_of(const char *machine, int k, const char *metric, struct dec *d)
{
	char sha[41];
	const char *p[3] = {machine, sha, metric};
	PGconn *c = harness_db(&K);
	PGresult *r;

	sha_of(sha, k);
	r = PQexecParams(c,
			 "SELECT d.id, d.test_used, d.verdict, d.change_pct, coalesce(d.p_value, 'NaN'),"
			 " d.base_mean, d.target_mean, d.base_n, d.target_n, d.base_runs"
			 " FROM decision d JOIN machine m ON m.id = d.machine_id"
			 " JOIN commits c ON c.id = d.commit_id JOIN metric mt ON mt.id = d.metric_id"
			 " WHERE m.name = $1 AND c.sha = $2 AND mt.name = $3",
			 3, NULL, p, NULL, NULL, 0);
	cr_assert_eq(PQresultStatus(r), PGRES_TUPLES_OK, "%s", PQerrorMessage(c));
	cr_assert_eq(PQntuples(r), 1, "no decision of %s at c%d on %s", machine, k, metric);
	d->id = strtol(PQgetvalue(r, 0, 0), NULL, 10);
	snprintf(d->test, sizeof(d->test), "%s", PQgetvalue(r, 0, 1));
	snprintf(d->verdict, sizeof(d->verdict), "%s", PQgetvalue(r, 0, 2));
	d->change_pct = strtod(PQgetvalue(r, 0, 3), NULL);
	d->p = strtod(PQgetvalue(r, 0, 4), NULL);
	d->base_mean = strtod(PQgetvalue(r, 0, 5), NULL);
	d->target_mean = strtod(PQgetvalue(r, 0, 6), NULL);
	d->base_n = strtol(PQgetvalue(r, 0, 7), NULL, 10);
	d->target_n = strtol(PQgetvalue(r, 0, 8), NULL, 10);
	d->base_runs = strtol(PQgetvalue(r, 0, 9), NULL, 10);
	PQclear(r);
	PQfinish(c);
}

static int close_rel(double a, double b, double tol)
{
	return a == b || fabs(a - b) <= tol * fmax(fabs(a), fabs(b));
}

#define EXPECT_REL(a, b, what)                                                                   \
	cr_expect(close_rel((a), (b), 1e-9), "%s: %.17g (archived) vs %.17g (hot)", what, (a), (b))

static void expect_same_numbers(const struct dec *a, const struct dec *b, const char *what)
{
	char w[128];
	/* a change of 0 is 0 only up to rounding: 1e-9 points there */
	cr_expect(close_rel(a->change_pct, b->change_pct, 1e-9) ||
			  fabs(a->change_pct - b->change_pct) < 1e-9,
		  "%s change_pct: %.17g (archived) vs %.17g (hot)", what, a->change_pct,
		  b->change_pct);
	snprintf(w, sizeof(w), "%s base_mean", what);
	EXPECT_REL(a->base_mean, b->base_mean, w);
	snprintf(w, sizeof(w), "%s target_mean", what);
	EXPECT_REL(a->target_mean, b->target_mean, w);
	cr_expect_eq(a->base_n, b->base_n, "%s base_n %ld vs %ld", what, a->base_n, b->base_n);
	cr_expect_eq(a->target_n, b->target_n, "%s target_n", what);
	cr_expect_eq(a->base_runs, b->base_runs, "%s base_runs", what);
}

/* A machine's change points: rows "metric commit prev shift p", in order. */
static PGresult *change_points(PGconn *c, const char *machine)
{
	const char *p[1] = {machine};
	PGresult *r = PQexecParams(c,
				   "SELECT mt.name, k.sha, pk.sha, cp.shift_pct, cp.p_value"
				   " FROM change_point cp JOIN machine m ON m.id = cp.machine_id"
				   " JOIN metric mt ON mt.id = cp.metric_id"
				   " JOIN commits k ON k.id = cp.commit_id"
				   " JOIN commits pk ON pk.id = cp.prev_commit_id"
				   " WHERE m.name = $1 ORDER BY 1, 2",
				   1, NULL, p, NULL, NULL, 0);
	cr_assert_eq(PQresultStatus(r), PGRES_TUPLES_OK, "%s", PQerrorMessage(c));
	return r;
}

/* A bisection of machine's elapsed time from c0 (good) to c9 (bad), waited
 * for: its answer (the runs of the chain are there: no job is queued). */
static json_t *bisect(const char *machine)
{
	char body[512], good[41], bad[41], path[64];
	json_t *j = NULL;
	long id;

	sha_of(good, 0);
	sha_of(bad, NHIST - 1);
	snprintf(body, sizeof(body),
		 "{\"good\":\"%s\",\"bad\":\"%s\",\"machine\":\"%s\",\"suite\":\"vm-scalability\","
		 "\"params\":{\"test\":\"lru-file-mmap-read\"},\"metric\":\"" ELAPSED "\"}",
		 good, bad, machine);
	cr_assert_eq(harness_call(&K, "POST", "/api/v1/bisections", TOKEN_ADMIN, body, &j), 201);
	id = (long)json_number_value(json_object_get(j, "id"));
	json_decref(j);
	snprintf(path, sizeof(path), "/api/v1/bisections/%ld", id);
	for (double end = harness_now() + 60; harness_now() < end;) {
		j = NULL;
		cr_assert_eq(harness_call(&K, "GET", path, NULL, NULL, &j), 200);
		if (strcmp(json_string_value(json_object_get(j, "state")), "running"))
			return j;
		json_decref(j);
		usleep(100000);
	}
	cr_assert_fail("the bisection of %s did not end within 60 s", machine);
	return NULL;
}

Test(archive_decide, archived_history_base_and_change_points_decide_as_hot_ones)
{
	struct dec a, b;
	char path[64];
	json_t *j;
	PGconn *c;
	PGresult *ca, *cb;

	for (int k = 0; k < NHIST; k++)
		post_commit(k);
	settle();
	archive_machine_a();
	/* a read straddling an archive meets a run's samples and its summary:
	 * the samples count, the summary not (a bogus one on a hot run of B
	 * would move B's c9, the base below, by a factor of 5) */
	{
		const char *p[2] = {MB "-9-0", TPUT};
		PGconn *db = harness_db(&K);
		sql_do(db,
		       "INSERT INTO summary_month (key_group_id, metric_id, month, run_ids, mean, n,"
		       " m2, min, max, rsum) SELECT g.id, mt.id,"
		       " date_trunc('month', r.received_at AT TIME ZONE 'UTC')::date, ARRAY[r.id],"
		       " ARRAY[5000::float8], ARRAY[2], ARRAY[0::float8], ARRAY[5000::float8],"
		       " ARRAY[5000::float8], ARRAY[NULL::float8] FROM run r JOIN metric mt"
		       " ON mt.name = $2 JOIN key_group g ON g.machine_id = r.machine_id"
		       " AND g.test_id = r.test_id AND g.variant_id = r.variant_id WHERE r.run_id = $1",
		       2, p);
		PQfinish(db);
	}

	/* (2) c10 against its parent c9, whose runs are archived on A: Welch on
	 * the moments there, the same change as B's from samples */
	post_commit(NHIST);
	settle();
	decision_of(MA, NHIST, TPUT, &a);
	decision_of(MB, NHIST, TPUT, &b);
	cr_expect_str_eq(a.test, "welch");
	cr_expect_str_eq(a.verdict, "regression");
	cr_expect_str_eq(b.verdict, "regression");
	cr_expect_lt(a.change_pct, -5);
	expect_same_numbers(&a, &b, "c10 " TPUT);
	cr_expect_eq(a.base_n, RUNS * ITERS);
	cr_log_info("c10 throughput: A %s p=%.17g change %.17g%%, B %s p=%.17g change %.17g%%",
		    a.test, a.p, a.change_pct, b.test, b.p, b.change_pct);
	decision_of(MA, NHIST, ELAPSED, &a);
	decision_of(MB, NHIST, ELAPSED, &b);
	expect_same_numbers(&a, &b, "c10 " ELAPSED);

	/* what the decision shows of an archived base: no samples, its runs'
	 * summaries; the hot target's samples as before */
	decision_of(MA, NHIST, TPUT, &a);
	snprintf(path, sizeof(path), "/api/v1/regressions/%ld", a.id);
	j = harness_get_json(&K, path, 200);
	cr_expect(json_is_null(json_object_get(j, "base_samples")), "%s", json_dumps(j, 0));
	cr_expect_eq(json_array_size(json_object_get(j, "base_archived")), RUNS);
	cr_expect_eq(json_number_value(
			     json_object_get(json_array_get(json_object_get(j, "base_archived"), 0), "n")),
		     ITERS);
	cr_expect_eq(json_array_size(json_object_get(j, "target_samples")), RUNS * ITERS);
	cr_expect_eq(json_array_size(json_object_get(j, "target_archived")), 0);
	json_decref(j);

	/* (1) c11 against c10, both hot: the history test with the archived
	 * commits as its history, the same p as B's */
	post_commit(NHIST + 1);
	settle();
	decision_of(MA, NHIST + 1, TPUT, &a);
	decision_of(MB, NHIST + 1, TPUT, &b);
	cr_expect_str_eq(a.test, "history");
	cr_expect_str_eq(b.test, "history");
	cr_expect_str_eq(a.verdict, "regression");
	cr_expect_str_eq(b.verdict, "regression");
	/* the stored p is Welch's (the decision's p_value column): the pair
	 * alone shows no change, so the history's noise, summaries on A, made
	 * the regression */
	cr_expect_gt(a.p, 0.05);
	EXPECT_REL(a.p, b.p, "c11 " TPUT " p");
	expect_same_numbers(&a, &b, "c11 " TPUT);
	cr_log_info("c11 throughput: A %s %s Welch p=%.17g change %.17g%% (%.17g -> %.17g),"
		    " B %s %s Welch p=%.17g change %.17g%%",
		    a.test, a.verdict, a.p, a.change_pct, a.base_mean, a.target_mean, b.test,
		    b.verdict, b.p, b.change_pct);
	decision_of(MA, NHIST + 1, ELAPSED, &a);
	decision_of(MB, NHIST + 1, ELAPSED, &b);
	cr_expect_str_eq(a.test, b.test);
	cr_expect_str_eq(a.verdict, b.verdict);
	EXPECT_REL(a.p, b.p, "c11 " ELAPSED " p");
	expect_same_numbers(&a, &b, "c11 " ELAPSED);

	/* (3) the change points over the archived history are B's */
	c = harness_db(&K);
	ca = change_points(c, MA);
	cb = change_points(c, MB);
	cr_expect_geq(PQntuples(cb), 1, "no change point in B's history");
	cr_expect_eq(PQntuples(ca), PQntuples(cb), "%d change points on A, %d on B",
		     PQntuples(ca), PQntuples(cb));
	for (int i = 0; i < PQntuples(ca) && i < PQntuples(cb); i++) {
		for (int f = 0; f < 3; f++)
			cr_expect_str_eq(PQgetvalue(ca, i, f), PQgetvalue(cb, i, f));
		EXPECT_REL(strtod(PQgetvalue(ca, i, 3), NULL), strtod(PQgetvalue(cb, i, 3), NULL),
			   "change point shift_pct");
		EXPECT_REL(strtod(PQgetvalue(ca, i, 4), NULL), strtod(PQgetvalue(cb, i, 4), NULL),
			   "change point p");
		cr_log_info("change point %s at %.2s: shift %.9f%% p %.6g (A) / %.9f%% p %.6g (B)",
			    PQgetvalue(ca, i, 0), PQgetvalue(ca, i, 1) + 38,
			    strtod(PQgetvalue(ca, i, 3), NULL), strtod(PQgetvalue(ca, i, 4), NULL),
			    strtod(PQgetvalue(cb, i, 3), NULL), strtod(PQgetvalue(cb, i, 4), NULL));
	}
	PQclear(ca);
	PQclear(cb);
	PQfinish(c);

	/* a bisection over archived commits judges their summaries: the same
	 * first bad commit and steps as over B's samples */
	{
		json_t *ba = bisect(MA), *bb = bisect(MB), *sa = json_object_get(ba, "steps"),
		       *sb = json_object_get(bb, "steps");
		char first_bad[41];

		sha_of(first_bad, 5);
		cr_expect_str_eq(json_string_value(json_object_get(ba, "state")), "found", "%s",
				 json_dumps(ba, 0));
		cr_expect_str_eq(json_string_value(json_object_get(ba, "first_bad")), first_bad);
		cr_expect_str_eq(json_string_value(json_object_get(bb, "first_bad")), first_bad);
		cr_expect_eq(json_array_size(sa), json_array_size(sb));
		cr_expect_geq(json_array_size(sa), 3);
		for (size_t i = 0; i < json_array_size(sa) && i < json_array_size(sb); i++) {
			json_t *x = json_array_get(sa, i), *y = json_array_get(sb, i);
			cr_expect_str_eq(json_string_value(json_object_get(x, "commit")),
					 json_string_value(json_object_get(y, "commit")));
			cr_expect_str_eq(json_string_value(json_object_get(x, "class")),
					 json_string_value(json_object_get(y, "class")));
			cr_expect_eq(json_number_value(json_object_get(x, "runs")), RUNS);
			EXPECT_REL(json_number_value(json_object_get(x, "change_pct_vs_good")),
				   json_number_value(json_object_get(y, "change_pct_vs_good")),
				   "bisection step change_pct_vs_good");
			cr_log_info("bisection step %s: %s, %.9f%% vs good",
				    json_string_value(json_object_get(x, "commit")) + 38,
				    json_string_value(json_object_get(x, "class")),
				    json_number_value(json_object_get(x, "change_pct_vs_good")));
		}
		cr_expect_eq(harness_count(&K, "SELECT count(*) FROM job"), 0);
		json_decref(ba);
		json_decref(bb);
	}
}
