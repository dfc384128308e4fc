/*
 * test_regress_burst.c - a bulk import of single-metric runs (key groups x
 * 9 commits in a chain, 3-5 runs each, as issue 17's burst but smaller) and
 * the decision workers: every key group decided exactly once per version,
 * a fresh commit's small post decided before the import's backlog, and
 * mailed while an import is still being posted and decided; the pending
 * count in /api/v1/regressions and /metrics going to 0.
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/integration/harness.h"

#define GROUPS 300    /* key groups: GROUPS / TESTS machines x TESTS params */
#define GROUPS_LIVE 400 /* the second test's import: long enough to mail during it */
#define TESTS 50
#define COMMITS 9
#define BATCH 100     /* runs per POST of an import: a bulk request */
#define FRESH "fresh-lab"

static struct kperfd K;
static pid_t smtp_pid;
static char maildir[400], env_url[64];
static const char *env_off[] = {"KPERF_WORKER=0", NULL};
static const char *env_on[] = {"KPERF_ALERT_SETTLE_S=1", "KPERF_PUBLIC_URL=http://kperf.test",
			       "KPERF_MAIL_FROM=kperf@kperf.test", env_url, NULL};

static void teardown(void)
{
	kperfd_stop(&K);
	smtp_stop(smtp_pid);
	kperfd_env(NULL);
}

TestSuite(burst, .fini = teardown, .timeout = 600);

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A commit of import `imp` (0, 1) at position k, or of the fresh line. */
static void sha_of(char out[41], const char *line, int k)
{
	snprintf(out, 41, "%.5s%035d", line, k); /* 5 + 35 hex digits */
}

static int reps_of(int g, int k)
{
	return 3 + (g * 7 + k * 3) % 3;
}

/* Every 20th group from group 3 loses 10% at commit 5 (a regression). */
static double value_of(int g, int k, int r)
{
	double level = (1000.0 + 37.0 * g) * (g % 20 == 3 && k >= 5 ? 0.9 : 1.0);
	static const double noise[5] = {-0.004, 0.003, -0.001, 0.005, -0.002};
	return level * (1 + noise[(g + k + r) % 5]);
}

struct import {
	int imp;                 /* 0 or 1: machines and commits of its own */
	int groups;
	atomic_int posts;        /* requests answered 201 */
	atomic_int done;
	int failed;
};

static size_t run_json(char *b, size_t cap, int imp, int g, int k, int r)
{
	char sha[41], parent[41], line[8], pl[64] = "";

	snprintf(line, sizeof(line), "b%db0b", imp);
	sha_of(sha, line, k);
	if (k) {
		sha_of(parent, line, k - 1);
		snprintf(pl, sizeof(pl), ",\"parent\":\"%s\"", parent);
	}
	return (size_t)snprintf(b, cap,
				"{\"run_id\":\"i%d-g%d-c%d-r%d\",\"machine\":{\"name\":\"imp%d-m%02d\"},"
				"\"kernel\":{\"commit\":\"%s\"%s},\"test\":{\"suite\":\"will-it-scale\","
				"\"params\":{\"test\":\"t%02d\"}},\"metrics\":{"
				"\"will-it-scale.per_process_ops\":[%.3f]}}",
				imp, g, k, r, imp, g / TESTS, sha, pl, g % TESTS, value_of(g, k, r));
}

/* Post an import commit by commit in requests of BATCH runs; with stride
 * and first, one of several posters. */
struct poster {
	struct import *im;
	int first, stride;
};

static void *post_import(void *arg)
{
	struct poster *p = arg;
	size_t cap = BATCH * 400 + 64;
	char *body = malloc(cap);
	int batch = 0, n = 0;
	size_t len = 0;

	for (int k = 0; k < COMMITS; k++)
		for (int g = 0; g < p->im->groups; g++)
			for (int r = 0; r < reps_of(g, k); r++) {
				int last = k == COMMITS - 1 && g == p->im->groups - 1 &&
					   r == reps_of(g, k) - 1;
				if (batch % p->stride == p->first) {
					len += (size_t)snprintf(body + len, cap - len, "%s",
								n ? "," : "{\"runs\":[");
					len += run_json(body + len, cap - len, p->im->imp, g, k, r);
				}
				if (++n < BATCH && !last)
					continue;
				if (batch % p->stride == p->first) {
					struct resp rs;
					snprintf(body + len, cap - len, "]}");
					http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR, body, &rs);
					if (rs.status == 201)
						p->im->posts++;
					else
						p->im->failed = (int)rs.status;
					resp_release(&rs);
				}
				batch++;
				n = 0;
				len = 0;
			}
	p->im->done++;
	free(body);
	return NULL;
}

