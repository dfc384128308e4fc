/*
 * test_alerts.c - alert mail through a real SMTP server on loopback
 * (python3-aiosmtpd writing a Maildir): one message per regression with
 * LKP-style content and links, follow-ups in the thread, unsubscribe, SMTP
 * outages, restarts, two kperfd on one database, and daily digests.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/integration/harness.h"

static struct kperfd K;
static pid_t smtp_pid;
static int smtp_port;
static char maildir[400];
static char env_url[64], env_dummy[8] = "X=1";
static const char *env[] = {env_url,
			    "KPERF_ALERT_SETTLE_S=1",
			    "KPERF_SMTP_RETRY_S=1",
			    "KPERF_PUBLIC_URL=http://kperf.test",
			    "KPERF_MAIL_FROM=kperf@kperf.test",
			    env_dummy,
			    NULL};

#define PARENT "a4fe1631f313f75c9d8f4b5e0e9cba1c1bd1d68e"
#define CHILD "1431d4d11abb265e79cd44bed2f5ea93f1bcc57b"
#define FIX "ffff1631f313f75c9d8f4b5e0e9cba1c1bd1d6ff"

/* Start kperfd with mail on; the SMTP server too unless smtp_later. */
static void start(int smtp_later, const char *settle)
{
	harness_tmpdir(maildir, sizeof(maildir), "mail");
	smtp_port = 0;
	if (!smtp_later)
		smtp_pid = smtp_start(&smtp_port, maildir);
	else {
		smtp_pid = 0;
		smtp_port = harness_free_port();
	}
	snprintf(env_url, sizeof(env_url), "KPERF_SMTP_URL=smtp://127.0.0.1:%d", smtp_port);
	env[1] = settle ? settle : "KPERF_ALERT_SETTLE_S=1";
	kperfd_env(env);
	kperfd_start(&K, NULL);
}

static void teardown(void)
{
	kperfd_stop(&K);
	smtp_stop(smtp_pid);
	kperfd_env(NULL);
}

TestSuite(alerts, .fini = teardown, .timeout = 180);

static void subscribe(const char *json)
{
	harness_post_ok(&K, "/api/v1/subscriptions", TOKEN_ADMIN, json);
}

static void post_run(const char *id, const char *sha, const char *parent, double tput)
{
	char msgid[80];
	struct run_doc d = {
		.run_id = id,
		.machine = "lkp-bdw-ex2",
		.machine_more = json_pack("{s:s,s:i,s:i,s:i}", "cpu_model", "Xeon E7-8890 v4",
					  "nr_cpus", 160, "sockets", 4, "memory_mb", 262144),
		.commit = sha,
		.parent = parent,
		.suite = "vm-scalability",
		.params = json_pack("{s:s,s:s}", "test", "lru-file-mmap-read", "runtime", "300s"),
		.more = json_pack("{s:s}", "command", "./case-lru-file-mmap-read"),
		.metrics = json_pack("{s:[I]}", "vm-scalability.throughput", (json_int_t)tput),
	};
	struct resp r;

	snprintf(msgid, sizeof(msgid), "<patch-%s@example.org>", sha);
	d.kernel_more = json_pack("{s:s,s:[s],s:s}", "subject",
				  !strcmp(sha, CHILD) ? "mm: base LRU balancing on an explicit cost model"
						      : "mm: a commit",
				  "files", "mm/vmscan.c", "message_id", msgid);
	harness_post_run(&K, NULL, &d, &r);
	cr_assert(r.status == 201 || r.status == 200, "run %s: %ld %s", id, r.status, r.body);
	resp_release(&r);
}

static void post_pair(void)
{
	static const double p[] = {20717269, 20650000, 20790000, 20711807};
	static const double c[] = {18336098, 18300000, 18390000, 18318294};
	char id[32];
	for (int i = 0; i < 4; i++) {
		snprintf(id, sizeof(id), "p%d", i);
		post_run(id, PARENT, NULL, p[i]);
		snprintf(id, sizeof(id), "c%d", i);
		post_run(id, CHILD, PARENT, c[i]);
	}
}

/* Bounds on waits: generous, for a loaded 2-core machine and the sanitizer build. */
#define WAIT_S 60

