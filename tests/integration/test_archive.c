/*
 * test_archive.c - `kperfd archive --before YYYY-MM` and `kperfd
 * restore-archive`: an old month's samples summarised per (run, metric) and
 * its partition detached (into schema archive, or a pg_dump file); trends and
 * compares over it give the same figures from the summaries (the B?mean rows
 * of mmtests' table, which need the values, absent), samples of other months
 * untouched; restored, the answers are byte for byte the ones before.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/integration/harness.h"

/* The decision worker off: the trend's stored change points and decisions
 * would otherwise arrive between the reads compared (test_archive_decide.c
 * covers decisions over archived months). */
static struct kperfd K;
static void archive_setup(void)
{
	static const char *const env[] = {"KPERF_WORKER=0", NULL};
	kperfd_env(env);
	kperfd_start(&K, NULL);
	kperfd_env(NULL);
}
static void archive_teardown(void)
{
	kperfd_stop(&K);
}
TestSuite(archive, .init = archive_setup, .fini = archive_teardown, .timeout = 240);

#define NKERNELS 10 /* k01..k10; k01-k06 are moved to an old month */
#define NOLD 6
#define NRUNS 3
#define NITER 5
#define NMETRICS 3 /* ops and latency: NITER values a run; per_run: one (LKP's) */
#define SAMPLES_A_RUN (2 * NITER + 1)

static double value_of(int kernel, int run, int it, int metric)
{
	/* deterministic noise with fractional parts; a step at k05 */
	double noise = sin(kernel * 1.7 + run * 2.3 + it * 0.9 + metric) * 3.25;
	double level = metric ? 52.5 + (kernel >= 5 ? 4.0 : 0.0) : 1000.125 - (kernel >= 5 ? 30 : 0);
	return level + noise;
}

static void post_kernel(int k)
{
	json_t *runs = json_array(), *batch;
	char *body;
	struct resp r;

	for (int run = 0; run < NRUNS; run++) {
		json_t *ops = json_array(), *lat = json_array(), *one = json_array();
		char id[64], rel[32];
		for (int it = 0; it < NITER; it++) {
			json_array_append_new(ops, json_real(value_of(k, run, it, 0)));
			json_array_append_new(lat, json_real(value_of(k, run, it, 1)));
		}
		json_array_append_new(one, json_real(value_of(k, run, 7, 2) - 40.0));
		snprintf(id, sizeof(id), "arc-k%02d-r%d", k, run);
		snprintf(rel, sizeof(rel), "6.1.0-arc%02d", k);
		json_array_append_new(
			runs, json_pack("{s:s,s:{s:s},s:{s:s},s:{s:s,s:{s:s}},s:{s:o,s:o,s:o}}", "run_id",
					id, "machine", "name", "arc-1", "kernel", "release", rel, "test",
					"suite", "will-it-scale", "params", "nr_task", "4", "metrics",
					"will-it-scale.ops", ops, "will-it-scale.latency_us", lat,
					"will-it-scale.per_run", one));
	}
	batch = json_pack("{s:o}", "runs", runs);
	body = json_dumps(batch, 0);
	http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR, body, &r);
	cr_assert(r.status == 201, "%ld %s", r.status, r.body);
	resp_release(&r);
	free(body);
	json_decref(batch);
}

static void sql(const char *stmt);

#define OLD_RUNS "run_id ~ '^arc-k0[1-6]-'"

/*
 * k01-k10 posted, then k01-k06 moved into the month (UTC, as the partitions
 * are) three months before the last of them was received: all by one shift
 * of seconds, the last to that month's 15th, so their order is kept and
 * none crosses out of it whatever the session's time zone.
 */
static void post_history(void)
{
	for (int k = 1; k <= NKERNELS; k++)
		post_kernel(k);
	sql("SELECT kperf_sample_partitions(now() - interval '5 months', now())");
	sql("WITH d AS (SELECT make_interval(secs => extract(epoch FROM max(received_at)"
	    "  - ((date_trunc('month', max(received_at) AT TIME ZONE 'UTC') - interval '3 months'"
	    "  + interval '14 days') AT TIME ZONE 'UTC'))) AS v FROM run WHERE " OLD_RUNS "),"
	    " s AS (UPDATE sample SET at = at - d.v FROM d"
	    "  WHERE run_id IN (SELECT id FROM run WHERE " OLD_RUNS "))"
	    " UPDATE run SET received_at = received_at - d.v FROM d WHERE " OLD_RUNS);
}

