/*
 * test_jobs.c - /api/v1/jobs against a real kperfd: a job queued by an
 * admin, claimed by the machine that offers its test (long poll, order of
 * claims), kept by heartbeats, completed by runs naming it, failed, given
 * back, cancelled, lost when its lease runs out; tokens bound to machines.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/db/db.h"
#include "server/decide/confirm.h"
#include "tests/integration/harness.h"

#define SHA_A HARNESS_SHA_A
#define SHA_B HARNESS_SHA_B
#define TEST_RT "{\"suite\":\"readtwice\",\"params\":{\"procs\":\"4\"}}"

static struct kperfd K;

static void setup(void)
{
	kperfd_start(&K, NULL);
	harness_seed_commits(&K);
}

static void teardown(void)
{
	kperfd_stop(&K);
}

TestSuite(jobs, .init = setup, .fini = teardown, .timeout = 120);

static long call(const char *method, const char *path, const char *token, const char *body,
		 json_t **j)
{
	return harness_call(&K, method, path, token, body, j);
}

static long num(json_t *j, const char *key)
{
	return (long)json_number_value(json_object_get(j, key));
}

static const char *str(json_t *j, const char *key)
{
	return json_string_value(json_object_get(j, key));
}

/* Queue a job; its id. */
static long queue(const char *json)
{
	json_t *j;
	long st = call("POST", "/api/v1/jobs", TOKEN_ADMIN, json, &j), id;

	cr_assert_eq(st, 201, "%s", json);
	cr_expect_str_eq(str(j, "state"), "queued");
	id = num(j, "id");
	json_decref(j);
	return id;
}

/* Claim for machine; the job's id, 0 on 204. */
static long claim(const char *token, const char *machine, const char *running_sha,
		  const char *tests, int wait_s, json_t **job)
{
	char body[1024];
	json_t *j = NULL;
	long st, id = 0;

	snprintf(body, sizeof(body),
		 "{\"machine\":\"%s\",\"running\":{\"commit\":%s%s%s,\"release\":\"x\"},"
		 "\"tests\":%s,\"wait_s\":%d}",
		 machine, running_sha ? "\"" : "", running_sha ? running_sha : "null",
		 running_sha ? "\"" : "", tests, wait_s);
	st = call("POST", "/api/v1/jobs/claim", token, body, &j);
	cr_assert(st == 200 || st == 204, "claim: %ld", st);
	if (st == 200) {
		id = num(json_object_get(j, "job"), "id");
		if (job)
			*job = json_incref(json_object_get(j, "job"));
	}
	json_decref(j);
	return id;
}

static long post_run(const char *token, const char *run_id, const char *machine, const char *sha,
		     long job)
{
	struct run_doc d = {
		.run_id = run_id,
		.machine = machine,
		.commit = sha,
		.suite = "readtwice",
		.params = json_pack("{s:i}", "procs", 4),
		.more = job ? json_pack("{s:{s:I}}", "job", "id", (json_int_t)job) : NULL,
		.metrics = json_pack("{s:[i,i]}", "readtwice.throughput", 100, 101),
	};

	return harness_post_run(&K, token, &d, NULL);
}

static json_t *get_job(long id)
{
	char path[64];

	snprintf(path, sizeof(path), "/api/v1/jobs/%ld", id);
	return harness_get_json(&K, path, 200);
}