/* Until want messages are delivered (at most WAIT_S); asserts there are want. */
static void wait_mail(int want)
{
	double end = harness_now() + WAIT_S;

	while (maildir_count(maildir) < want && harness_now() < end)
		usleep(100000);
	cr_assert_eq(maildir_count(maildir), want, "messages delivered: %d, want %d",
		     maildir_count(maildir), want);
}

/* Poll a count until it is want (at most WAIT_S); the last count. */
static long wait_count(const char *sql, long want)
{
	double end = harness_now() + WAIT_S;
	long n = harness_count(&K, sql);

	while (n != want && harness_now() < end) {
		usleep(100000);
		n = harness_count(&K, sql);
	}
	return n;
}

/* The value of header name in msg (malloc'd), or NULL. */
static char *header(const char *msg, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = msg; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (*p == '\r' || *p == '\n')
			return NULL; /* end of headers */
		if (!strncasecmp(p, name, n) && p[n] == ':') {
			const char *v = p + n + 1;
			while (*v == ' ')
				v++;
			return strndup(v, strcspn(v, "\r\n"));
		}
	}
	return NULL;
}

Test(alerts, one_message_per_regression_with_followup_and_unsubscribe)
{
	char *msg, *h, *unsub;
	struct resp r;

	start(0, NULL);
	subscribe("{\"email\":\"mm-review@example.org\",\"suite\":\"vm-scalability\","
		  "\"metric\":\"vm-scalability.*\",\"files\":[\"mm/vmscan.c\",\"mm/swap.c\"],"
		  "\"min_change_pct\":2,\"verdicts\":[\"regression\"],\"delivery\":\"immediate\"}");
	subscribe("{\"email\":\"ycsb@example.org\",\"suite\":\"ycsb\"}");
	subscribe("{\"email\":\"files@example.org\",\"files\":[\"mm/memcontrol.c\"]}");
	post_pair();
	wait_mail(1);
	sleep(2);
	cr_expect_eq(maildir_count(maildir), 1, "exactly one message");
	msg = maildir_read(maildir, 0);
	h = header(msg, "Subject");
	cr_expect_str_eq(h, "[kperf] 1431d4d11abb mm: base LRU balancing on an explicit cost "
			    "model: vm-scalability.throughput -11.5% regression");
	free(h);
	h = header(msg, "To");
	cr_expect_str_eq(h, "mm-review@example.org");
	free(h);
	h = header(msg, "From");
	cr_expect_str_eq(h, "kperf <kperf@kperf.test>");
	free(h);
	h = header(msg, "In-Reply-To");
	cr_expect_str_eq(h, "<patch-" CHILD "@example.org>", "replies to the patch mail");
	free(h);
	h = header(msg, "Message-ID");
	cr_expect(h && !strncmp(h, "<kperf.alert.", 13) && strstr(h, "@kperf.test>"), "%s", h);
	free(h);
	h = header(msg, "Date");
	cr_expect(h && strstr(h, " +0000"), "%s", h);
	free(h);
	cr_expect(strstr(msg, "commit: " CHILD) != NULL, "%s", msg);
	cr_expect(strstr(msg, "(\"mm: base LRU balancing on an explicit cost model\")") != NULL);
	cr_expect(strstr(msg, "on test machine: lkp-bdw-ex2") != NULL, "%s", msg);
	cr_expect(strstr(msg, "160 threads 4 sockets Xeon E7-8890 v4 with 256G memory") != NULL);
	/* prose under 80 columns; only LKP's table is wider */
	{
		const char *p = strstr(msg, "\n\n");
		int in_table = 0;
		for (p = p ? p + 2 : msg; *p;) {
			size_t len = strcspn(p, "\r\n");
			if (!strncmp(p, "Details are as below", 20))
				in_table = 1;
			if (!strncmp(p, "To reproduce", 12))
				in_table = 0;
			cr_expect(in_table || len < 80, "line of %zu columns: %.*s", len, (int)len, p);
			p += len;
			p += strspn(p, "\r\n") > 0 && *p == '\r' ? (p[1] == '\n' ? 2 : 1) : (*p ? 1 : 0);
		}
	}
	cr_expect(strstr(msg, "\ttest: lru-file-mmap-read") != NULL);
	cr_expect(strstr(msg, "95% confidence interval of the change (Welch): [-11.9") != NULL,
		  "%s", msg);
	/* the LKP table row, as LKP prints it */
	cr_expect(strstr(msg, "-11.5%   18336098        vm-scalability.throughput") != NULL, "%s",
		  msg);
	cr_expect(strstr(msg, "kperf-collect run --suite vm-scalability") != NULL);
	cr_expect(strstr(msg, "-- ./case-lru-file-mmap-read") != NULL);
	cr_expect(strstr(msg, "Reported-by: kperf <kperf@kperf.test>") != NULL);
	cr_expect(strstr(msg, "Compare: http://kperf.test/compare?base=a4fe1631f313&target="
			      "1431d4d11abb") != NULL,
		  "%s", msg);
	cr_expect(strstr(msg, "Triage:  http://kperf.test/regressions/") != NULL);
	unsub = header(msg, "List-Unsubscribe");
	cr_assert(unsub && !strncmp(unsub, "<http://kperf.test/api/v1/unsubscribe?s=", 40), "%s",
		  unsub);
	free(msg);

	/* a later fix undoes it: a short follow-up in the same thread */
	for (int i = 0; i < 3; i++) {
		char id[32];
		snprintf(id, sizeof(id), "f%d", i);
		post_run(id, FIX, CHILD, 20700000 + 10000 * i);
	}
	wait_mail(2);
	msg = maildir_read(maildir, 1);
	h = header(msg, "Subject");
	cr_expect(strstr(h, "recovered") != NULL, "%s", h);
	free(h);
	h = header(msg, "In-Reply-To");
	cr_expect_str_eq(h, "<patch-" CHILD "@example.org>");
	free(h);
	cr_expect(strstr(msg, "was undone") && strstr(msg, "by commit ffff1631f313:"), "%s", msg);
	free(msg);

	/* the unsubscribe link works without logging in; a forged one does not */
	unsub[strlen(unsub) - 1] = '\0';
	http_get(&K, unsub + 1 + strlen("http://kperf.test"), &r);
	cr_expect_eq(r.status, 200, "%s", r.body);
	resp_release(&r);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM subscription WHERE email ="
				       " 'mm-review@example.org' AND unsubscribed_at IS NOT NULL"),
		     1);
	unsub[strlen(unsub) - 2] ^= 1;
	http_get(&K, unsub + 1 + strlen("http://kperf.test"), &r);
	cr_expect_eq(r.status, 403);
	resp_release(&r);
	free(unsub);
	/* marked sent once the SMTP server answered, a moment after the Maildir has it */
	cr_expect_eq(wait_count("SELECT count(*) FROM alert WHERE state = 'sent'", 2), 2);
}

