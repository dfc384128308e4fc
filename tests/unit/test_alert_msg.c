/*
 * test_alert_msg.c - what an alert mail's body says in each case of its
 * headline: why a change is unconfirmed (no agent, a failed job, a
 * timeout), the reproduce command from the run's collector options (or
 * the run's variant without them), and the note on a Welch interval
 * below -100%.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "server/mail/alert_msg.h"

static struct alert_item item(void)
{
	struct alert_item it;

	memset(&it, 0, sizeof(it));
	it.metric = "sysbench.events_per_sec";
	it.machine = "lab1";
	it.suite = "sysbench";
	it.params = "{\"threads\":\"4\"}";
	it.variant = "{\"lru_gen\":\"on\",\"thp\":\"never\"}";
	it.verdict = "regression";
	it.commit = "2222222222222222222222222222222222222222";
	it.base_commit = "1111111111111111111111111111111111111111";
	it.change_pct = -47.2;
	it.change_abs = -1000;
	it.ci_lo_pct = -61.5;
	it.ci_hi_pct = -32.9;
	it.kpi = 1;
	it.decision_id = 7;
	it.base_runs = 1;
	it.target_runs = 1;
	return it;
}

/* The message for one headline item, its prose unwrapped (the body's
 * continuation lines are indented four blanks). */
static const char *not_judged;

static char *message(const struct alert_item *it, const char *collector)
{
	struct alert_facts f;
	struct buf out = BUF_INIT;
	char *m, *p;

	memset(&f, 0, sizeof(f));
	f.to = "dev@example.org";
	f.from = "kperf@example.org";
	f.message_id = "<m@example.org>";
	f.date = "Tue, 1 Dec 2026 00:00:00 +0000";
	f.sha = it->commit;
	f.subject = "mm: vmscan: a patch";
	f.base_kind = "parent";
	f.command = "sysbench --threads=4 --time=3 cpu run";
	f.collector = collector;
	f.not_judged = not_judged;
	f.items = it;
	f.nitems = 1;
	alert_message(&f, &out);
	m = buf_detach(&out, NULL);
	while ((p = strstr(m, "\r\n    "))) {
		*p = ' ';
		memmove(p + 1, p + 6, strlen(p + 6) + 1);
	}
	return m;
}

Test(alert_msg, why_a_change_is_unconfirmed)
{
	struct alert_item it = item();
	char *m;

	it.confirmation = "unconfirmed";
	it.unconfirmed = "no_agent";
	m = message(&it, NULL);
	cr_expect(strstr(m, "This change is unconfirmed: it rests on 1 run of the base and 1 of the"
			    " commit. No agent on lab1 offers this test, so kperf could not ask for"
			    " more runs.\r\n") != NULL,
		  "%s", m);
	cr_expect(strstr(m, "did not get them in time") == NULL, "%s", m);
	free(m);

	it.unconfirmed = "failed";
	it.unconfirmed_why = "kernel hook exited 1";
	m = message(&it, NULL);
	cr_expect(strstr(m, "kperf asked lab1's agent for more runs; the job failed: kernel hook"
			    " exited 1\r\n") != NULL,
		  "%s", m);
	free(m);

	it.unconfirmed = "timeout";
	it.base_runs = 2;
	m = message(&it, NULL);
	cr_expect(strstr(m, "it rests on 2 runs of the base and 1 of the commit. kperf asked lab1's"
			    " agent for more runs of both commits; they did not come within the"
			    " confirmation timeout.\r\n") != NULL,
		  "%s", m);
	free(m);

	it.confirmation = "confirmed";
	m = message(&it, NULL);
	cr_expect(strstr(m, "unconfirmed") == NULL, "%s", m);
	free(m);
}

Test(alert_msg, the_headline_keeps_due_to_commit_on_its_line)
{
	struct alert_item it = item();
	char *m = message(&it, NULL);

	cr_expect(strstr(m, "FYI, kperf noticed a -47.2% regression of sysbench.events_per_sec\r\n"
			    "due to commit:\r\n") != NULL,
		  "%s", m);
	free(m);
}

Test(alert_msg, reproduce_with_the_options_that_made_the_runs)
{
	struct alert_item it = item();
	char *m = message(&it, "{\"iterations\":3,\"format\":\"sysbench\",\"profile\":true,"
				"\"variant\":{\"thp\":\"never\"}}");

	cr_expect(strstr(m, "\tkperf-collect run --suite sysbench --format sysbench --iterations 3"
			    " --profile \\\r\n"
			    "\t\t--param threads=4 \\\r\n"
			    "\t\t--variant thp=never \\\r\n"
			    "\t\t--commit 2222222222222222222222222222222222222222 \\\r\n"
			    "\t\t-- sysbench --threads=4 --time=3 cpu run\r\n") != NULL,
		  "%s", m);
	free(m);
	/* a run without the record: the run's variant, as before */
	m = message(&it, NULL);
	cr_expect(strstr(m, "\t\t--variant lru_gen=on \\\r\n\t\t--variant thp=never \\\r\n") != NULL,
		  "%s", m);
	free(m);
}

Test(alert_msg, an_interval_below_minus_100_is_explained)
{
	struct alert_item it = item();
	char *m;

	it.ci_lo_pct = -145.08;
	it.ci_hi_pct = -26.12;
	m = message(&it, NULL);
	cr_expect(strstr(m, "[-145.08%, -26.12%]\r\n(Its lower end is below -100%") != NULL, "%s", m);
	free(m);
	it.ci_lo_pct = -61.5;
	m = message(&it, NULL);
	cr_expect(strstr(m, "below -100%") == NULL, "%s", m);
	free(m);
}

Test(alert_msg, tests_run_with_other_work_arguments_are_named)
{
	struct alert_item it = item();
	char *m;

	not_judged = "stress-ng: timeout 3s -> 2s, vm 1 -> 2\nsysbench: time 3 -> 2";
	m = message(&it, NULL);
	not_judged = NULL;
	cr_expect(strstr(m, "\r\nNot judged as a kernel change: these tests ran with other work"
			    " arguments than on the base, so their changes are not reported:\r\n\r\n"
			    "  stress-ng: timeout 3s -> 2s, vm 1 -> 2\r\n"
			    "  sysbench: time 3 -> 2\r\n") != NULL,
		  "%s", m);
	free(m);
	m = message(&it, NULL);
	cr_expect(strstr(m, "Not judged") == NULL, "%s", m);
	free(m);
}