Test(jobs, queue_claim_heartbeat_and_runs_complete_the_job)
{
	json_t *j, *job = NULL;
	long id, got;
	char path[96];

	/* bad jobs: named field, nothing queued */
	cr_expect_eq(call("POST", "/api/v1/jobs", TOKEN_ADMIN,
			  "{\"commit\":\"" SHA_B "\",\"suite\":\"readtwice\",\"runs\":0}", &j),
		     400);
	cr_expect_str_eq(str(j, "field"), "runs");
	json_decref(j);
	cr_expect_eq(call("POST", "/api/v1/jobs", TOKEN_ADMIN,
			  "{\"commit\":\"cccc1631f313\",\"suite\":\"readtwice\"}", &j),
		     404);
	cr_expect_str_eq(str(j, "field"), "commit");
	json_decref(j);
	cr_expect_eq(call("POST", "/api/v1/jobs", TOKEN_ADMIN,
			  "{\"commit\":\"" SHA_B "\",\"suite\":\"readtwice\",\"machine\":\"nope\"}", &j),
		     404);
	cr_expect_str_eq(str(j, "field"), "machine");
	json_decref(j);
	cr_expect_eq(call("POST", "/api/v1/jobs", TOKEN_ADMIN,
			  "{\"commit\":\"" SHA_B "\",\"suite\":\"read twice\"}", &j),
		     400);
	cr_expect_str_eq(str(j, "field"), "suite");
	json_decref(j);
	cr_expect_eq(call("POST", "/api/v1/jobs", TOKEN_COLLECTOR,
			  "{\"commit\":\"" SHA_B "\",\"suite\":\"readtwice\"}", NULL),
		     403, "queueing needs an admin token");
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM job"), 0);

	id = queue("{\"commit\":\"6.1.0-b\",\"suite\":\"readtwice\",\"params\":{\"procs\":4},"
		   "\"runs\":2,\"reason\":\"confirm a regression\"}");
	/* a machine offering other tests gets nothing; one offering it gets the job */
	cr_expect_eq(claim(TOKEN_COLLECTOR, "lab1", NULL, "[{\"suite\":\"ycsb\"}]", 0, NULL), 0);
	cr_expect_eq(claim(TOKEN_COLLECTOR, "lab1", NULL, "[]", 0, NULL), 0);
	got = claim(TOKEN_COLLECTOR, "lab1", NULL, "[{\"suite\":\"ycsb\"}," TEST_RT "]", 0, &job);
	cr_assert_eq(got, id);
	cr_expect_str_eq(str(job, "commit"), SHA_B);
	cr_expect_str_eq(str(job, "release"), "6.1.0-b");
	cr_expect_str_eq(str(job, "subject"), "mm: b");
	cr_expect_str_eq(str(json_object_get(job, "params"), "procs"), "4");
	cr_expect_eq(num(job, "runs"), 2);
	cr_expect_eq(num(job, "lease_s"), 1800);
	json_decref(job);
	cr_expect_eq(claim(TOKEN_COLLECTOR, "lab2", NULL, "[" TEST_RT "]", 0, NULL), 0,
		     "a leased job is not claimed twice");

	snprintf(path, sizeof(path), "/api/v1/jobs/%ld/heartbeat", id);
	cr_expect_eq(call("POST", path, TOKEN_COLLECTOR, "{\"machine\":\"lab1\"}", NULL), 200);
	cr_expect_eq(call("POST", path, TOKEN_COLLECTOR, "{\"machine\":\"lab2\"}", NULL), 409);

	/* a run naming the job from a machine that does not hold it: stored, not counted */
	cr_expect_eq(post_run(TOKEN_COLLECTOR, "lab2-1", "lab2", SHA_B, id), 201);
	/* a run of another commit: stored, not counted */
	cr_expect_eq(post_run(TOKEN_COLLECTOR, "lab1-a", "lab1", SHA_A, id), 201);
	j = get_job(id);
	cr_expect_eq(num(j, "runs_done"), 0);
	cr_expect_str_eq(str(j, "state"), "running");
	cr_expect_str_eq(str(j, "leased_to"), "lab1");
	json_decref(j);
	cr_expect_eq(post_run(TOKEN_COLLECTOR, "lab1-1", "lab1", SHA_B, id), 201);
	cr_expect_eq(post_run(TOKEN_COLLECTOR, "lab1-1", "lab1", SHA_B, id), 200,
		     "a re-post answers 200 and counts once");
	j = get_job(id);
	cr_expect_eq(num(j, "runs_done"), 1);
	cr_expect_str_eq(str(j, "state"), "running");
	json_decref(j);
	cr_expect_eq(post_run(TOKEN_COLLECTOR, "lab1-2", "lab1", SHA_B, id), 201);
	j = get_job(id);
	cr_expect_eq(num(j, "runs_done"), 2);
	cr_expect_str_eq(str(j, "state"), "done");
	json_decref(j);
	cr_expect_eq(call("POST", path, TOKEN_COLLECTOR, "{}", NULL), 409, "a done job has no lease");
	cr_expect_eq(call("GET", "/api/v1/jobs?state=done&machine=lab1", NULL, NULL, &j), 200);
	cr_expect_eq(num(j, "total"), 1);
	json_decref(j);
	cr_expect_eq(call("GET", "/api/v1/jobs?state=bogus", NULL, NULL, NULL), 400);
	cr_expect_eq(call("GET", "/api/v1/agents", NULL, NULL, &j), 200);
	cr_expect_eq(num(j, "total"), 2, "lab1 and lab2 offered readtwice");
	json_decref(j);
}