Test(alerts, subscriptions_need_admin_and_valid_fields)
{
	struct resp r;
	static const char *const bad[][2] = {
		{"{\"email\":\"nobody\"}", "email"},
		{"{\"email\":\"a@b.org\",\"focus\":\"numa\"}", "focus"},
		{"{\"email\":\"a@b.org\",\"delivery\":\"weekly\"}", "delivery"},
		{"{\"email\":\"a@b.org\",\"verdicts\":[\"noise\"]}", "verdicts[0]"},
		{"{\"email\":\"a@b.org\",\"files\":[1]}", "files[0]"},
		{"{\"email\":\"a@b.org\",\"min_change_pct\":-1}", "min_change_pct"},
	};

	start(0, NULL);
	http_post_json(&K, "/api/v1/subscriptions", TOKEN_COLLECTOR, "{\"email\":\"a@b.org\"}", &r);
	cr_expect_eq(r.status, 403);
	resp_release(&r);
	http_get(&K, "/api/v1/subscriptions", &r);
	cr_expect_eq(r.status, 401);
	resp_release(&r);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *j;
		http_post_json(&K, "/api/v1/subscriptions", TOKEN_ADMIN, bad[i][0], &r);
		cr_expect_eq(r.status, 400, "%s", bad[i][0]);
		j = resp_json(&r);
		cr_expect_str_eq(json_string_value(json_object_get(j, "field")), bad[i][1]);
		json_decref(j);
		resp_release(&r);
	}
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM subscription"), 0);
	http_get(&K, "/healthz", &r);
	cr_expect(strstr(r.body, "\"mail\":\"configured\"") != NULL, "%s", r.body);
	resp_release(&r);
}

