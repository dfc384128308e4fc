/*
 * test_standby.c - reads from a hot standby (KPERF_READ_DATABASE_URL, made
 * with pg_basebackup -R): GETs are answered by the standby, a client reads
 * its own writes (X-Kperf-LSN: kperfd waits up to a second for the standby
 * to replay that far, else reads the primary), and reads go on while the
 * primary is down (writes answer 503).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/integration/harness.h"

#define OPTS "-c fsync=off -c full_page_writes=off -c max_connections=100"

static struct pg_cluster P, S;
static struct kperfd K;
static char env_read[1200];
static const char *env[] = {env_read, "KPERF_CONFIRM_RUNS=0", NULL};

static void setup(void)
{
	memset(&S, 0, sizeof(S));
	pg_cluster_start(&P, "pgsp", OPTS);
	pg_cluster_standby(&S, &P, "kperf_sb", OPTS);
	kperfd_prepare(&K, P.pg); /* the database replicates to the standby */
	snprintf(env_read, sizeof(env_read), "KPERF_READ_DATABASE_URL=%s dbname=%s", S.pg, K.db);
	kperfd_env(env);
	kperfd_restart(&K);
	kperfd_env(NULL);
}

static void teardown(void)
{
	kperfd_stop(&K);
	pg_cluster_ctl(&S, "stop");
	pg_cluster_ctl(&P, "stop");
}

TestSuite(standby, .init = setup, .fini = teardown, .timeout = 120);

static void post_run(const char *id, struct resp *r)
{
	struct run_doc d = {
		.run_id = id,
		.machine = "sb1",
		.commit = "aaaa1631f313f75c9d8f4b5e0e9cba1c1bd1d68e",
		.suite = "readtwice",
		.metrics = json_pack("{s:[i,i]}", "readtwice.throughput", 1, 2),
	};

	harness_post_run(&K, NULL, &d, r);
}

/* GET path until it answers want, at most 60 s (the standby replays within
 * seconds); the last status. */
static long get_until(const char *path, long want)
{
	double end = harness_now() + 60;
	struct resp r;
	long st = 0;

	for (int i = 0; st != want && (i == 0 || harness_now() < end); i++) {
		if (i)
			usleep(100000);
		http_get(&K, path, &r);
		st = r.status;
		resp_release(&r);
	}
	return st;
}

Test(standby, reads_come_from_the_standby_and_a_client_reads_its_own_writes)
{
	struct resp r;
	char hdr[80], lsn[40];

	post_run("sb-1", &r);
	cr_assert_eq(r.status, 201, "%s", r.body);
	cr_expect(strchr(r.lsn, '/') != NULL, "a write carries its WAL position: \"%s\"", r.lsn);
	resp_release(&r);
	cr_assert_eq(get_until("/api/v1/runs/sb-1", 200), 200, "replayed on the standby");
	/* /healthz and /metrics show the standby's replay */
	http_get(&K, "/healthz", &r);
	cr_expect_eq(r.status, 200);
	cr_expect(r.body && strstr(r.body, "\"standby\":{\"status\":\"ok\",\"replay_lag_s\":") &&
			  strstr(r.body, "\"replay_behind_bytes\":"),
		  "%s", r.body);
	resp_release(&r);
	http_get(&K, "/metrics", &r);
	cr_expect(r.body && strstr(r.body, "\nkperf_standby_up 1\n") &&
			  strstr(r.body, "\nkperf_standby_replay_lag_seconds "),
		  "%s", r.body);
	resp_release(&r);

	/* replay paused: a read without the client's position is the standby's */
	pg_cluster_exec(&S, "SELECT pg_wal_replay_pause()");
	post_run("sb-2", &r);
	cr_assert_eq(r.status, 201, "%s", r.body);
	snprintf(lsn, sizeof(lsn), "%s", r.lsn);
	resp_release(&r);
	http_get(&K, "/api/v1/runs/sb-2", &r);
	cr_expect_eq(r.status, 404, "the paused standby answered: %ld", r.status);
	resp_release(&r);
	/* with it, kperfd waits a second for the standby, then reads the primary */
	snprintf(hdr, sizeof(hdr), "X-Kperf-LSN: %s", lsn);
	http_get_with(&K, "/api/v1/runs/sb-2", hdr, &r);
	cr_expect_eq(r.status, 200, "read-your-writes: %ld %s", r.status, r.body);
	resp_release(&r);
	/* a malformed position is ignored, not an error */
	http_get_with(&K, "/api/v1/runs/sb-1", "X-Kperf-LSN: zz/1", &r);
	cr_expect_eq(r.status, 200);
	resp_release(&r);
	pg_cluster_exec(&S, "SELECT pg_wal_replay_resume()");
	cr_expect_eq(get_until("/api/v1/runs/sb-2", 200), 200);
	http_get_with(&K, "/api/v1/runs/sb-2", hdr, &r);
	cr_expect_eq(r.status, 200);
	resp_release(&r);
	cr_expect(harness_count(&K, "SELECT count(*) FROM run") == 2);
}

Test(standby, reads_go_on_while_the_primary_is_down)
{
	struct resp r;

	post_run("sb-3", &r);
	cr_assert_eq(r.status, 201, "%s", r.body);
	resp_release(&r);
	cr_assert_eq(get_until("/api/v1/runs/sb-3", 200), 200);
	/* pg.sh kill returns once the primary's processes are gone */
	cr_assert_eq(pg_cluster_ctl(&P, "kill"), 0);
	http_get(&K, "/api/v1/runs/sb-3", &r);
	cr_expect_eq(r.status, 200, "a read while the primary is down: %ld", r.status);
	resp_release(&r);
	http_get(&K, "/api/v1/runs?machine=sb1", &r);
	cr_expect_eq(r.status, 200, "%ld", r.status);
	cr_expect(r.body && strstr(r.body, "\"total\":1"), "%s", r.body);
	resp_release(&r);
	http_get(&K, "/api/v1/trend?machine=sb1&suite=readtwice&metric=readtwice.throughput", &r);
	cr_expect_eq(r.status, 200, "%ld %s", r.status, r.body);
	resp_release(&r);
	http_get(&K, "/healthz", &r);
	cr_expect_eq(r.status, 200, "reads are served: %ld", r.status);
	cr_expect(r.body && strstr(r.body, "\"database\":\"unavailable\"") &&
			  strstr(r.body, "\"standby\":{\"status\":\"ok\""),
		  "%s", r.body);
	resp_release(&r);
	post_run("sb-4", &r);
	cr_expect_eq(r.status, 503, "a write with the primary down: %ld", r.status);
	cr_expect_str_eq(r.retry_after, "5");
	resp_release(&r);
	cr_assert_eq(pg_cluster_ctl(&P, "start"), 0);
}
