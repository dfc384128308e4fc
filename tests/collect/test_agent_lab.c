/*
 * test_agent_lab.c - the lab loop of the agent suite (test_agent.c) end to
 * end: agents confirm a regression and bisect it to its first bad commit,
 * mailed once; a regression their runs refute mails nothing.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/collect/agent_lab.h"
#include "tests/integration/harness.h"
#include "tests/collect/testutil.h"

/* ---- the lab loop: confirmation, then bisection to the first bad commit ---- */

#define BIS_COMMITS 16
#define BIS_FIRST_BAD 10 /* commits are numbered 1..16 */

/* A kbench run (case sleep) of samples (stolen) as kperf-collect posts it;
 * the status. */
static long post_kbench(const char *run_id, const char *machine, const char *sha, json_t *samples)
{
	struct run_doc d = {
		.run_id = run_id,
		.machine = machine,
		.commit = sha,
		.suite = "kbench",
		.params = json_pack("{s:s}", "case", "sleep"),
		.metrics = json_pack("{s:o}", "kbench.throughput", samples),
	};

	return harness_post_run(&lab_kperfd, NULL, &d, NULL);
}

static void bis_sha(char *out, size_t cap, int i)
{
	snprintf(out, cap, "cc%02d%036d", i, 0);
}

/* One run of 5 iterations posted for commit i as kperf-collect would. */
static void bis_post(int i)
{
	char id[32], sha[48];
	int base = i >= BIS_FIRST_BAD ? 900 : 1000;

	bis_sha(sha, sizeof(sha), i);
	snprintf(id, sizeof(id), "bis-seed-%d", i);
	cr_assert_eq(
	    post_kbench(id, "lab-bis", sha,
	                json_pack("[i,i,i,i,i]", base - 1, base + 2, base, base - 2, base + 1)),
	    201);
}

/*
 * Issue 19: 16 commits in a first-parent chain, one run of 5 iterations on
 * the first and the last, the workload 10% slower from commit 10 on. Two
 * agents of the machine confirm the regression (2 more runs of each end),
 * then kperfd bisects it to commit 10: every job run once, no commit
 * measured that the bisection did not need, and one mail, naming commit 10.
 */