Test(alerts, smtp_down_then_back)
{
	start(1, NULL);
	subscribe("{\"email\":\"mm-review@example.org\"}");
	post_pair();
	/* the server is away: the message waits and is retried */
	cr_expect_eq(wait_count("SELECT count(*) FROM alert WHERE attempts >= 2"
				" AND last_error IS NOT NULL AND state = 'pending'",
				1),
		     1);
	smtp_pid = smtp_start(&smtp_port, maildir);
	wait_mail(1);
	cr_expect_eq(wait_count("SELECT count(*) FROM alert WHERE state = 'sent'", 1), 1);
	sleep(2); /* a second message would come meanwhile */
	cr_expect_eq(maildir_count(maildir), 1);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM alert WHERE state = 'sent'"), 1);
}

/* The alert is due 8 s after the decision: kperfd is stopped well before,
 * and the alert is seen pending once it is stopped. */
Test(alerts, restart_between_enqueue_and_send)
{
	start(0, "KPERF_ALERT_SETTLE_S=8");
	subscribe("{\"email\":\"mm-review@example.org\"}");
	post_pair();
	cr_assert_eq(wait_count("SELECT count(*) FROM alert", 1), 1, "no alert queued");
	kperfd_kill(&K);
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM alert WHERE state = 'pending'"), 1,
		     "the alert was taken before kperfd was stopped");
	cr_assert_eq(maildir_count(maildir), 0);
	kperfd_restart(&K);
	wait_mail(1);
	sleep(2);
	cr_expect_eq(maildir_count(maildir), 1);
}

Test(alerts, two_kperfd_on_one_database_send_once)
{
	struct kperfd k2;

	start(0, "KPERF_ALERT_SETTLE_S=2");
	k2 = K;
	snprintf(k2.dir, sizeof(k2.dir), "%.200s-2", K.dir);
	snprintf(k2.log, sizeof(k2.log), "%s/kperfd.log", k2.dir);
	mkdir(k2.dir, 0755);
	kperfd_restart(&k2);
	subscribe("{\"email\":\"a@example.org\"}");
	subscribe("{\"email\":\"b@example.org\",\"metric\":\"vm-scalability.throughput\"}");
	post_pair();
	wait_mail(2);
	sleep(3);
	cr_expect_eq(maildir_count(maildir), 2, "one message per subscriber");
	kperfd_kill(&k2);
}

Test(alerts, daily_digest_at_the_day_boundary)
{
	char *msg, *h;

	start(0, NULL);
	subscribe("{\"email\":\"digest@example.org\",\"delivery\":\"daily\"}");
	/* a second daily subscription of the address that matches too: still one digest */
	subscribe("{\"email\":\"digest@example.org\",\"delivery\":\"daily\","
		  "\"suite\":\"vm-scalability\"}");
	post_pair();
	cr_assert_eq(wait_count("SELECT count(*) FROM alert", 2), 2, "digest rows queued");
	/* the midnight after the row was queued (created_at: the queueing
	 * transaction's now(), as due_at's) */
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM alert WHERE kind = 'digest' AND"
				       " due_at = (date_trunc('day', created_at AT TIME ZONE 'UTC')"
				       " + interval '1 day') AT TIME ZONE 'UTC'"),
		     2, "a digest row per subscription, due at the next UTC midnight");
	sleep(2);
	/* nothing before the day ends: none sent before it was due, and no
	 * message unless the UTC day did end meanwhile */
	{
		int mailed = maildir_count(maildir);
		cr_expect_eq(harness_count(&K, "SELECT count(*) FROM alert WHERE sent_at < due_at"),
			     0, "a digest sent before its day ended");
		cr_expect(mailed == 0 ||
				  harness_count(&K, "SELECT count(*) FROM alert"
						    " WHERE due_at <= now()"),
			  "%d messages before the day ends", mailed);
	}
	/* the clock reaches midnight */
	{
		PGconn *c = harness_db(&K);
		PQclear(PQexec(c, "UPDATE alert SET due_at = now()"));
		PQfinish(c);
	}
	wait_mail(1);
	msg = maildir_read(maildir, 0);
	h = header(msg, "Subject");
	cr_expect_str_eq(h, "[kperf] daily digest: 1 change, 1 regression");
	free(h);
	cr_expect(strstr(msg, "vm-scalability.throughput -11.5% regression") != NULL, "%s", msg);
	cr_expect(strstr(msg, "You get this for your subscriptions 1 (delivery=daily) and 2") != NULL,
		  "%s", msg);
	free(msg);
	sleep(2);
	cr_expect_eq(maildir_count(maildir), 1, "one digest for the address");
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM alert WHERE state = 'merged'"), 1);
}