/* The moved month (YYYY-MM), and the month after it, from the stored runs. */
#define SQL_OLD_MONTH                                                                        \
	"SELECT to_char(max(received_at) AT TIME ZONE 'UTC', 'YYYY-MM') FROM run WHERE " OLD_RUNS
#define SQL_NEXT_MONTH                                                                       \
	"SELECT to_char(date_trunc('month', max(received_at) AT TIME ZONE 'UTC')"              \
	" + interval '1 month', 'YYYY-MM') FROM run WHERE " OLD_RUNS
/* Samples from the month after the moved one on (UTC): the months not archived. */
#define SQL_OTHERS                                                                           \
	"SELECT count(*) || ' ' || sum(value) FROM sample WHERE at >= (SELECT"                 \
	" (date_trunc('month', max(received_at) AT TIME ZONE 'UTC') + interval '1 month')"     \
	" AT TIME ZONE 'UTC' FROM run WHERE " OLD_RUNS ")"

static void sql(const char *stmt)
{
	PGconn *c = PQconnectdb(K.conninfo);
	PGresult *r = PQexec(c, stmt);
	cr_assert(PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK,
		  "%s: %s", stmt, PQerrorMessage(c));
	PQclear(r);
	PQfinish(c);
}

/* One text value of a query (malloc'd). */
static char *sql_text(const char *stmt)
{
	PGconn *c = PQconnectdb(K.conninfo);
	PGresult *r = PQexec(c, stmt);
	char *v;
	cr_assert(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1, "%s: %s", stmt,
		  PQerrorMessage(c));
	v = strdup(PQgetvalue(r, 0, 0));
	PQclear(r);
	PQfinish(c);
	return v;
}

/* 1 when month's (YYYY-MM) table is in schema archive */
static int in_archive_schema(const char *month)
{
	const char *p[1] = {month};
	long n = harness_count_params(&K,
				      "SELECT count(*) FROM pg_tables WHERE schemaname = 'archive'"
				      " AND tablename = 'sample_' || replace($1, '-', '')",
				      1, p);
	return n == 1;
}

static char *get_body(const char *path)
{
	struct resp r;
	char *b;
	http_get(&K, path, &r);
	cr_assert_eq(r.status, 200, "%s: %ld %s", path, r.status, r.body);
	b = strdup(r.body);
	resp_release(&r);
	return b;
}

static void assert_close(double a, double b, const char *what)
{
	cr_assert(fabs(a - b) <= 1e-9 * fmax(1.0, fabs(b)), "%s: %.17g vs %.17g", what, a, b);
}

static double num(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	cr_assert(json_is_number(v), "no number %s", k);
	return json_number_value(v);
}

#define TREND "/api/v1/trend?machine=arc-1&suite=will-it-scale&params=nr_task=4" \
	      "&metric=will-it-scale.ops"
#define CMP_OLD "/api/v1/compare?base=6.1.0-arc02&target=6.1.0-arc06"
#define CMP_MIX "/api/v1/compare?base=6.1.0-arc06&target=6.1.0-arc09"

/* The trend after archiving against the one before: the same points and
 * figures, the archived ones without their samples. */
static void same_trend(const char *before, const char *after, int archived)
{
	json_t *a = json_loads(before, 0, NULL), *b = json_loads(after, 0, NULL);
	json_t *pa = json_object_get(json_array_get(json_object_get(a, "series"), 0), "points");
	json_t *pb = json_object_get(json_array_get(json_object_get(b, "series"), 0), "points");
	size_t narch = 0;

	cr_assert_eq(json_array_size(pa), NKERNELS);
	cr_assert_eq(json_array_size(pb), NKERNELS);
	for (size_t i = 0; i < NKERNELS; i++) {
		json_t *x = json_array_get(pa, i), *y = json_array_get(pb, i);
		json_t *ar = json_object_get(y, "archived_runs");
		cr_assert_str_eq(json_string_value(json_object_get(x, "release")),
				 json_string_value(json_object_get(y, "release")));
		cr_assert_eq(num(x, "n"), NRUNS * NITER);
		cr_assert_eq(num(y, "n"), NRUNS * NITER);
		assert_close(num(y, "mean"), num(x, "mean"), "mean");
		assert_close(num(y, "stddev"), num(x, "stddev"), "stddev");
		cr_assert_eq(num(y, "min"), num(x, "min"));
		cr_assert_eq(num(y, "max"), num(x, "max"));
		cr_assert_eq(json_array_size(json_object_get(y, "runs")), NRUNS);
		if (ar) {
			narch++;
			cr_assert_eq(json_integer_value(ar), NRUNS);
			cr_assert_eq(json_array_size(json_object_get(y, "samples")), 0);
		} else {
			cr_assert(json_equal(json_object_get(x, "samples"),
					     json_object_get(y, "samples")));
		}
	}
	cr_assert_eq(narch, (size_t)archived);
	json_decref(a);
	json_decref(b);
}

