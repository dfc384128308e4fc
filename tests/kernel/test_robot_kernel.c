/*
 * test_robot_kernel.c - the robot on a real kernel: two three-patch mm
 * series on Debian's linux-source-6.1 (tests/kernel/series.sh) posted to a
 * real public-inbox, read by kperfd's robot, applied with b4 by a VM lab
 * (kperf-collect agent --tree --inbox --kernel-build --vm), built with Kbuild
 * and ccache, booted in QEMU and measured with readtwice in the guest. The
 * series whose patch 2 slows folio_mark_accessed() is confirmed, bisected to
 * patch 2 and answered once, in patch 2's thread; the series whose patch 3
 * does not compile gets a build report in patch 3's thread and is not
 * measured. `make test-kernel` (scripts/test-kernel.sh) sets
 * KPERF_KERNEL_CACHE.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/collect/robot_lab.h"
#include "tests/collect/testutil.h"

/* A cold cache builds the base for 10-13 min on 2 cores; then each patch
 * builds in about 15 s and boots in 2 s. */
#define KERNEL_SERIES_WAIT_S 3000

#define SLOW_SERIES "mm: lru_lock in the page-cache read path"
#define BROKEN_SERIES "mm: lru_lock notes for reclaim"
#define READTWICE "{\"suite\":\"readtwice\",\"params\":{\"procs\":\"1\",\"size-mb\":\"64\"}}"

TestSuite(robot_kernel, .init = robot_setup, .fini = robot_teardown, .timeout = 3600);

/* The VM lab's agent: the cache's tree and build directory, readtwice in
 * the guest (one boot a run: with icount the guest's throughput varies by
 * 0.0002% between boots, so the plan's 3 runs a side are plenty), series
 * only from the test's inbox. */
static void vm_robot_start(struct robot_agent *ap, const char *cache)
{
	const char *bin = getenv("KPERF_COLLECT_BIN") ? getenv("KPERF_COLLECT_BIN")
						      : "build/kperf-collect";
	char tree[4200], build[4200], cat[700], state[700], spool[700], text[8192];

	snprintf(tree, sizeof(tree), "%s/linux", cache);
	snprintf(build, sizeof(build), "%s/build", cache);
	snprintf(text, sizeof(text),
		 "[readtwice]\nsuite = readtwice\nparams = procs=1 size-mb=64\nformat = readtwice\n"
		 "iterations = 1\ncommand = %s/readtwice-static --procs 1 --size-mb 64 --dir /tmp\n",
		 cache);
	tu_write(robot_l, "catalogue", text);
	/* the host the agent runs on (its runs come from the guest) */
	robot_lab_host("6.1.0-host");
	snprintf(cat, sizeof(cat), "%s/catalogue", robot_l);
	snprintf(state, sizeof(state), "%s/state", robot_l);
	snprintf(spool, sizeof(spool), "%s/spool", robot_l);
	snprintf(ap->log, sizeof(ap->log), "%s/agent.log", robot_l);
	{
		const char *argv[] = {bin,	     "--server",     robot_url,	  "--token",
				      TOKEN_COLLECTOR, "--machine",    "lab1",	  "--spool",
				      spool,	     "--timeout",    "20",	  "agent",
				      "--catalogue",   cat,	     "--state",	  state,
				      "--tree",	     tree,	     "--inbox",	  robot_inbox_url,
				      "--kernel-build", build,	     "--vm",	  "--vm-accel",
				      "tcg",	     "--vm-icount",  "--vm-memory", "512",
				      "--idle-exit",   "3600",	     NULL};
		robot_agent_exec(ap, argv);
	}
}

/* Where the agent's time went, from its log past offset from: series
 * applied with b4 and git am, kernels built, guests booted to /init, the
 * test and the power-off in the guest. */
struct split {
	double apply, build, boot, bench;
	int napply, nbuild, nboot;
};