/* POST a subscription; its status and id. */
static long subscribe_id(const char *json, long *status)
{
	struct resp r;
	json_t *j;
	long id;

	http_post_json(&K, "/api/v1/subscriptions", TOKEN_ADMIN, json, &r);
	*status = r.status;
	cr_assert(r.status == 201 || r.status == 200, "%ld %s", r.status, r.body);
	j = resp_json(&r);
	id = (long)json_number_value(json_object_get(j, "id"));
	json_decref(j);
	resp_release(&r);
	return id;
}

/* Issue 17: two subscriptions of one address whose filters both match get one
 * message listing both, one follow-up, one link that ends both; a repeated
 * subscription is the first one again. */
Test(alerts, one_message_per_address_for_overlapping_subscriptions)
{
	char *msg, *h, want[128];
	long a, b, again, status;
	struct resp r;
	json_t *j, *items;

	start(0, NULL);
	a = subscribe_id("{\"email\":\"Reviewer@example.org\",\"suite\":\"vm-scalability\"}",
			 &status);
	cr_expect_eq(status, 201);
	b = subscribe_id("{\"email\":\"reviewer@example.org\",\"metric\":\"vm-scalability.*\","
			 "\"files\":[\"mm/vmscan.c\",\"mm/swap.c\"],"
			 "\"verdicts\":[\"regression\",\"improvement\"]}",
			 &status);
	cr_expect_eq(status, 201);
	cr_expect_neq(a, b);
	/* the same filters again (address in another case, sets in another order) */
	again = subscribe_id("{\"email\":\"REVIEWER@example.org\",\"metric\":\"vm-scalability.*\","
			     "\"files\":[\"mm/swap.c\",\"mm/vmscan.c\"],"
			     "\"verdicts\":[\"improvement\",\"regression\"]}",
			     &status);
	cr_expect_eq(status, 200, "a repeated subscription answers 200");
	cr_expect_eq(again, b, "a repeated subscription is the first one");
	/* a different filter is a new subscription */
	subscribe_id("{\"email\":\"reviewer@example.org\",\"metric\":\"vm-scalability.*\","
		     "\"files\":[\"mm/swap.c\"]}",
		     &status);
	cr_expect_eq(status, 201);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM subscription"
				       " WHERE lower(email) = 'reviewer@example.org'"),
		     3);

	post_pair();
	wait_mail(1);
	/* the outbox row marked sent once the SMTP server answered, a moment
	 * after the Maildir has it (read below) */
	cr_expect_eq(wait_count("SELECT count(*) FROM alert WHERE state = 'sent'", 1), 1);
	sleep(2); /* a second message would come meanwhile */
	cr_expect_eq(maildir_count(maildir), 1, "one message for the address");
	msg = maildir_read(maildir, 0);
	h = header(msg, "Subject");
	cr_expect(h && strstr(h, "vm-scalability.throughput -11.5% regression"), "%s", h);
	free(h);
	h = header(msg, "List-Unsubscribe");
	/* the third subscription's files do not match the commit: not served */
	snprintf(want, sizeof(want), "<http://kperf.test/api/v1/unsubscribe?s=%ld,%ld&t=", a, b);
	cr_expect(h && !strncmp(h, want, strlen(want)), "%s (want %s...)", h, want);
	free(h);
	snprintf(want, sizeof(want), "You get this for your subscriptions %ld (suite=vm-scalability) and %ld",
		 a, b);
	cr_expect(strstr(msg, want) != NULL, "%s", msg);
	cr_expect(strstr(msg, "Compare: http://kperf.test/compare?base=a4fe1631f313&target="
			      "1431d4d11abb") != NULL, "%s", msg);
	/* the headline decision is told once, not once per subscription */
	{
		const char *p = strstr(msg, "Details are as below");
		cr_assert_not_null(p, "%s", msg);
		cr_expect_null(strstr(strstr(p, "vm-scalability.throughput") + 1,
				      "-11.5%   18336098        vm-scalability.throughput"),
			       "a row twice: %s", p);
	}
	free(msg);

	/* the outbox: one row sent for both, the other merged into it */
	http_call(&K, "GET", "/api/v1/alerts", TOKEN_ADMIN, NULL, NULL, 0, &r);
	cr_assert_eq(r.status, 200, "%s", r.body);
	j = resp_json(&r);
	items = json_object_get(j, "items");
	{
		size_t i;
		json_t *it;
		int sent = 0, merged = 0;
		json_array_foreach(items, i, it) {
			const char *st = json_string_value(json_object_get(it, "state"));
			if (!strcmp(st, "sent")) {
				json_t *subs = json_object_get(it, "subscriptions");
				sent++;
				cr_expect_eq(json_array_size(subs), 2, "%s", r.body);
				cr_expect_eq((long)json_number_value(json_array_get(subs, 0)), a);
			} else if (!strcmp(st, "merged")) {
				merged++;
				cr_expect(json_is_number(json_object_get(it, "merged_into")), "%s", r.body);
			}
		}
		cr_expect_eq(sent, 1, "%s", r.body);
		cr_expect_eq(merged, 1, "%s", r.body);
	}
	json_decref(j);
	resp_release(&r);

	/* a fix: one follow-up about the regression for the address, and (the
	 * second subscription takes improvements) one report of the fix */
	for (int i = 0; i < 3; i++) {
		char id[32];
		snprintf(id, sizeof(id), "f%d", i);
		post_run(id, FIX, CHILD, 20700000 + 10000 * i);
	}
	wait_mail(3);
	sleep(2);
	cr_expect_eq(maildir_count(maildir), 3, "one follow-up and one report of the fix");
	msg = NULL;
	{
		int recovered = 0, improved = 0;
		for (int i = 1; i < 3; i++) {
			char *m = maildir_read(maildir, i);
			h = header(m, "Subject");
			if (h && strstr(h, "recovered")) {
				recovered++;
				free(msg);
				msg = m;
			} else {
				improved += h && strstr(h, "ffff1631f313") && strstr(h, "improvement");
				free(m);
			}
			free(h);
		}
		cr_expect_eq(recovered, 1);
		cr_expect_eq(improved, 1);
	}
	cr_assert_not_null(msg);
	/* the list link ends every subscription it served */
	h = header(msg, "List-Unsubscribe");
	cr_assert(h && strlen(h) > 20, "%s", h);
	h[strlen(h) - 1] = '\0';
	http_call(&K, "POST", h + 1 + strlen("http://kperf.test"), NULL, NULL, NULL, 0, &r);
	cr_expect_eq(r.status, 200, "%s", r.body);
	resp_release(&r);
	free(h);
	free(msg);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM subscription"
				       " WHERE lower(email) = 'reviewer@example.org'"
				       " AND unsubscribed_at IS NULL"),
		     1, "the link ends the two it served, not the third");
}

