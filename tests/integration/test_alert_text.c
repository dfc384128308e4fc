/*
 * test_alert_text.c - what an alert mail says, read back from a real SMTP
 * server (python3-aiosmtpd): why a change is unconfirmed (no agent offers
 * the test), the exact kperf-collect command that made the runs, a headline
 * that does not break "due to commit:" across lines; and a refusal by the
 * SMTP server kept in the server's own words.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/integration/harness.h"

static struct kperfd K;
static char maildir[600], env_url[64];
static pid_t smtp_pid;
static const char *env[] = {env_url, "KPERF_ALERT_SETTLE_S=1", "KPERF_SMTP_RETRY_S=1",
			    "KPERF_PUBLIC_URL=http://kperf.test",
			    "KPERF_MAIL_FROM=kperf@kperf.test", NULL};

#define BASE "0d3c2a7f9b1e4c5d6a7b8c9d0e1f2a3b4c5d6e7f"
#define PATCH "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432"

/* aiosmtpd on a port of the harness's, refusing messages over max_bytes
 * (its SIZE extension) when max_bytes > 0. */
static void smtp_up(long max_bytes)
{
	int port = 0;

	harness_tmpdir(maildir, sizeof(maildir), "mailtext");
	smtp_pid = smtp_start_limit(&port, maildir, max_bytes);
	snprintf(env_url, sizeof(env_url), "KPERF_SMTP_URL=smtp://127.0.0.1:%d", port);
	kperfd_env(env);
	kperfd_start(&K, NULL);
	kperfd_env(NULL);
}

static void teardown(void)
{
	kperfd_stop(&K);
	smtp_stop(smtp_pid);
}

TestSuite(alert_text, .fini = teardown, .timeout = 180);

/* Two runs a side of kbench, as kperf-collect posts them: the command, the
 * options it ran with; the patch halves ops_per_sec. */
static void post_pair(void)
{
	harness_post_ok(&K, "/api/v1/commits", TOKEN_COLLECTOR,
			"[{\"sha\":\"" BASE "\",\"subject\":\"mm: base\"},"
			"{\"sha\":\"" PATCH "\",\"parent\":\"" BASE "\","
			"\"subject\":\"mm: vmscan: a change whose subject is long enough to fill"
			" the line\"}]");
	for (int i = 0; i < 4; i++) {
		int patch = i >= 2, v = patch ? 500 : 1000;
		char id[16];
		struct run_doc d = {
			.run_id = id,
			.machine = "mt-box",
			.commit = patch ? PATCH : BASE,
			.suite = "kbench",
			.params = json_pack("{s:s}", "mode", "seq"),
			.more = json_pack("{s:s,s:{s:i,s:s,s:{s:s}},s:{s:s,s:s}}", "command",
					  "kbench --time=3 --mode seq", "collector", "iterations", 3,
					  "format", "json", "variant", "thp", "never", "variant", "thp",
					  "never", "lru_gen", "on"),
			.metrics = json_pack("{s:[i,i,i]}", "kbench.ops_per_sec", v, v + 1, v - 1),
		};
		long st;

		snprintf(id, sizeof(id), "mt-%d", i);
		st = harness_post_run(&K, NULL, &d, NULL);
		cr_assert(st == 201 || st == 200, "run %s: %ld", id, st);
	}
}

/* The text of the first message, once there is one (at most 60 s). */
static char *first_mail(void)
{
	double end = harness_now() + 60;

	while (maildir_count(maildir) < 1 && harness_now() < end)
		usleep(100000);
	cr_assert_geq(maildir_count(maildir), 1, "no message within 60 s");
	return maildir_read(maildir, 0);
}

/* m with the mail's wrapped prose joined again (continuations are indented
 * four blanks), in place. */
static char *unwrapped(char *m)
{
	char *p;

	while ((p = strstr(m, "\n    "))) {
		*p = ' ';
		memmove(p + 1, p + 5, strlen(p + 5) + 1);
	}
	return m;
}

Test(alert_text, unconfirmed_says_why_and_the_command_can_be_pasted)
{
	char *m;

	smtp_up(0);
	harness_post_ok(&K, "/api/v1/subscriptions", TOKEN_ADMIN,
	                "{\"email\":\"dev@example.org\",\"suite\":\"kbench\"}");
	post_pair();
	m = first_mail();
	cr_expect(strstr(m, "FYI, kperf noticed a -50.0% regression of kbench.ops_per_sec\n"
			    "due to commit:\n") != NULL,
		  "%s", m);
	cr_expect(strstr(unwrapped(m), "This change is unconfirmed: it rests on 2 runs of the base"
				       " and 2 of the commit. No agent on mt-box offers this test, so"
				       " kperf could not ask for more runs.\n") != NULL,
		  "%s", m);
	cr_expect(strstr(m, "asked the labs") == NULL, "%s", m);
	cr_expect(strstr(m, "\tkperf-collect run --suite kbench --format json --iterations 3 \\\n"
			    "\t\t--param mode=seq \\\n"
			    "\t\t--variant thp=never \\\n"
			    "\t\t--commit " PATCH " \\\n"
			    "\t\t-- kbench --time=3 --mode seq\n") != NULL,
		  "%s", m);
	cr_expect(strstr(m, "--variant lru_gen") == NULL, "a detected knob is not an option: %s", m);
	free(m);
}

Test(alert_text, a_refusal_is_kept_in_the_servers_words)
{
	double end;

	smtp_up(300);
	harness_post_ok(&K, "/api/v1/subscriptions", TOKEN_ADMIN,
	                "{\"email\":\"dev@example.org\",\"suite\":\"kbench\"}");
	post_pair();
	end = harness_now() + 60;
	while (harness_count(&K, "SELECT count(*) FROM alert WHERE last_error IS NOT NULL") < 1 &&
	       harness_now() < end)
		usleep(100000);
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM alert WHERE last_error ="
				       " 'the SMTP server answered \"552 Error: message size exceeds"
				       " fixed maximum message size\"'"),
		     1, "last_error: %ld rows with it",
		     harness_count(&K, "SELECT count(*) FROM alert WHERE last_error IS NOT NULL"));
}