Test(jobs, claims_take_the_running_kernel_first_then_priority_then_age)
{
	long old = queue("{\"commit\":\"" SHA_A "\",\"suite\":\"readtwice\",\"params\":{\"procs\":4}}");
	long urgent = queue("{\"commit\":\"" SHA_A "\",\"suite\":\"readtwice\","
			    "\"params\":{\"procs\":4},\"priority\":5}");
	long on_b = queue("{\"commit\":\"" SHA_B "\",\"suite\":\"readtwice\",\"params\":{\"procs\":4}}");
	long other = queue("{\"commit\":\"" SHA_A "\",\"suite\":\"readtwice\","
			   "\"params\":{\"procs\":4},\"machine\":null}");

	{ /* an agent that cannot switch kernels gets jobs on its own only */
		json_t *j;
		cr_expect_eq(call("POST", "/api/v1/jobs/claim", TOKEN_COLLECTOR,
				  "{\"machine\":\"lab1\",\"running\":{\"commit\":\"" SHA_B "\"},"
				  "\"tests\":[" TEST_RT "],\"switch\":false}",
				  &j),
			     200);
		cr_expect_eq(num(json_object_get(j, "job"), "id"), on_b);
		json_decref(j);
		cr_expect_eq(call("POST", "/api/v1/jobs/claim", TOKEN_COLLECTOR,
				  "{\"machine\":\"lab1\",\"running\":{\"commit\":\"" SHA_B "\"},"
				  "\"tests\":[" TEST_RT "],\"switch\":false}",
				  NULL),
			     204, "the other jobs want another kernel");
		cr_expect_eq(call("POST", "/api/v1/jobs/claim", TOKEN_COLLECTOR,
				  "{\"machine\":\"lab1\",\"tests\":[],\"switch\":1}", &j),
			     400);
		cr_expect_str_eq(str(j, "field"), "switch");
		json_decref(j);
	}
	cr_expect_eq(claim(TOKEN_COLLECTOR, "lab1", SHA_B, "[" TEST_RT "]", 0, NULL), urgent);
	cr_expect_eq(claim(TOKEN_COLLECTOR, "lab1", SHA_B, "[" TEST_RT "]", 0, NULL), old);
	cr_expect_eq(claim(TOKEN_COLLECTOR, "lab1", SHA_B, "[" TEST_RT "]", 0, NULL), other);
	cr_expect_eq(claim(TOKEN_COLLECTOR, "lab1", SHA_B, "[" TEST_RT "]", 0, NULL), 0);
}