/* Compare rows after against before: every figure but none missing. */
static void same_compare(const char *before, const char *after)
{
	json_t *a = json_loads(before, 0, NULL), *b = json_loads(after, 0, NULL);
	json_t *ra = json_object_get(a, "rows"), *rb = json_object_get(b, "rows");
	static const char *const fields[] = {"n", "mean", "stddev_pct", "min", "max", NULL};

	cr_assert_not_null(ra, "%s", before);
	cr_assert_eq(json_array_size(ra), NMETRICS);
	cr_assert_eq(json_array_size(rb), NMETRICS);
	for (size_t i = 0; i < NMETRICS; i++) {
		json_t *x = json_array_get(ra, i), *y = json_array_get(rb, i);
		cr_assert_str_eq(json_string_value(json_object_get(x, "metric")),
				 json_string_value(json_object_get(y, "metric")));
		for (const char *side[] = {"base", "target"}, **s = side; s < side + 2; s++)
			for (const char *const *f = fields; *f; f++)
				assert_close(num(json_object_get(y, *s), *f),
					     num(json_object_get(x, *s), *f), *f);
		assert_close(num(y, "change_pct"), num(x, "change_pct"), "change_pct");
		assert_close(num(json_object_get(y, "welch"), "p_value"),
			     num(json_object_get(x, "welch"), "p_value"), "p_value");
		assert_close(num(json_object_get(y, "welch"), "df"),
			     num(json_object_get(x, "welch"), "df"), "df");
		for (size_t e = 0; e < 2; e++)
			assert_close(json_number_value(json_array_get(
					     json_object_get(json_object_get(y, "welch"), "ci95"), e)),
				     json_number_value(json_array_get(
					     json_object_get(json_object_get(x, "welch"), "ci95"), e)),
				     "ci95");
		cr_assert_eq(json_is_true(json_object_get(y, "lkp_changed")),
			     json_is_true(json_object_get(x, "lkp_changed")));
		cr_assert_str_eq(json_string_value(json_object_get(y, "verdict")),
				 json_string_value(json_object_get(x, "verdict")));
	}
	json_decref(a);
	json_decref(b);
}

/* mmtests' table after: the lines before, but B?mean rows of archived
 * kernels NaN, and the note. */
static void same_mmtests(const char *before, const char *after)
{
	char *a = strdup(before), *b = strdup(after), *sa, *sb;
	char *la = strtok_r(a, "\n", &sa), *lb = strtok_r(b, "\n", &sb);
	int bmean = 0;

	for (; la && lb; la = strtok_r(NULL, "\n", &sa), lb = strtok_r(NULL, "\n", &sb)) {
		if (!strncmp(lb, "(B?mean rows", 12)) /* the note after a table */
			lb = strtok_r(NULL, "\n", &sb);
		if (!lb)
			break;
		if (!strncmp(la, "BHmean", 6) || !strncmp(la, "BAmean", 6)) {
			cr_assert(strstr(lb, "NaN"), "%s", lb);
			cr_assert_eq(strncmp(la, lb, 10), 0);
			bmean++;
			continue;
		}
		cr_assert_str_eq(lb, la);
	}
	cr_assert_null(la, "left: %s", la);
	cr_assert_eq(bmean, 3 * NMETRICS, "B?mean rows: %d", bmean); /* 3 per table */
	cr_assert(strstr(after, "B?mean rows: NaN where runs of archived months"), "%s", after);
	free(a);
	free(b);
}

/* a and b equal, else the first difference shown */
static void same_text(const char *a, const char *b, const char *what)
{
	size_t i = 0;
	while (a[i] && a[i] == b[i])
		i++;
	cr_assert(!a[i] && !b[i], "%s differs at %zu: ...%.200s\nvs ...%.200s", what, i,
		  a + (i > 80 ? i - 80 : 0), b + (i > 80 ? i - 80 : 0));
}

static int cli(const char *const *args, char **out, char **err)
{
	return kperfd_cli(&K, args, out, err);
}

#define NCMPS 4
static const char *const cmps[NCMPS] = {CMP_OLD, CMP_MIX, CMP_OLD "&format=lkp",
					CMP_OLD "&format=mmtests"};

/* restore-archive of month says `said`; then the trend and the compares
 * answer byte for byte what they did before the archive (t0, c0) */