static int import_requests(int groups)
{
	int runs = 0;
	for (int k = 0; k < COMMITS; k++)
		for (int g = 0; g < groups; g++)
			runs += reps_of(g, k);
	return (runs + BATCH - 1) / BATCH;
}

/* The fresh line's commit k: 3 runs in one small request; from commit 1 on
 * each is 11.5% slower than the one before (a regression). */
static void post_fresh(int k)
{
	char body[4096], sha[41], parent[41], pl[64] = "";
	double level = 20717269;
	size_t len = (size_t)snprintf(body, sizeof(body), "{\"runs\":[");
	struct resp r;

	for (int i = 0; i < k; i++)
		level *= 0.885;
	sha_of(sha, "f0f0f", k);
	if (k) {
		sha_of(parent, "f0f0f", k - 1);
		snprintf(pl, sizeof(pl), ",\"parent\":\"%s\"", parent);
	}
	for (int i = 0; i < 3; i++)
		len += (size_t)snprintf(body + len, sizeof(body) - len,
					"%s{\"run_id\":\"fresh-%d-%d\",\"machine\":{\"name\":\"" FRESH "\"},"
					"\"kernel\":{\"commit\":\"%s\"%s},\"test\":{\"suite\":"
					"\"vm-scalability\",\"params\":{\"test\":\"lru-file-mmap-read\"}},"
					"\"metrics\":{\"vm-scalability.throughput\":[%.0f]}}",
					i ? "," : "", k, i, sha, pl, level * (1 + (i - 1) * 0.002));
	snprintf(body + len, sizeof(body) - len, "]}");
	http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR, body, &r);
	cr_assert_eq(r.status, 201, "fresh commit %d: %ld %s", k, r.status, r.body);
	resp_release(&r);
}

/* pending_groups and pending_decisions of /api/v1/regressions. */
static void pending(long *groups, long *decisions)
{
	struct resp r;
	json_t *j;

	http_get(&K, "/api/v1/regressions?limit=1", &r);
	cr_assert_eq(r.status, 200, "%s", r.body);
	j = resp_json(&r);
	cr_assert(json_is_integer(json_object_get(j, "pending_groups")) ||
			  json_is_number(json_object_get(j, "pending_groups")),
		  "no pending_groups: %s", r.body);
	*groups = (long)json_number_value(json_object_get(j, "pending_groups"));
	*decisions = (long)json_number_value(json_object_get(j, "pending_decisions"));
	json_decref(j);
	resp_release(&r);
}

/* A value of /metrics ("name " at a line start), asserting it is there. */
static long metric(const char *name)
{
	char key[128];
	struct resp r;
	const char *p;
	long v;

	snprintf(key, sizeof(key), "\n%s ", name);
	http_get(&K, "/metrics", &r);
	p = strstr(r.body, key);
	cr_assert(p, "no %s in /metrics", name);
	v = strtol(p + strlen(key), NULL, 10);
	resp_release(&r);
	return v;
}

static long fresh_decisions(int k)
{
	char sha[41];
	const char *p[1] = {sha};
	sha_of(sha, "f0f0f", k);
	return harness_count_params(&K,
				    "SELECT count(*) FROM decision d JOIN commits c ON c.id = d.commit_id"
				    " WHERE c.sha = $1",
				    1, p);
}

/* Every decision of import imp made from all its runs: the target's and the
 * base's run counts are the commits' in the group (0 when so). */
static long stale_decisions(int imp)
{
	char like[32];
	const char *p[1] = {like};
	snprintf(like, sizeof(like), "imp%d-%%", imp);
	return harness_count_params(&K,
		"SELECT count(*) FROM decision d JOIN machine m ON m.id = d.machine_id"
		" WHERE m.name LIKE $1 AND (d.target_runs <> (SELECT count(*) FROM run r"
		"  WHERE r.commit_id = d.commit_id AND r.machine_id = d.machine_id"
		"  AND r.test_id = d.test_id AND r.variant_id = d.variant_id AND r.valid)"
		" OR d.base_runs <> (SELECT count(*) FROM run r WHERE r.commit_id = d.base_commit_id"
		"  AND r.machine_id = d.machine_id AND r.test_id = d.test_id"
		"  AND r.variant_id = d.variant_id AND r.valid))",
		1, p);
}

static long import_decisions(int imp, const char *cond)
{
	/* cond is one of the test's constant conditions; the import is a parameter */
	char sql[512], like[32];
	const char *p[1] = {like};
	snprintf(like, sizeof(like), "imp%d-%%", imp);
	snprintf(sql, sizeof(sql),
		 "SELECT count(*) FROM decision d JOIN machine m ON m.id = d.machine_id"
		 " WHERE m.name LIKE $1%s",
		 cond);
	return harness_count_params(&K, sql, 1, p);
}