Test(jobs, failures_end_a_job_after_three_a_release_counts_none_a_cancel_ends_it)
{
	long id = queue("{\"commit\":\"" SHA_B "\",\"suite\":\"readtwice\",\"params\":{\"procs\":4}}");
	char fail[96], rel[96], del[64];
	json_t *j;

	snprintf(fail, sizeof(fail), "/api/v1/jobs/%ld/fail", id);
	snprintf(rel, sizeof(rel), "/api/v1/jobs/%ld/release", id);
	snprintf(del, sizeof(del), "/api/v1/jobs/%ld", id);
	cr_expect_eq(call("POST", fail, TOKEN_COLLECTOR, "{\"reason\":\"x\"}", NULL), 409,
		     "no lease to fail");
	for (int i = 0; i < 3; i++) {
		char reason[64];
		cr_assert_eq(claim(TOKEN_COLLECTOR, "lab1", NULL, "[" TEST_RT "]", 0, NULL), id);
		if (i == 1) { /* SIGTERM: given back, no attempt counted */
			cr_expect_eq(call("POST", rel, TOKEN_COLLECTOR, "{}", NULL), 200);
			cr_assert_eq(claim(TOKEN_COLLECTOR, "lab1", NULL, "[" TEST_RT "]", 0, NULL), id);
		}
		cr_expect_eq(call("POST", fail, TOKEN_COLLECTOR, "{}", &j), 400, "a reason is needed");
		cr_expect_str_eq(str(j, "field"), "reason");
		json_decref(j);
		snprintf(reason, sizeof(reason), "{\"reason\":\"kernel %d did not boot\"}", i);
		cr_expect_eq(call("POST", fail, TOKEN_COLLECTOR, reason, &j), 200);
		cr_expect_str_eq(str(j, "state"), i < 2 ? "queued" : "failed");
		cr_expect_eq(num(j, "attempts"), i + 1);
		json_decref(j);
	}
	j = get_job(id);
	cr_expect_eq(json_array_size(json_object_get(j, "failures")), 3);
	cr_expect_str_eq(str(json_array_get(json_object_get(j, "failures"), 2), "reason"),
			 "kernel 2 did not boot");
	cr_expect_str_eq(str(json_array_get(json_object_get(j, "failures"), 2), "machine"), "lab1");
	json_decref(j);
	cr_expect_eq(claim(TOKEN_COLLECTOR, "lab1", NULL, "[" TEST_RT "]", 0, NULL), 0);

	id = queue("{\"commit\":\"" SHA_B "\",\"suite\":\"readtwice\",\"params\":{\"procs\":4}}");
	snprintf(del, sizeof(del), "/api/v1/jobs/%ld", id);
	cr_expect_eq(call("DELETE", del, TOKEN_COLLECTOR, NULL, NULL), 403);
	cr_expect_eq(call("DELETE", del, TOKEN_ADMIN, NULL, &j), 200);
	cr_expect_str_eq(str(j, "state"), "cancelled");
	json_decref(j);
	cr_expect_eq(call("DELETE", del, TOKEN_ADMIN, NULL, NULL), 409);
	cr_expect_eq(call("DELETE", "/api/v1/jobs/999999", TOKEN_ADMIN, NULL, NULL), 404);
	cr_expect_eq(claim(TOKEN_COLLECTOR, "lab1", NULL, "[" TEST_RT "]", 0, NULL), 0);
}

Test(jobs, a_lease_that_runs_out_puts_the_job_back)
{
	long id = queue("{\"commit\":\"" SHA_B "\",\"suite\":\"readtwice\",\"params\":{\"procs\":4},"
			"\"lease_s\":2}");
	char hb[96];

	cr_assert_eq(claim(TOKEN_COLLECTOR, "lab1", NULL, "[" TEST_RT "]", 0, NULL), id);
	cr_expect_eq(claim(TOKEN_COLLECTOR, "lab2", NULL, "[" TEST_RT "]", 0, NULL), 0);
	/* the long poll returns the job once lab1's lease has run out */
	cr_expect_eq(claim(TOKEN_COLLECTOR, "lab2", NULL, "[" TEST_RT "]", 10, NULL), id);
	snprintf(hb, sizeof(hb), "/api/v1/jobs/%ld/heartbeat", id);
	cr_expect_eq(call("POST", hb, TOKEN_COLLECTOR, "{\"machine\":\"lab1\"}", NULL), 409);
	cr_expect_eq(call("POST", hb, TOKEN_COLLECTOR, "{\"machine\":\"lab2\"}", NULL), 200);
}

struct later {
	long id;
};

static void *queue_later(void *arg)
{
	struct later *l = arg;
	usleep(700000);
	l->id = queue("{\"commit\":\"" SHA_A "\",\"suite\":\"readtwice\",\"params\":{\"procs\":4}}");
	return NULL;
}