static void restore_as_before(const char *month, const char *said, const char *t0,
			      char *const *c0)
{
	const char *args[] = {"restore-archive", month, NULL};
	char *out = NULL, *err = NULL, *t;

	cr_assert_eq(cli(args, &out, &err), 0, "%s", err);
	cr_assert(strstr(out, said), "%s", out);
	free(out);
	free(err);
	t = get_body(TREND);
	same_text(t, t0, "trend");
	free(t);
	for (int i = 0; i < NCMPS; i++) {
		char *c = get_body(cmps[i]);
		same_text(c, c0[i], cmps[i]);
		free(c);
	}
}

Test(archive, archive_then_restore)
{
	char *month, *before_arg, *v, *others, *others_after, *t0, *t1, *c0[NCMPS], *c1[NCMPS];
	char *out = NULL, *err = NULL, dump[300];

	post_history();
	month = sql_text(SQL_OLD_MONTH);
	before_arg = sql_text(SQL_NEXT_MONTH);
	others = sql_text(SQL_OTHERS);
	cr_assert_eq(strtol(sql_text("SELECT count(*) FROM sample WHERE run_id IN (SELECT id FROM"
				     " run WHERE run_id ~ '^arc-k0[1-6]-')"),
			    NULL, 10),
		     NOLD * NRUNS * SAMPLES_A_RUN);

	t0 = get_body(TREND);
	for (int i = 0; i < NCMPS; i++)
		c0[i] = get_body(cmps[i]);

	/* bad arguments: the reason, nothing archived */
	{
		const char *a1[] = {"archive", "--before", "2999-01", NULL};
		const char *a2[] = {"archive", "--before", "2024-13", NULL};
		const char *a3[] = {"restore-archive", "2001-01", NULL};
		cr_assert_eq(cli(a1, &out, &err), 1);
		cr_assert(strstr(err, "is after the current month"), "%s", err);
		free(out);
		free(err);
		cr_assert_eq(cli(a2, &out, &err), 2);
		cr_assert(strstr(err, "YYYY-MM"), "%s", err);
		free(out);
		free(err);
		cr_assert_eq(cli(a3, &out, &err), 1);
		cr_assert(strstr(err, "2001-01 is not archived"), "%s", err);
		free(out);
		free(err);
	}

	/* archive into the schema */
	{
		const char *args[] = {"archive", "--before", before_arg, NULL};
		char line[160];
		cr_assert_eq(cli(args, &out, &err), 0, "%s", err);
		snprintf(line, sizeof(line), "%s: %d samples of %d runs summarised as %d (run, metric)",
			 month, NOLD * NRUNS * SAMPLES_A_RUN, NOLD * NRUNS, NOLD * NRUNS * NMETRICS);
		cr_assert(strstr(out, line), "want \"%s\" in:\n%s", line, out);
		free(out);
		free(err);
	}
	cr_assert_eq(strtol(sql_text("SELECT count(*) FROM sample WHERE run_id IN (SELECT id FROM"
				     " run WHERE run_id ~ '^arc-k0[1-6]-')"),
			    NULL, 10),
		     0);
	cr_assert_eq(strtol(sql_text("SELECT count(*) FROM sample_summary"), NULL, 10),
		     NOLD * NRUNS * NMETRICS);
	/* one row per (key group, metric) of the month; the one-value metric's
	 * keeps only its means */
	v = sql_text("SELECT string_agg(coalesce(n::text, 'means only'), ' ' ORDER BY metric_id)"
		     " FROM (SELECT metric_id, cardinality(run_ids) || CASE WHEN n IS NULL"
		     " THEN ' means only' ELSE ' runs' END AS n FROM summary_month) x");
	cr_assert_str_eq(v, "18 runs 18 runs 18 means only", "%s", v);
	free(v);
	others_after = sql_text(SQL_OTHERS);
	cr_assert_str_eq(others_after, others);
	free(others_after);
	cr_assert(in_archive_schema(month), "the partition is in schema archive");

	t1 = get_body(TREND);
	for (int i = 0; i < NCMPS; i++)
		c1[i] = get_body(cmps[i]);
	same_trend(t0, t1, NOLD);
	same_compare(c0[0], c1[0]);
	same_compare(c0[1], c1[1]);
	cr_assert_str_eq(c1[2], c0[2]); /* LKP's table: per-run means, all kept */
	same_mmtests(c0[3], c1[3]);

	/* back from the schema: the answers of before, byte for byte */
	restore_as_before(month, "partition attached again, 54 summaries dropped", t0, c0);
	cr_assert_eq(strtol(sql_text("SELECT count(*) FROM sample_summary"), NULL, 10), 0);

	/* into a pg_dump file, the table dropped; back from the file */
	snprintf(dump, sizeof(dump), "%s/dumps", K.dir);
	cr_assert_eq(mkdir(dump, 0700), 0);
	{
		const char *args[] = {"archive", "--before", before_arg, "--dump", dump, NULL};
		const char *list[] = {"archive", "--list", NULL};
		char path[400];
		struct stat st;
		cr_assert_eq(cli(args, &out, &err), 0, "%s", err);
		snprintf(path, sizeof(path), "%s/sample_%.4s%.2s.dump", dump, month, month + 5);
		cr_assert(strstr(out, path), "%s", out);
		cr_assert_eq(stat(path, &st), 0);
		cr_assert_gt(st.st_size, 1000);
		free(out);
		free(err);
		cr_assert(!in_archive_schema(month), "dumped, the table is dropped");
		cr_assert_eq(cli(list, &out, &err), 0, "%s", err);
		cr_assert(strstr(out, "file") && strstr(out, path) && strstr(out, month), "%s", out);
		free(out);
		free(err);
	}
	t1 = get_body(TREND);
	same_trend(t0, t1, NOLD);
	free(t1);
	restore_as_before(month, "restored", t0, c0);
	for (int i = 0; i < NCMPS; i++) {
		free(c0[i]);
		free(c1[i]);
	}
	free(t0);
	free(month);
	free(before_arg);
	free(others);
}