Test(agent, two_agents_confirm_then_bisect_to_the_first_bad_commit, .timeout = 300)
{
	struct lab l[2];
	struct agent_proc ap[2];
	char cwd[2048], maildir[512], smtp_env[64], hook[2][4400], running[2][4400];
	char commits[8192], sha[48], slow[512] = "";
	const char *env[] = {smtp_env, "KPERF_ALERT_SETTLE_S=1", "KPERF_CONFIRM_RUNS=3",
			     "KPERF_MAIL_FROM=kperf@kperf.test", NULL};
	int smtp_port = 0;
	pid_t smtp;
	json_t *j, *b = NULL, *steps;
	size_t n = 0;

	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	tu_tmpdir(maildir, sizeof(maildir));
	smtp = smtp_start(&smtp_port, maildir);
	snprintf(smtp_env, sizeof(smtp_env), "KPERF_SMTP_URL=smtp://127.0.0.1:%d", smtp_port);
	kperfd_kill(&lab_kperfd);
	kperfd_env(env);
	kperfd_restart(&lab_kperfd);
	kperfd_env(NULL);
	snprintf(lab_url, sizeof(lab_url), "http://127.0.0.1:%d", lab_kperfd.port);

	n += (size_t)snprintf(commits + n, sizeof(commits) - n, "[");
	for (int i = 1; i <= BIS_COMMITS; i++) {
		char parent[48];
		bis_sha(sha, sizeof(sha), i);
		bis_sha(parent, sizeof(parent), i - 1);
		n += (size_t)snprintf(commits + n, sizeof(commits) - n,
				      "%s{\"sha\":\"%s\"%s%s%s,\"subject\":\"mm: step %d\","
				      "\"release\":\"6.1.0-c%02d\"}",
				      i > 1 ? "," : "", sha, i > 1 ? ",\"parent\":\"" : "",
				      i > 1 ? parent : "", i > 1 ? "\"" : "", i, i);
		if (i >= BIS_FIRST_BAD)
			snprintf(slow + strlen(slow), sizeof(slow) - strlen(slow), " %s", sha);
	}
	snprintf(commits + n, sizeof(commits) - n, "]");
	cr_assert_eq(call("POST", "/api/v1/commits", TOKEN_COLLECTOR, commits, NULL), 201);
	cr_assert_eq(call("POST", "/api/v1/subscriptions", TOKEN_ADMIN,
			  "{\"email\":\"bisect@example.org\",\"machine\":\"lab-bis\","
			  "\"metric\":\"kbench.*\"}",
			  NULL),
		     201);

	/* two agents of one machine, each booting kernels through the hook */
	for (int a = 0; a < 2; a++) {
		char text[4096], name[16];
		const char *more[] = {"--kernel-hook", hook[a], "--running-cmd", running[a],
				      "--idle-exit", "120", NULL};
		bis_sha(sha, sizeof(sha), 1);
		lab_init(&l[a], sha, "6.1.0-c01");
		snprintf(text, sizeof(text),
			 "[kbench]\nsuite = kbench\nparams = case=sleep\nformat = lkp-stats-json\n"
			 "iterations = 5\ncommand = /bin/sh '%s/" WORKLOAD "' '%s' 0%s\n",
			 cwd, l[a].kernel, slow);
		tu_write(l[a].dir, "catalogue", text);
		snprintf(hook[a], sizeof(hook[a]), "/bin/sh '%s/" HOOK "' '%s'", cwd, l[a].kernel);
		snprintf(running[a], sizeof(running[a]), "cat '%s'", l[a].kernel);
		snprintf(name, sizeof(name), "lab-bis");
		agent_start(&ap[a], &l[a], name, more);
	}
	/* the agents' claims tell kperfd the machine offers the test */
	for (double end = now_s() + WAIT_S; now_s() < end;) {
		if (harness_count(&lab_kperfd, "SELECT count(*) FROM machine_offer o JOIN machine m"
				      " ON m.id = o.machine_id WHERE m.name = 'lab-bis'") > 0)
			break;
		pause_ms(100);
	}
	bis_post(1);
	bis_post(BIS_COMMITS);

	for (double end = now_s() + 4 * WAIT_S;;) {
		cr_assert_eq(call("GET", "/api/v1/bisections?machine=lab-bis", NULL, NULL, &j), 200);
		if (json_array_size(json_object_get(j, "items")) == 1) {
			b = json_incref(json_array_get(json_object_get(j, "items"), 0));
			if (strcmp(job_str(b, "state"), "running")) {
				json_decref(j);
				break;
			}
			json_decref(b);
			b = NULL;
		}
		json_decref(j);
		cr_assert(now_s() < end, "no bisection ended within %d s", 4 * WAIT_S);
		pause_ms(200);
	}
	for (int a = 0; a < 2; a++)
		kill(ap[a].pid, SIGTERM);
	cr_expect_str_eq(job_str(b, "state"), "found", "%s", job_str(b, "reason"));
	bis_sha(sha, sizeof(sha), BIS_FIRST_BAD);
	cr_expect_str_eq(job_str(b, "first_bad"), sha);
	bis_sha(sha, sizeof(sha), BIS_FIRST_BAD - 1);
	cr_expect_str_eq(job_str(b, "last_good"), sha);
	/* the midpoints of 1..16: 8 good, 12 bad, 10 bad, 9 good */
	steps = json_object_get(b, "steps");
	cr_expect_eq(json_array_size(steps), 4);
	{
		static const int want[4] = {8, 12, 10, 9};
		static const char *const cls[4] = {"good", "bad", "bad", "good"};
		for (size_t i = 0; i < json_array_size(steps) && i < 4; i++) {
			json_t *st = json_array_get(steps, i);
			bis_sha(sha, sizeof(sha), want[i]);
			cr_expect_str_eq(job_str(st, "commit"), sha, "step %zu", i);
			cr_expect_str_eq(job_str(st, "class"), cls[i], "step %zu", i);
			cr_expect_eq(job_num(st, "runs"), 3, "step %zu", i);
		}
	}
	json_decref(b);
	/* every job ran once and whole: 2 confirmations, 4 steps */
	cr_expect_eq(harness_count(&lab_kperfd, "SELECT count(*) FROM job"), 6);
	cr_expect_eq(harness_count(&lab_kperfd, "SELECT count(*) FROM job WHERE state = 'done'"
				       " AND attempts = 0 AND runs_done = runs"),
		     6);
	cr_expect_eq(harness_count(&lab_kperfd, "SELECT count(*) FROM job WHERE decision_id IS NOT NULL"),
		     2);
	/* nothing measured beyond what the bisection needed */
	cr_expect_eq(harness_count(&lab_kperfd, "SELECT count(DISTINCT commit_id) FROM run"), 6);
	cr_expect_eq(harness_count(&lab_kperfd, "SELECT count(*) FROM run"), 3 + 3 + 4 * 3);
	/* one mail, naming commit 10 as the culprit, with the steps */
	for (double end = now_s() + WAIT_S; now_s() < end && maildir_count(maildir) < 1;)
		pause_ms(100);
	pause_ms(3000); /* a second message would come within the settle time */
	cr_expect_eq(maildir_count(maildir), 1);
	if (maildir_count(maildir) >= 1) {
		char *msg = maildir_read(maildir, 0);
		bis_sha(sha, sizeof(sha), BIS_FIRST_BAD);
		cr_expect(strstr(msg, sha) != NULL, "the mail names commit 10:\n%s", msg);
		cr_expect(strstr(msg, "bisected") != NULL, "%s", msg);
		cr_expect(strstr(msg, "mm: step 10") != NULL, "%s", msg);
		free(msg);
	}
	for (int a = 0; a < 2; a++)
		agent_wait(&ap[a], WAIT_S);
	smtp_stop(smtp);
}