Test(jobs, a_long_poll_returns_a_job_queued_while_it_waits)
{
	struct later l = {0};
	pthread_t th;
	long got;

	cr_expect_eq(claim(TOKEN_COLLECTOR, "lab1", NULL, "[" TEST_RT "]", 1, NULL), 0,
		     "204 after wait_s with nothing to do");
	pthread_create(&th, NULL, queue_later, &l);
	got = claim(TOKEN_COLLECTOR, "lab1", NULL, "[" TEST_RT "]", 30, NULL);
	pthread_join(th, NULL);
	cr_expect_eq(got, l.id);
}

Test(jobs, tokens_bound_to_machines_post_and_claim_for_those_only)
{
	const char *create[] = {"token", "create", "lab-bound", "--machines", "lab1,lkp-*", NULL};
	const char *bad[] = {"token", "create", "lab-bad", "--machines", "lab 1", NULL};
	char *out = NULL, *err = NULL, *tok;
	json_t *j;

	cr_assert_eq(kperfd_cli(&K, create, &out, &err), 0, "%s", err);
	free(err);
	tok = strtok(out, "\n");
	cr_assert_not_null(tok);
	cr_expect_eq(post_run(tok, "b-1", "lab1", SHA_A, 0), 201);
	cr_expect_eq(post_run(tok, "b-2", "lkp-bdw-ex2", SHA_A, 0), 201);
	cr_expect_eq(call("POST", "/api/v1/runs", tok,
			  "{\"run_id\":\"b-3\",\"machine\":{\"name\":\"lab2\"},"
			  "\"kernel\":{\"commit\":\"" SHA_A "\"},\"test\":{\"suite\":\"readtwice\"},"
			  "\"metrics\":{\"readtwice.throughput\":1}}",
			  &j),
		     403);
	cr_expect_str_eq(str(j, "error"), "forbidden");
	cr_expect_str_eq(str(j, "field"), "machine.name");
	json_decref(j);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM run WHERE run_id = 'b-3'"), 0);
	cr_expect_eq(call("POST", "/api/v1/jobs/claim", tok,
			  "{\"machine\":\"lab2\",\"tests\":[" TEST_RT "]}", &j),
		     403);
	cr_expect_str_eq(str(j, "field"), "machine");
	json_decref(j);
	cr_expect_eq(claim(tok, "lab1", NULL, "[" TEST_RT "]", 0, NULL), 0);
	/* a job leased to lab2 cannot be heartbeaten with lab1's token */
	{
		long id = queue("{\"commit\":\"" SHA_B "\",\"suite\":\"readtwice\","
				"\"params\":{\"procs\":4}}");
		char hb[96];
		cr_assert_eq(claim(TOKEN_COLLECTOR, "lab2", NULL, "[" TEST_RT "]", 0, NULL), id);
		snprintf(hb, sizeof(hb), "/api/v1/jobs/%ld/heartbeat", id);
		cr_expect_eq(call("POST", hb, tok, "{}", NULL), 403);
		cr_expect_eq(call("POST", hb, TOKEN_COLLECTOR, "{}", NULL), 200);
	}
	free(out);
	cr_expect_neq(kperfd_cli(&K, bad, &out, &err), 0);
	cr_expect(err && strstr(err, "--machines"), "%s", err);
	free(out);
	free(err);
}

/* A bisection started by hand: refused unless bad descends from good, then
 * running with a job for the midpoint's runs (issue 19). */
