/*
 * test_failover.c - PostgreSQL killed under a stream of posts (SIGKILL to
 * the postmaster, a crash, not a stop): the cluster restarted, and a
 * synchronous hot standby promoted in its place, several times in a row
 * under one kperfd. kperfd must not crash (issue 16: a connection freed by
 * a reconnect while its request still used it), must answer 503 in the
 * outage and write again afterwards without a restart, and must lose no
 * acknowledged run nor store one twice.
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/integration/harness_load.h"

/* synchronous_commit on: a COMMIT is acknowledged once the standby has it */
#define PRIMARY_OPTS                                                                  \
	"-c fsync=off -c full_page_writes=off -c max_connections=100"                  \
	" -c synchronous_commit=on -c synchronous_standby_names=kperf_sb"
#define STANDBY_OPTS "-c fsync=off -c full_page_writes=off -c max_connections=100"

static void sleep_ms(int ms)
{
	usleep((useconds_t)ms * 1000);
}

/* kperfd is still running (not killed by a signal, not exited). */
static void expect_alive(const struct kperfd *k, int round)
{
	int status = 0;
	pid_t w = waitpid(k->pid, &status, WNOHANG);

	cr_assert_eq(w, 0, "round %d: kperfd died (%s %d); see %s", round,
		     WIFSIGNALED(status) ? "signal" : "exit status",
		     WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), k->log);
}

/*
 * One round: nposters posters for a while, then outage(), then posters on until some
 * runs were acknowledged after it. Every acknowledged run is stored exactly
 * once; runs answered otherwise are none.
 */
static void round_under_load(const struct kperfd *k, int round, int nposters,
			     void (*outage)(void *), void *arg)
{
	static struct load l;
	struct load_sum s;
	char prefix[16];

	snprintf(prefix, sizeof(prefix), "f%d", round);
	load_start(&l, k, prefix, nposters, 0);
	sleep_ms(1500);
	outage(arg);
	load_outage(&l);
	load_wait_after(&l, 4, 30);
	load_stop(&l);
	expect_alive(k, round);
	s = load_sum(&l);
	load_check_stored(&l, NULL);
	cr_expect_gt(s.r503 + s.r503_bare + s.none, 0,
		     "round %d: no 503 (or dropped request) during the outage", round);
	cr_expect_geq(s.acked_after, 4 * nposters,
		      "round %d: only %d runs acknowledged after the database came back", round,
		      s.acked_after);
	cr_expect_eq(harness_count(k, "SELECT count(*) FROM run"),
		     harness_count(k, "SELECT count(DISTINCT run_id) FROM run"));
	cr_log_info("round %d: %d runs acknowledged (%d after the outage), %d retries\n", round,
		    s.acked, s.acked_after, s.r503 + s.r503_bare + s.none);
}

static void kill_and_restart(void *arg)
{
	struct pg_cluster *cl = arg;

	cr_assert_eq(pg_cluster_ctl(cl, "kill"), 0);
	sleep_ms(1500);
	cr_assert_eq(pg_cluster_ctl(cl, "start"), 0, "the killed cluster did not start again");
}

Test(failover, postmaster_killed_and_restarted, .timeout = 300)
{
	struct pg_cluster pgc;
	struct kperfd k;
	const char *env[] = {"KPERF_THREADS=8", NULL};

	curl_global_init(CURL_GLOBAL_ALL);
	pg_cluster_start(&pgc, "pgkill", STANDBY_OPTS);
	kperfd_env(env);
	kperfd_start(&k, pgc.pg);
	kperfd_env(NULL);
	for (int round = 0; round < 3; round++)
		round_under_load(&k, round, 8, kill_and_restart, &pgc);
	kperfd_stop(&k);
	pg_cluster_ctl(&pgc, "stop");
}

struct pair {
	struct pg_cluster *primary, *standby;
};

/* SIGKILL to the primary's postmaster; the standby promoted 1.5 s later. */
static void kill_and_promote(void *arg)
{
	struct pair *pr = arg;
	struct pg_cluster *t;

	cr_assert_eq(pg_cluster_ctl(pr->primary, "kill"), 0);
	sleep_ms(1500);
	cr_assert_eq(pg_cluster_ctl(pr->standby, "promote"), 0, "promotion failed");
	t = pr->primary;
	pr->primary = pr->standby;
	pr->standby = t;
}