/* Import imp's decisions made after the decision of commit k of the fresh
 * line (decided_at is the deciding transaction's start), or after its alert
 * was marked sent (mailed): what was still to decide at that moment, from
 * the stored rows. Read before any of them is decided again. */
static long import_decided_after(int imp, int k, int mailed)
{
	char like[32], sha[41];
	const char *p[2] = {like, sha};

	snprintf(like, sizeof(like), "imp%d-%%", imp);
	sha_of(sha, "f0f0f", k);
	return harness_count_params(
		&K,
		mailed ? "SELECT count(*) FROM decision d JOIN machine m ON m.id = d.machine_id"
			 " WHERE m.name LIKE $1 AND d.decided_at > (SELECT min(a.sent_at)"
			 "  FROM alert a JOIN commits c ON c.id = a.commit_id"
			 "  WHERE c.sha = $2 AND a.state = 'sent')"
		       : "SELECT count(*) FROM decision d JOIN machine m ON m.id = d.machine_id"
			 " WHERE m.name LIKE $1 AND d.decided_at > (SELECT max(f.decided_at)"
			 "  FROM decision f JOIN commits c ON c.id = f.commit_id WHERE c.sha = $2)",
		2, p);
}

/* Until the queue is empty, at most seconds. */
static void drain(int seconds)
{
	double t0 = now_s();
	while (harness_count(&K, "SELECT count(*) FROM decision_queue") > 0) {
		cr_assert_lt(now_s() - t0, seconds, "the queue is not empty after %d s", seconds);
		usleep(50000);
	}
}

Test(burst, a_bulk_import_is_decided_once_per_version_after_a_fresh_commit)
{
	struct import im = {.imp = 0, .groups = GROUPS};
	struct poster ps[2] = {{&im, 0, 2}, {&im, 1, 2}};
	pthread_t th[2];
	long groups, decisions, last_groups, passes, bulk_left;
	double t0;

	curl_global_init(CURL_GLOBAL_ALL);
	/* the import and the fresh commits stored while no worker runs */
	kperfd_env(env_off);
	kperfd_start(&K, NULL);
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, post_import, &ps[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	cr_assert_eq(im.failed, 0, "an import request answered %d", im.failed);
	cr_assert_eq(im.posts, import_requests(GROUPS));
	post_fresh(0);
	post_fresh(1);
	pending(&groups, &decisions);
	cr_assert_eq(groups, GROUPS + 1, "key groups waiting: %ld", groups);
	cr_assert_eq(decisions, GROUPS * COMMITS + 2, "decisions waiting: %ld", decisions);
	cr_assert_eq(metric("kperf_decision_pending_groups"), GROUPS + 1);
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM decision_queue WHERE bulk"),
		     GROUPS * COMMITS, "the import's requests of %d runs are bulk", BATCH);
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM decision_queue WHERE NOT bulk"), 2,
		     "the fresh commits' small posts are not");
	/* both fresh entries ready (runs quiet for a quarter second) before the
	 * workers start, so that they are taken together */
	t0 = now_s();
	while (harness_count(&K, "SELECT count(*) FROM decision_queue WHERE NOT bulk"
				 " AND touched_at < now() - interval '1 second'") < 2) {
		cr_assert_lt(now_s() - t0, 30, "the fresh entries did not age");
		usleep(50000);
	}

	/* the workers start on the backlog: the fresh commit goes first */
	kperfd_kill(&K);
	env_on[3] = NULL; /* no mail here */
	kperfd_env(env_on);
	kperfd_restart(&K);
	last_groups = groups;
	t0 = now_s();
	for (;;) {
		pending(&groups, &decisions);
		cr_assert_leq(groups, last_groups, "pending key groups grew: %ld after %ld", groups,
			      last_groups);
		last_groups = groups;
		if (!groups && !decisions)
			break;
		cr_assert_lt(now_s() - t0, 300, "%ld key groups still pending after 300 s", groups);
		usleep(20000);
	}
	cr_assert_eq(fresh_decisions(1), 1, "the fresh commit's one metric is decided");
	bulk_left = import_decided_after(0, 1, 0);
	cr_assert_gt(bulk_left, GROUPS * (COMMITS - 1) / 2,
		     "the fresh commit waited behind the import: %ld of its %d decisions"
		     " came after",
		     bulk_left, GROUPS * (COMMITS - 1));
	cr_assert_eq(metric("kperf_decision_pending_groups"), 0);

	/* exactly once per version: each (group, commit) with a base decided
	 * once, from all its runs, its children not again; the fresh commit once */
	cr_assert_eq(import_decisions(0, ""), GROUPS * (COMMITS - 1));
	cr_assert_eq(stale_decisions(0), 0, "decisions made before their runs were all in");
	passes = metric("kperf_decision_passes_total");
	cr_assert_eq(passes, GROUPS * (COMMITS - 1) + 1, "decision passes: %ld", passes);
	cr_assert_eq(import_decisions(0, " AND d.verdict = 'regression'"), (GROUPS + 16) / 20,
		     "the planted regressions, and nothing else");
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM change_point c JOIN machine m"
				       " ON m.id = c.machine_id WHERE m.name LIKE 'imp0-%'"),
		     (GROUPS + 16) / 20, "one change point where each step is");

	/* a run arriving for a decided commit: that commit and its child again */
	{
		char body[1024];
		struct resp r;
		run_json(body, sizeof(body), 0, 0, 4, 9);
		http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR, body, &r);
		cr_assert_eq(r.status, 201, "%s", r.body);
		resp_release(&r);
	}
	drain(60);
	cr_assert_eq(metric("kperf_decision_passes_total"), passes + 2);
	cr_assert_eq(stale_decisions(0), 0);
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM decision d JOIN machine m"
				       " ON m.id = d.machine_id JOIN test t ON t.id = d.test_id"
				       " JOIN commits c ON c.id = d.commit_id WHERE m.name = 'imp0-m00'"
				       " AND t.params->>'test' = 't00' AND c.sha LIKE 'b0b0b%04'"
				       " AND d.target_runs = 4"),
		     1, "commit 4 of group 0 decided with its fourth run");
}