Test(jobs, a_bisection_started_by_hand_queues_its_midpoint)
{
	json_t *j;
	long id;
	char path[64];

	cr_assert_eq(post_run(TOKEN_COLLECTOR, "b-good", "lab1", SHA_A, 0), 201);
	cr_expect_eq(call("POST", "/api/v1/bisections", TOKEN_COLLECTOR,
			  "{\"good\":\"" SHA_A "\",\"bad\":\"" SHA_B "\",\"machine\":\"lab1\","
			  "\"suite\":\"readtwice\",\"params\":{\"procs\":\"4\"},"
			  "\"metric\":\"readtwice.throughput\"}",
			  NULL),
		     403, "starting a bisection needs an admin token");
	cr_expect_eq(call("POST", "/api/v1/bisections", TOKEN_ADMIN,
			  "{\"good\":\"" SHA_B "\",\"bad\":\"" SHA_A "\",\"machine\":\"lab1\","
			  "\"suite\":\"readtwice\",\"params\":{\"procs\":\"4\"},"
			  "\"metric\":\"readtwice.throughput\"}",
			  &j),
		     400, "bad must descend from good");
	cr_expect_str_eq(str(j, "field"), "bad");
	json_decref(j);
	cr_expect_eq(call("POST", "/api/v1/bisections", TOKEN_ADMIN,
			  "{\"good\":\"" SHA_A "\",\"bad\":\"" SHA_B "\",\"machine\":\"lab1\","
			  "\"suite\":\"readtwice\",\"params\":{\"procs\":\"4\"},"
			  "\"metric\":\"no.such.metric\"}",
			  &j),
		     404);
	cr_expect_str_eq(str(j, "field"), "metric");
	json_decref(j);
	cr_assert_eq(call("POST", "/api/v1/bisections", TOKEN_ADMIN,
			  "{\"good\":\"" SHA_A "\",\"bad\":\"" SHA_B "\",\"machine\":\"lab1\","
			  "\"suite\":\"readtwice\",\"params\":{\"procs\":\"4\"},"
			  "\"metric\":\"readtwice.throughput\"}",
			  &j),
		     201);
	id = num(j, "id");
	/* the answer is read after the INSERT: a worker may have ended it already
	 * (its end is checked below) */
	cr_expect(!strcmp(str(j, "state"), "running") || !strcmp(str(j, "state"), "inconclusive"),
		  "state %s", str(j, "state"));
	cr_expect_str_eq(str(j, "good"), SHA_A);
	cr_expect_str_eq(str(j, "bad"), SHA_B);
	cr_expect_eq(num(j, "commits"), 2);
	json_decref(j);
	/* two adjacent commits: the first bad one is bad itself once the ends are
	 * measured; with no runs of the bad end yet, it ends inconclusive */
	snprintf(path, sizeof(path), "/api/v1/bisections/%ld", id);
	for (double end = harness_now() + 60;;) {
		cr_assert_eq(call("GET", path, NULL, NULL, &j), 200);
		if (strcmp(str(j, "state"), "running"))
			break;
		json_decref(j);
		j = NULL;
		if (harness_now() >= end)
			break;
		usleep(100000);
	}
	cr_assert_not_null(j, "the bisection did not end within 60 s");
	cr_expect_str_eq(str(j, "state"), "inconclusive");
	cr_expect(strstr(str(j, "reason"), "an end of the range has no runs") != NULL, "%s",
		  str(j, "reason"));
	json_decref(j);
	cr_expect_eq(call("GET", "/api/v1/bisections?state=inconclusive&machine=lab1", NULL, NULL, &j),
		     200);
	cr_expect_eq(num(j, "total"), 1);
	json_decref(j);
	cr_expect_eq(call("GET", "/api/v1/bisections?state=nope", NULL, NULL, NULL), 400);
}

/*
 * A regression waiting for its confirmation runs, which never come: after
 * KPERF_CONFIRM_TIMEOUT_S it is mailed, saying it is unconfirmed. Its alert
 * is due a second after the decision (KPERF_ALERT_SETTLE_S) but held while
 * the decision waits; the 8 s timeout leaves seconds to see it held.
 */