/* Without KPERF_PUBLIC_URL, links name the address kperfd serves on. */
Test(alerts, links_without_a_public_url_name_the_served_address)
{
	char *msg, *h, want[128];
	struct resp r;

	env[3] = "X=2"; /* no KPERF_PUBLIC_URL */
	start(0, NULL);
	subscribe("{\"email\":\"mm@example.org\",\"suite\":\"vm-scalability\"}");
	post_pair();
	wait_mail(1);
	msg = maildir_read(maildir, 0);
	snprintf(want, sizeof(want), "Compare: http://127.0.0.1:%d/compare?base=a4fe1631f313&target="
		 "1431d4d11abb", K.port);
	cr_expect(strstr(msg, want) != NULL, "%s", msg);
	snprintf(want, sizeof(want), "Triage:  http://127.0.0.1:%d/regressions/", K.port);
	cr_expect(strstr(msg, want) != NULL, "%s", msg);
	h = header(msg, "List-Unsubscribe");
	snprintf(want, sizeof(want), "<http://127.0.0.1:%d/api/v1/unsubscribe?s=", K.port);
	cr_assert(h && !strncmp(h, want, strlen(want)), "%s", h);
	free(h);
	h = header(msg, "List-Unsubscribe-Post");
	cr_expect_str_eq(h, "List-Unsubscribe=One-Click");
	free(h);
	/* the compare link's page and API answer for those commits */
	http_get(&K, "/api/v1/compare?base=a4fe1631f313&target=1431d4d11abb", &r);
	cr_expect_eq(r.status, 200, "%s", r.body);
	resp_release(&r);
	free(msg);
	{
		char *log = harness_slurp(K.log, NULL);
		snprintf(want, sizeof(want), "links in mail use http://127.0.0.1:%d", K.port);
		cr_expect(strstr(log, want) != NULL, "kperfd says where links point");
		free(log);
	}
}