/* ---- an archive while labs post and dashboards read ---- */

struct traffic {
	int posts, posted, reads, read_ok, stop;
};

static void *traffic_run(void *arg)
{
	struct traffic *t = arg;

	for (int i = 0; i < t->posts || !__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE); i++) {
		struct resp r;
		if (i < t->posts) {
			char body[512];
			snprintf(body, sizeof(body),
				 "{\"run_id\":\"live-%d\",\"machine\":{\"name\":\"arc-1\"},"
				 "\"kernel\":{\"release\":\"6.1.0-arc10\"},\"test\":{\"suite\":"
				 "\"will-it-scale\",\"params\":{\"nr_task\":\"4\"}},\"metrics\":"
				 "{\"will-it-scale.ops\":[970.5,971.5,969.5]}}",
				 i);
			http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR, body, &r);
			t->posted += r.status == 201;
			resp_release(&r);
		}
		http_get(&K, TREND, &r);
		t->reads++;
		t->read_ok += r.status == 200;
		resp_release(&r);
	}
	return NULL;
}

Test(archive, while_labs_post_and_pages_read)
{
	struct traffic t = {.posts = 60};
	char *before_arg, *v, *out = NULL, *err = NULL;
	pthread_t th;

	post_history();
	before_arg = sql_text(SQL_NEXT_MONTH);
	cr_assert_eq(pthread_create(&th, NULL, traffic_run, &t), 0);
	{
		const char *args[] = {"archive", "--before", before_arg, NULL};
		cr_assert_eq(cli(args, &out, &err), 0, "%s", err);
		free(out);
		free(err);
	}
	__atomic_store_n(&t.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	cr_assert_eq(t.posted, t.posts, "%d of %d posts acknowledged", t.posted, t.posts);
	cr_assert_eq(t.read_ok, t.reads, "%d of %d reads answered", t.read_ok, t.reads);
	/* every acknowledged run is there with its samples, archived ones summarised */
	v = sql_text("SELECT count(*) FROM sample s JOIN run r ON r.id = s.run_id"
		     " WHERE r.run_id LIKE 'live-%'");
	cr_assert_eq(strtol(v, NULL, 10), 3 * t.posts);
	free(v);
	v = sql_text("SELECT count(*) FROM sample_summary s JOIN run r ON r.id = s.run_id"
		     " WHERE r.run_id ~ '^arc-k0[1-6]-'");
	cr_assert_eq(strtol(v, NULL, 10), NOLD * NRUNS * NMETRICS);
	free(v);
	/* the trend now has k10 with its 3 runs and the 60 posted meanwhile */
	{
		char *b = get_body(TREND);
		json_t *j = json_loads(b, 0, NULL);
		json_t *pts = json_object_get(json_array_get(json_object_get(j, "series"), 0), "points");
		json_t *last = json_array_get(pts, json_array_size(pts) - 1);
		cr_assert_eq(json_array_size(pts), NKERNELS);
		cr_assert_eq(json_integer_value(json_object_get(last, "n")), NRUNS * NITER + 3 * t.posts);
		cr_assert_eq(json_integer_value(json_object_get(json_array_get(pts, 0), "archived_runs")),
			     NRUNS);
		json_decref(j);
		free(b);
	}
	free(before_arg);
}