Test(jobs, an_unconfirmed_regression_is_mailed_after_the_timeout, .timeout = 120)
{
	char maildir[512], smtp_env[64];
	const char *env[] = {smtp_env, "KPERF_ALERT_SETTLE_S=1", "KPERF_CONFIRM_RUNS=3",
			     "KPERF_CONFIRM_TIMEOUT_S=8", NULL};
	int smtp_port = 0, mailed;
	long held;
	double end;
	pid_t smtp;
	char *msg;

	harness_tmpdir(maildir, sizeof(maildir), "mail-unconfirmed");
	smtp = smtp_start(&smtp_port, maildir);
	snprintf(smtp_env, sizeof(smtp_env), "KPERF_SMTP_URL=smtp://127.0.0.1:%d", smtp_port);
	kperfd_kill(&K);
	kperfd_env(env);
	kperfd_restart(&K);
	kperfd_env(NULL);
	cr_assert_eq(call("POST", "/api/v1/subscriptions", TOKEN_ADMIN,
			  "{\"email\":\"late@example.org\",\"machine\":\"lab1\"}", NULL),
		     201);
	/* lab1's agent offers the test (a claim), then goes away */
	cr_assert_eq(claim(TOKEN_COLLECTOR, "lab1", NULL, "[" TEST_RT "]", 0, NULL), 0);
	cr_assert_eq(call("POST", "/api/v1/runs", TOKEN_COLLECTOR,
			  "{\"run_id\":\"u-a\",\"machine\":{\"name\":\"lab1\"},"
			  "\"kernel\":{\"commit\":\"" SHA_A "\"},\"test\":{\"suite\":\"readtwice\","
			  "\"params\":{\"procs\":\"4\"}},"
			  "\"metrics\":{\"readtwice.throughput\":[1000,1001,999,1002,998]}}",
			  NULL),
		     201);
	cr_assert_eq(call("POST", "/api/v1/runs", TOKEN_COLLECTOR,
			  "{\"run_id\":\"u-b\",\"machine\":{\"name\":\"lab1\"},"
			  "\"kernel\":{\"commit\":\"" SHA_B "\"},\"test\":{\"suite\":\"readtwice\","
			  "\"params\":{\"procs\":\"4\"}},"
			  "\"metrics\":{\"readtwice.throughput\":[900,901,899,902,898]}}",
			  NULL),
		     201);
	/* waiting, with a job for the missing runs of each side */
	end = harness_now() + 30;
	while (!harness_count(&K, "SELECT count(*) FROM decision WHERE confirmation = 'waiting'")) {
		cr_assert_lt(harness_now(), end, "the regression waits for its confirmation");
		usleep(50000);
	}
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM job WHERE decision_id IS NOT NULL"
				       " AND state = 'queued' AND runs = 2"),
		     2);
	/* no mail while it waits: a second past its alert's due time (the
	 * mailer looks every 250 ms) the alert is still pending and nothing is
	 * delivered, as long as the decision still waits after the Maildir is
	 * read */
	end = harness_now() + 30;
	while (!harness_count(&K, "SELECT count(*) FROM alert"
				  " WHERE due_at < now() - interval '1 second'")) {
		cr_assert_lt(harness_now(), end, "the regression's alert is not queued");
		usleep(50000);
	}
	mailed = maildir_count(maildir);
	held = harness_count(&K, "SELECT CASE WHEN EXISTS (SELECT 1 FROM decision"
				 "  WHERE confirmation = 'waiting')"
				 " THEN (SELECT count(*) FROM alert WHERE state <> 'pending')"
				 " ELSE -1 END");
	if (held >= 0) {
		cr_expect_eq(mailed, 0, "no mail while it waits");
		cr_expect_eq(held, 0, "an alert taken while the decision waits");
	} else {
		cr_log_warn("the confirmation timed out before the held alert was looked at");
	}
	end = harness_now() + 60;
	while (maildir_count(maildir) < 1 && harness_now() < end)
		usleep(100000);
	cr_assert_eq(maildir_count(maildir), 1, "mailed once the wait is over");
	msg = maildir_read(maildir, 0);
	cr_expect(strstr(msg, "This change is unconfirmed") != NULL, "%s", msg);
	cr_expect(strstr(msg, "readtwice.throughput") != NULL, "%s", msg);
	free(msg);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM decision WHERE"
				       " confirmation = 'unconfirmed'"),
		     1);
	smtp_stop(smtp);
}

/*
 * A confirmation job that ended, its runs committed, after the decision
 * counted its runs: the stale count asks for no second job. kperfd runs
 * without its worker, so the decision keeps target_runs 1 while the target
 * has 3 runs stored; confirm_after_decide is then called as the worker
 * would, on that decision.
 */