/* A regression the labs' runs do not bear out: refuted, and nothing mailed. */
Test(agent, a_refuted_regression_mails_nothing, .timeout = 240)
{
	struct lab l;
	struct agent_proc ap;
	char cwd[2048], maildir[512], smtp_env[64], hook[6600], running[4400], text[8192];
	const char *env[] = {smtp_env, "KPERF_ALERT_SETTLE_S=1", "KPERF_CONFIRM_RUNS=3", NULL};
	const char *more[] = {"--kernel-hook", hook, "--running-cmd", running, "--idle-exit", "60",
			      NULL};
	int smtp_port = 0;
	pid_t smtp;

	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	tu_tmpdir(maildir, sizeof(maildir));
	smtp = smtp_start(&smtp_port, maildir);
	snprintf(smtp_env, sizeof(smtp_env), "KPERF_SMTP_URL=smtp://127.0.0.1:%d", smtp_port);
	kperfd_kill(&lab_kperfd);
	kperfd_env(env);
	kperfd_restart(&lab_kperfd);
	kperfd_env(NULL);
	snprintf(lab_url, sizeof(lab_url), "http://127.0.0.1:%d", lab_kperfd.port);
	cr_assert_eq(call("POST", "/api/v1/subscriptions", TOKEN_ADMIN,
			  /* its KPI: kperf-collect's time.* rows of these
			   * short runs move with the machine's load, and a
			   * monitor's change is mailed without confirmation */
			  "{\"email\":\"refute@example.org\",\"machine\":\"lab-ref\","
			  "\"metric\":\"kbench.*\"}",
			  NULL),
		     201);
	lab_init(&l, SHA_A, "6.1.0-a");
	snprintf(text, sizeof(text),
		 "[kbench]\nsuite = kbench\nparams = case=sleep\nformat = lkp-stats-json\n"
		 "iterations = 5\ncommand = /bin/sh '%s/" WORKLOAD "' '%s' 0\n",
		 cwd, l.kernel);
	tu_write(l.dir, "catalogue", text);
	snprintf(hook, sizeof(hook), "/bin/sh '%s/" HOOK "' '%s'", cwd, l.kernel);
	snprintf(running, sizeof(running), "cat '%s'", l.kernel);
	agent_start(&ap, &l, "lab-ref", more);
	for (double end = now_s() + WAIT_S; now_s() < end;) {
		if (harness_count(&lab_kperfd, "SELECT count(*) FROM machine_offer o JOIN machine m"
				      " ON m.id = o.machine_id WHERE m.name = 'lab-ref'") > 0)
			break;
		pause_ms(100);
	}
	/* one run each: the child 1.5% slower, a regression as far as two runs tell */
	cr_assert_eq(post_kbench("ref-a", "lab-ref", SHA_A,
	                         json_pack("[i,i,i,i,i]", 999, 1001, 1000, 1002, 998)),
	             201);
	cr_assert_eq(post_kbench("ref-b", "lab-ref", SHA_B,
	                         json_pack("[i,i,i,i,i]", 984, 986, 985, 987, 983)),
	             201);
	for (double end = now_s() + 2 * WAIT_S; now_s() < end;) {
		if (harness_count(&lab_kperfd, "SELECT count(*) FROM decision d JOIN metric m"
				      " ON m.id = d.metric_id WHERE m.name = 'kbench.throughput'"
				      " AND d.confirmation = 'refuted'") == 1)
			break;
		pause_ms(100);
	}
	kill(ap.pid, SIGTERM);
	/* confirm_started_at is set when a decision starts to wait, and kept */
	cr_expect_eq(harness_count(&lab_kperfd, "SELECT count(*) FROM decision d JOIN metric m"
				       " ON m.id = d.metric_id WHERE m.name = 'kbench.throughput'"
				       " AND d.confirm_started_at IS NOT NULL"),
		     1, "the regression waited for its confirmation");
	cr_expect_eq(harness_count(&lab_kperfd, "SELECT count(*) FROM decision d JOIN metric m"
				       " ON m.id = d.metric_id WHERE m.name = 'kbench.throughput'"
				       " AND d.confirmation = 'refuted' AND d.verdict = 'noise'"
				       " AND d.base_runs = 3 AND d.target_runs = 3"),
		     1, "refuted by 3 runs a side");
	cr_expect_eq(harness_count(&lab_kperfd, "SELECT count(*) FROM job WHERE state = 'done'"
				       " AND decision_id IS NOT NULL"),
		     2, "a job for each side's missing runs");
	pause_ms(3000); /* past the settle time */
	cr_expect_eq(maildir_count(maildir), 0, "a refuted regression mails nothing");
	agent_wait(&ap, WAIT_S);
	smtp_stop(smtp);
}