Test(burst, a_fresh_commit_is_decided_and_mailed_while_an_import_is_judged)
{
	struct import im = {.imp = 1, .groups = GROUPS_LIVE};
	struct poster ps = {&im, 0, 1};
	pthread_t th;
	long groups, decisions, mailed_left, decided_left;
	int port = 0;
	char *msg;
	double t0;

	curl_global_init(CURL_GLOBAL_ALL);
	harness_tmpdir(maildir, sizeof(maildir), "mail-burst2");
	smtp_pid = smtp_start(&port, maildir);
	snprintf(env_url, sizeof(env_url), "KPERF_SMTP_URL=smtp://127.0.0.1:%d", port);
	env_on[3] = env_url;
	kperfd_env(env_on);
	kperfd_start(&K, NULL);
	{
		struct resp r;
		http_post_json(&K, "/api/v1/subscriptions", TOKEN_ADMIN,
			       "{\"email\":\"reviewer@example.org\",\"machine\":\"" FRESH "\","
			       "\"verdicts\":[\"regression\"]}",
			       &r);
		cr_assert_eq(r.status, 201, "%s", r.body);
		resp_release(&r);
	}
	post_fresh(0);
	drain(60);

	/* an import by one client, and a fresh regression once its first
	 * request is in: decided and mailed while the import is still judged */
	pthread_create(&th, NULL, post_import, &ps);
	while (im.posts < 1 && !im.done)
		usleep(10000);
	cr_assert(!im.done, "the import was through before its first answer was seen");
	post_fresh(1);
	t0 = now_s();
	while (maildir_count(maildir) < 1) {
		cr_assert_lt(now_s() - t0, 120, "no mail 120 s after the fresh regression");
		usleep(20000);
	}
	pthread_join(th, NULL);
	cr_assert_eq(im.failed, 0, "an import request answered %d", im.failed);
	/* the import's decisions made after the fresh commit's decision and
	 * after its mail was sent (the alert marked sent a moment after the
	 * Maildir has it): the stream of them went on, it was not waited for */
	t0 = now_s();
	while (!harness_count(&K, "SELECT count(*) FROM alert WHERE state = 'sent'")) {
		cr_assert_lt(now_s() - t0, 60, "the delivered alert is not marked sent after 60 s");
		usleep(20000);
	}
	decided_left = import_decided_after(1, 1, 0);
	mailed_left = import_decided_after(1, 1, 1);
	cr_assert_gt(decided_left, 0, "the fresh commit was decided only after the import's backlog");
	cr_assert_gt(mailed_left, 0, "the fresh commit was mailed only after the import's backlog");
	msg = maildir_read(maildir, 0);
	cr_assert(strstr(msg, "vm-scalability.throughput") && strstr(msg, "-11.5%"), "%s", msg);
	free(msg);

	/* the pending count reaches 0, with every decision made from all its runs */
	t0 = now_s();
	do {
		pending(&groups, &decisions);
		cr_assert_lt(now_s() - t0, 300, "%ld key groups still pending after 300 s", groups);
		usleep(20000);
	} while (groups || decisions);
	cr_assert_eq(metric("kperf_decision_pending_groups"), 0);
	cr_assert_eq(import_decisions(1, ""), GROUPS_LIVE * (COMMITS - 1));
	cr_assert_eq(stale_decisions(1), 0, "decisions made before their runs were all in");
	cr_assert_eq(fresh_decisions(1), 1);
	cr_assert_eq(maildir_count(maildir), 1, "one message: the fresh regression's");
}