static size_t agent_split(const struct robot_agent *ap, size_t from, struct split *s)
{
	char *log = robot_slurp(ap->log);
	size_t len = strlen(log);

	memset(s, 0, sizeof(*s));
	for (char *l = log + (from < len ? from : len); *l;) {
		char *nl = strchr(l, '\n'), *p;
		double x, y;
		if (nl)
			*nl = '\0';
		if ((p = strstr(l, " applied on ")) && (p = strstr(p, " in ")) &&
		    sscanf(p, " in %lf s:", &x) == 1) {
			s->apply += x;
			s->napply++;
		} else if (((p = strstr(l, ": built ")) && (p = strstr(p, " in ")) &&
			    sscanf(p, " in %lf s", &x) == 1) ||
			   ((p = strstr(l, "build after ")) && sscanf(p, "build after %lf s", &x) == 1) ||
			   ((p = strstr(l, "builds after ")) && sscanf(p, "builds after %lf s", &x) == 1)) {
			s->build += x;
			s->nbuild++;
		} else if ((p = strstr(l, "the guest reached /init ")) &&
			   sscanf(p, "the guest reached /init %lf s after QEMU started; the test and"
				     " the power-off took %lf s", &x, &y) == 2) {
			s->boot += x;
			s->bench += y;
			s->nboot++;
		}
		if (!nl)
			break;
		l = nl + 1;
	}
	free(log);
	return len;
}

static void say_split(const char *what, double total, const struct split *s)
{
	fprintf(stderr,
		"vm_lab: robot: %s: arrival to reply %.0f s: apply %.1f s (%d), build %.0f s (%d"
		" kernels), boot %.0f s (%d boots), test in the guest %.0f s; the rest (polls,"
		" decisions, confirmation, bisection steps' scheduling, mail) %.0f s\n",
		what, total, s->apply, s->napply, s->build, s->nbuild, s->boot, s->nboot, s->bench,
		total - s->apply - s->build - s->boot - s->bench);
}

/* The one mail whose In-Reply-To is msgid, or NULL. */
static char *mail_replying_to(const char *msgid, int *count)
{
	char want[1200], *found = NULL;

	snprintf(want, sizeof(want), "In-Reply-To: <%s>", msgid);
	*count = 0;
	for (int i = 1; i <= robot_mails(); i++) {
		char *m = robot_mail(i);
		if (strstr(m, want)) {
			(*count)++;
			free(found);
			found = m;
		} else {
			free(m);
		}
	}
	return found;
}

static char *wait_reply(const char *msgid, int *count)
{
	double end = robot_now() + 300;
	char *m;

	while (!(m = mail_replying_to(msgid, count))) {
		if (robot_now() > end) {
			char *klog = robot_slurp(robot_k.log);
			size_t kl = strlen(klog);
			cr_assert_fail("no reply to <%s> within 300 s; kperfd's log ends:\n%s", msgid,
				       klog + (kl > 4000 ? kl - 4000 : 0));
		}
		robot_pause(500);
	}
	return m;
}