Test(jobs, a_confirmation_done_since_the_decision_is_not_asked_again)
{
	const char *env[] = {"KPERF_CONFIRM_RUNS=3", NULL};
	const char *off[] = {"KPERF_CONFIRM_RUNS=3", "KPERF_WORKER=0", NULL};
	char ids[4][32], job_id[24];
	json_t *job = NULL;
	long id;
	double end;
	PGconn *c;

	kperfd_kill(&K);
	kperfd_env(env);
	kperfd_restart(&K);
	kperfd_env(NULL);
	cr_assert_eq(claim(TOKEN_COLLECTOR, "lab1", NULL, "[" TEST_RT "]", 0, NULL), 0);
	cr_assert_eq(call("POST", "/api/v1/runs", TOKEN_COLLECTOR,
			  "{\"run_id\":\"s-a\",\"machine\":{\"name\":\"lab1\"},"
			  "\"kernel\":{\"commit\":\"" SHA_A "\"},\"test\":" TEST_RT ","
			  "\"metrics\":{\"readtwice.throughput\":[1000,1001,999,1002,998]}}",
			  NULL),
		     201);
	cr_assert_eq(call("POST", "/api/v1/runs", TOKEN_COLLECTOR,
			  "{\"run_id\":\"s-b\",\"machine\":{\"name\":\"lab1\"},"
			  "\"kernel\":{\"commit\":\"" SHA_B "\"},\"test\":" TEST_RT ","
			  "\"metrics\":{\"readtwice.throughput\":[900,901,899,902,898]}}",
			  NULL),
		     201);
	end = harness_now() + 30;
	while (harness_count(&K, "SELECT count(*) FROM job WHERE decision_id IS NOT NULL") < 2) {
		cr_assert_lt(harness_now(), end, "no confirmation jobs");
		usleep(50000);
	}

	/* no worker from here: the decision stays as it is */
	kperfd_kill(&K);
	kperfd_env(off);
	kperfd_restart(&K);
	kperfd_env(NULL);
	id = claim(TOKEN_COLLECTOR, "lab1", SHA_B, "[" TEST_RT "]", 0, &job);
	cr_assert_gt(id, 0);
	cr_assert_str_eq(str(job, "commit"), SHA_B, "the target's job");
	cr_assert_eq(num(job, "runs"), 2);
	json_decref(job);
	cr_assert_eq(post_run(TOKEN_COLLECTOR, "s-b2", "lab1", SHA_B, id), 201);
	cr_assert_eq(post_run(TOKEN_COLLECTOR, "s-b3", "lab1", SHA_B, id), 201);
	snprintf(job_id, sizeof(job_id), "%ld", id);
	{
		const char *p[1] = {job_id};
		cr_assert_eq(harness_count_params(&K, "SELECT count(*) FROM job WHERE id = $1::bigint"
							  " AND state = 'done'",
						  1, p),
			     1);
	}
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM decision WHERE target_runs = 1"
				       " AND confirmation = 'waiting' AND kpi"),
		     1, "the decision counts the target's first run only");

	db_setup(K.conninfo);
	c = db_get();
	cr_assert_not_null(c);
	{
		static const char *const of[4] = {
		    "SELECT machine_id FROM decision WHERE confirmation = 'waiting' AND kpi",
		    "SELECT test_id FROM decision WHERE confirmation = 'waiting' AND kpi",
		    "SELECT variant_id FROM decision WHERE confirmation = 'waiting' AND kpi",
		    "SELECT commit_id FROM decision WHERE confirmation = 'waiting' AND kpi"};
		for (int i = 0; i < 4; i++)
			snprintf(ids[i], sizeof(ids[i]), "{%ld}", harness_count(&K, of[i]));
	}
	cr_expect_eq(confirm_after_decide(c, ids[0], ids[1], ids[2], ids[3]), 0);
	db_release();
	db_drop();
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM job j JOIN commits c ON"
				       " c.id = j.commit_id WHERE c.sha = '" SHA_B "'"),
		     1, "a second job for the target's runs, stored already");
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM job j JOIN commits c ON"
				       " c.id = j.commit_id WHERE c.sha = '" SHA_A "'"
				       " AND j.state = 'queued'"),
		     1, "the base's job");
}