Test(failover, primary_killed_standby_promoted, .timeout = 300)
{
	struct pg_cluster a, b = {0};
	struct pair pr = {&a, &b};
	struct kperfd k;
	char pg[1600], maildir[512], smtp_env[64];
	const char *env[] = {"KPERF_THREADS=8", smtp_env, "KPERF_ALERT_SETTLE_S=1", NULL};
	int smtp_port = 0;
	pid_t smtp;
	double end;

	curl_global_init(CURL_GLOBAL_ALL);
	harness_tmpdir(maildir, sizeof(maildir), "mail-failover");
	smtp = smtp_start(&smtp_port, maildir);
	snprintf(smtp_env, sizeof(smtp_env), "KPERF_SMTP_URL=smtp://127.0.0.1:%d", smtp_port);
	pg_cluster_start(&a, "pgfa", PRIMARY_OPTS);
	pg_cluster_standby(&b, &a, "kperf_sb", STANDBY_OPTS);
	snprintf(pg, sizeof(pg),
		 "host=%s/sock,%s/sock port=%d,%d user=kperf target_session_attrs=read-write",
		 a.dir, b.dir, a.port, b.port);
	kperfd_env(env);
	kperfd_start(&k, pg);
	kperfd_env(NULL);
	{ /* mail for one machine's regressions */
		struct resp r;
		http_post_json(&k, "/api/v1/subscriptions", TOKEN_ADMIN,
			       "{\"email\":\"failover@example.org\",\"machine\":\"fo-mail\"}", &r);
		cr_assert_eq(r.status, 201, "%s", r.body);
		resp_release(&r);
	}
	/* 16 keep-alive clients (issue 21's failover) */
	for (int round = 0; round < 3; round++) {
		round_under_load(&k, round, 16, kill_and_promote, &pr);
		/* the killed primary comes back as the new primary's synchronous standby */
		pg_cluster_standby(pr.standby, pr.primary, "kperf_sb", STANDBY_OPTS);
		pg_cluster_exec(pr.primary,
				"ALTER SYSTEM SET synchronous_standby_names = 'kperf_sb'");
		pg_cluster_exec(pr.primary, "SELECT pg_reload_conf()");
	}
	{ /* /healthz and /metrics name the primary kperfd writes to now, switched 3 times */
		json_t *h = harness_get_json(&k, "/healthz", 200), *w = json_object_get(h, "writes_to");
		char host[600], port[16], line[700];
		struct resp r;
		snprintf(host, sizeof(host), "%s/sock", pr.primary->dir);
		snprintf(port, sizeof(port), "%d", pr.primary->port);
		cr_assert_str_eq(json_string_value(json_object_get(w, "host")), host);
		cr_assert_str_eq(json_string_value(json_object_get(w, "port")), port);
		cr_assert_eq((long)json_number_value(json_object_get(w, "switches")), 3);
		cr_assert_not_null(json_string_value(json_object_get(w, "since")));
		json_decref(h);
		http_get(&k, "/metrics", &r);
		cr_assert(strstr(r.body, "kperf_db_node_switches_total{pool=\"write\"} 3\n"), "%s",
			  r.body);
		snprintf(line, sizeof(line), "kperf_db_node_info{pool=\"write\",host=\"%s\",port=\"%s\"",
			 host, port);
		cr_assert(strstr(r.body, line), "%s", line);
		resp_release(&r);
	}
	/* the decision workers and the mailer go on on the third primary: a
	 * regression posted now is decided and mailed, once */
	for (int i = 0; i < 6; i++) {
		char body[512];
		struct resp r;
		snprintf(body, sizeof(body),
			 "{\"run_id\":\"fo-mail-%d\",\"machine\":{\"name\":\"fo-mail\"},"
			 "\"kernel\":{\"commit\":\"%s\"%s},\"test\":{\"suite\":\"will-it-scale\"},"
			 "\"metrics\":{\"will-it-scale.per_process_ops\":[%d,%d,%d]}}",
			 i, i < 3 ? "a1a1000000000000000000000000000000000001"
				  : "a1a1000000000000000000000000000000000002",
			 i < 3 ? "" : ",\"parent\":\"a1a1000000000000000000000000000000000001\"",
			 i < 3 ? 1000 : 880, i < 3 ? 1003 : 881, i < 3 ? 998 : 879);
		http_post_json(&k, "/api/v1/runs", TOKEN_COLLECTOR, body, &r);
		cr_assert_eq(r.status, 201, "%s", r.body);
		resp_release(&r);
	}
	for (end = harness_now() + 60; maildir_count(maildir) < 1 && harness_now() < end;)
		usleep(100000);
	cr_expect_eq(maildir_count(maildir), 1, "no message 60 s after the regression");
	/* marked sent once the SMTP server answered, a moment after the Maildir has it */
	for (end = harness_now() + 60;
	     harness_count(&k, "SELECT count(*) FROM alert WHERE state = 'sent'") < 1 &&
	     harness_now() < end;)
		usleep(100000);
	usleep(3000000); /* a second message would come meanwhile */
	cr_expect_eq(maildir_count(maildir), 1, "one message after three failovers");
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM alert WHERE state = 'sent'"), 1);
	expect_alive(&k, 3);
	kperfd_stop(&k);
	smtp_stop(smtp);
	pg_cluster_ctl(&a, "stop");
	pg_cluster_ctl(&b, "stop");
}