Test(robot_kernel, a_slow_patch_2_is_bisected_and_replied_and_a_broken_patch_3_gets_a_build_report)
{
	const char *cache = getenv("KPERF_KERNEL_CACHE");
	char cmd[9000], covers[400], slow_cover[200], broken_cover[200];
	struct robot_agent ap = {0};
	json_t *v, *plan;
	double t0, epoch0;
	struct split sp;
	size_t from;
	char *m;
	int n;

	cr_assert(cache && *cache, "KPERF_KERNEL_CACHE is not set: run make test-kernel");
	snprintf(cmd, sizeof(cmd), "tests/kernel/series.sh '%s' '%s/series'", cache, robot_w);
	{
		FILE *f = popen(cmd, "r");
		cr_assert_not_null(f);
		cr_assert_not_null(fgets(covers, sizeof(covers), f), "%s printed nothing", cmd);
		cr_assert_eq(pclose(f), 0, "%s failed", cmd);
		cr_assert_eq(sscanf(covers, "%199s %199s", slow_cover, broken_cover), 2, "%s", covers);
	}
	vm_robot_start(&ap, cache);
	robot_wait_offer(&ap);
	robot_setup_plan_for("send", 0, READTWICE);

	/* the slow series: confirmed, bisected to patch 2, one reply there */
	t0 = robot_now();
	epoch0 = robot_db_epoch();
	robot_lore(NULL, 0, "inject %s %s/series/slow/*.patch", robot_w, robot_w);
	v = robot_wait_series(SLOW_SERIES, 1, "regression|improvement|does_not_apply|"
				"does_not_build|failed|clean", &ap, KERNEL_SERIES_WAIT_S);
	fprintf(stderr, "vm_lab: robot: slow series to its verdict %.0f s\n", robot_now() - t0);
	cr_assert_str_eq(json_string_value(json_object_get(v, "state")), "regression", "%s",
			 json_dumps(v, 0));
	cr_assert_str_eq(json_string_value(json_object_get(v, "message_id")), slow_cover);
	plan = json_array_get(json_object_get(v, "plans"), 0);
	cr_assert_eq((long)json_number_value(json_object_get(plan, "first_bad_position")), 2, "%s",
		     json_dumps(plan, 0));
	m = wait_reply(robot_patch_msgid(v, 2), &n);
	robot_print_steps(epoch0);
	from = agent_split(&ap, 0, &sp);
	say_split("slow series", robot_now() - t0, &sp);
	cr_assert_eq(n, 1, "%d replies in patch 2's thread", n);
	cr_assert(strstr(m, "Subject: Re: [PATCH 2/3] mm/swap: recheck the lru_lock holder in"), "%s",
		  m);
	/* readtwice.throughput or avg_throughput: both moved by the same -54% */
	cr_assert(strstr(m, "% regression of readtwice.") && strstr(m, "throughput on:"), "%s", m);
	cr_assert(strstr(m, "Bisected between"), "%s", m);
	cr_assert(strstr(m, "| Reported-by: kperf <kperf@kperf.test>"), "%s", m);
	free(m);
	cr_assert_eq(harness_count(&robot_k, "SELECT count(*) FROM alert WHERE kind = 'robot'"), 1,
		     "one reply for the slow series");

	/* the broken series: a build report in patch 3's thread, nothing measured */
	t0 = robot_now();
	robot_lore(NULL, 0, "inject %s %s/series/broken/*.patch", robot_w, robot_w);
	json_decref(v);
	v = robot_wait_series(BROKEN_SERIES, 1, "regression|improvement|does_not_apply|"
				"does_not_build|failed|clean", &ap, KERNEL_SERIES_WAIT_S);
	cr_assert_str_eq(json_string_value(json_object_get(v, "state")), "does_not_build", "%s",
			 json_dumps(v, 0));
	cr_assert(strstr(json_string_value(json_object_get(v, "state_detail")),
			 "does not build at patch 3/3"),
		  "%s", json_dumps(v, 0));
	m = wait_reply(robot_patch_msgid(v, 3), &n);
	agent_split(&ap, from, &sp);
	say_split("broken series", robot_now() - t0, &sp);
	cr_assert_eq(n, 1);
	cr_assert(strstr(m, "Subject: Re: [PATCH 3/3] mm/swap: count lru_lock-free activations"),
		  "%s", m);
	cr_assert(strstr(m, "X-Kperf-Report: build"), "%s", m);
	cr_assert(strstr(m, "patch 3/3 does not build"), "%s", m);
	cr_assert(strstr(m, "compiler: gcc (Debian"), "%s", m);
	cr_assert(strstr(m, "config: "), "%s", m);
	cr_assert(strstr(m, "(tinyconfig + kperf.config)"), "%s", m);
	cr_assert(strstr(m, ">> mm/swap.c:"), "%s", m);
	cr_assert(strstr(m, ": error: expected expression before"), "%s", m);
	cr_assert(strstr(m, "| Closes: http://"), "%s", m);
	free(m);
	cr_assert_eq(harness_count(&robot_k, "SELECT count(*) FROM run r JOIN posted_patch pp"
					     " ON pp.commit_id = r.commit_id JOIN posted_series s"
					     " ON s.id = pp.series_id WHERE s.state = 'does_not_build'"),
		     0, "a series that does not build was measured");
	json_decref(v);
	robot_agent_stop(&ap);
}
