/*
 * test_robot.c - the robot end to end, with the kernel community's tools:
 * a real public-inbox (tests/robot/lore.sh: public-inbox-mda, served by
 * public-inbox-httpd on loopback) holds a series made with `git
 * format-patch --cover-letter --base`; kperfd polls it, its plan queues the
 * series and its base on a lab; `kperf-collect agent --tree` applies the
 * series there with b4 and `git am` and measures a workload whose speed
 * depends on what the tree holds (tests/robot/tree-bench.sh); the
 * regression is confirmed, bisected inside the series, and mailed to a
 * real SMTP server that delivers it back into the inbox, where the reply
 * is read from the thread as on lore. Plans on branches and what a lab
 * refuses: test_robot_plans.c; the shared machinery: robot_lab.c.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/collect/robot_lab.h"
#include "tests/collect/testutil.h"

TestSuite(robot, .init = robot_setup, .fini = robot_teardown, .timeout = 600);

Test(robot, v2_regression_bisected_to_patch_2_replied_in_its_thread_then_v3_clean)
{
	struct robot_agent ap = {0};
	char out[4096], cover2[1024], files[8192];
	json_t *v2, *v3;
	char *m, *page;
	double t0, epoch0;

	robot_lore(NULL, 0, "tree %s", robot_w);
	robot_lab_start(&ap);
	robot_wait_offer(&ap);
	robot_setup_plan("send", 0);

	/* v2: patch 2 makes the workload 40% slower */
	robot_lore(cover2, sizeof(cover2), "series %s 2 2", robot_w);
	snprintf(files, sizeof(files), "inject %s %s/out-v2/*.patch", robot_w, robot_w);
	t0 = robot_now();
	epoch0 = robot_db_epoch();
	robot_lore(out, sizeof(out), "%s", files);
	v2 = robot_wait_state(2, "regression|does_not_apply|failed|clean", &ap);
	cr_assert_str_eq(json_string_value(json_object_get(v2, "state")), "regression", "%s",
			 json_dumps(v2, 0));
	cr_assert_str_eq(json_string_value(json_object_get(v2, "message_id")), cover2);
	cr_assert_eq((long)json_number_value(json_object_get(v2, "total")), 3);
	{
		json_t *plan = json_array_get(json_object_get(v2, "plans"), 0);
		cr_assert_eq((long)json_number_value(json_object_get(plan, "first_bad_position")), 2, "%s",
			     json_dumps(plan, 0));
	}
	/* the reply went out and came back into the thread of patch 2 */
	for (double end = robot_now() + WAIT_S; robot_mails() < 1; robot_pause(200))
		if (robot_now() > end) {
			json_t *al = NULL;
			char *klog = robot_slurp(robot_k.log), *text;
			size_t kl = strlen(klog);
			robot_call("GET", "/api/v1/alerts", TOKEN_ADMIN, NULL, &al);
			text = json_dumps(al, JSON_COMPACT);
			cr_assert_fail("no mail within %d s; alerts: %.2000s\nkperfd's log ends:\n%s",
				       WAIT_S, text, klog + (kl > 4000 ? kl - 4000 : 0));
		}
	fprintf(stderr, "robot: v2 injected to its reply sent: %.1f s\n", robot_now() - t0);
	robot_print_steps(epoch0);
	m = robot_mail(1);
	{
		char want[1200];
		snprintf(want, sizeof(want), "In-Reply-To: <%s>", robot_patch_msgid(v2, 2));
		cr_assert(strstr(m, want), "%s", m);
		snprintf(want, sizeof(want), "References: <%s> <%s>", cover2, robot_patch_msgid(v2, 2));
		cr_assert(strstr(m, want), "%s", m);
	}
	cr_assert(strstr(m, "Subject: Re: [PATCH v2 2/3] mm/vmscan: use lruvec->lru_lock in "
			    "shrink_lruvec"),
		  "%s", m);
	cr_assert(strstr(m, "To: Lab Dev <dev@example.org>"), "%s", m);
	cr_assert(strstr(m, "Cc: linux-mm@kvack.org, perf@example.org"), "%s", m);
	/* 600 against 1000, give or take the workload's 0.3% */
	cr_assert(strstr(m, "kperf noticed a -40.") || strstr(m, "kperf noticed a -39."), "%s", m);
	cr_assert(strstr(m, "% regression of kbench.throughput on:"), "%s", m);
	cr_assert(strstr(m, "patch subject: [PATCH v2 2/3]"), "%s", m);
	cr_assert(strstr(m, "| Reported-by: kperf <kperf@kperf.test>"), "%s", m);
	cr_assert(strstr(m, "| Closes: http://"), "%s", m);
	cr_assert(strstr(m, "Bisected between"), "%s", m);
	free(m);
	page = robot_thread_page(robot_patch_msgid(v2, 2));
	cr_assert(strstr(page, "regression of kbench.throughput"), "the thread holds no reply");
	free(page);

	/* v3 fixes it: measured against its base, nothing moved, no mail */
	snprintf(files, sizeof(files), "series %s 3 0", robot_w);
	robot_lore(out, sizeof(out), "%s", files);
	snprintf(files, sizeof(files), "inject %s %s/out-v3/*.patch", robot_w, robot_w);
	robot_lore(out, sizeof(out), "%s", files);
	v3 = robot_wait_state(3, "regression|does_not_apply|failed|clean", &ap);
	cr_assert_str_eq(json_string_value(json_object_get(v3, "state")), "clean", "%s",
			 json_dumps(v3, 0));
	cr_assert_eq((long)json_number_value(json_object_get(v3, "previous_version")), 2);
	robot_pause(3000); /* the mailer would have sent by now */
	cr_assert_eq(robot_mails(), 1, "v3 was mailed about");
	cr_assert_eq(harness_count(&robot_k, "SELECT count(*) FROM alert WHERE kind = 'robot'"), 1);
	json_decref(v2);
	json_decref(v3);
	robot_agent_stop(&ap);
}

/*
 * "mode": "hold" keeps the reply until an admin releases it, through a
 * kperfd killed (SIGKILL) with it held: nothing mailed twice. With
 * "clean": true a version where nothing moved gets one reply to its cover.
 */
Test(robot, held_reply_survives_a_kill_is_released_once_and_clean_v3_replies_to_its_cover)
{
	struct robot_agent ap = {0};
	char out[4096], cover3[1024], cmd[2048];
	json_t *v3;
	int st;
	char *m;

	robot_lore(NULL, 0, "tree %s", robot_w);
	robot_lab_start(&ap);
	robot_wait_offer(&ap);
	robot_setup_plan("hold", 1);
	robot_lore(out, sizeof(out), "series %s 2 2", robot_w);
	snprintf(cmd, sizeof(cmd), "inject %s %s/out-v2/*.patch", robot_w, robot_w);
	robot_lore(out, sizeof(out), "%s", cmd);
	json_decref(robot_wait_state(2, "regression", &ap));
	robot_wait_alerts("held", 1);
	cr_assert_eq(robot_mails(), 0, "a held reply was mailed");

	/* killed with the reply held: it is still held, once, after the restart */
	kill(robot_k.pid, SIGKILL);
	waitpid(robot_k.pid, &st, 0);
	robot_k.pid = 0;
	kperfd_env(robot_settings);
	kperfd_restart(&robot_k);
	kperfd_env(NULL);
	snprintf(robot_url, sizeof(robot_url), "http://127.0.0.1:%d", robot_k.port);
	robot_pause(3000); /* three robot passes */
	cr_assert_eq(robot_alerts("held"), 1);
	cr_assert_eq(harness_count(&robot_k, "SELECT count(*) FROM alert WHERE kind = 'robot'"), 1);
	robot_release(robot_held_id());
	for (double end = robot_now() + WAIT_S; robot_mails() < 1; robot_pause(200))
		cr_assert(robot_now() < end, "the released reply was not mailed within %d s", WAIT_S);
	m = robot_mail(1);
	cr_assert(strstr(m, "Subject: Re: [PATCH v2 2/3]"), "%s", m);
	free(m);

	/* v3, clean: one reply to its cover letter, held too, then released */
	robot_agent_stop(&ap);
	robot_lab_start(&ap); /* the agent of the restarted kperfd */
	robot_lore(cover3, sizeof(cover3), "series %s 3 0", robot_w);
	snprintf(cmd, sizeof(cmd), "inject %s %s/out-v3/*.patch", robot_w, robot_w);
	robot_lore(out, sizeof(out), "%s", cmd);
	v3 = robot_wait_state(3, "clean|regression|failed|does_not_apply", &ap);
	cr_assert_str_eq(json_string_value(json_object_get(v3, "state")), "clean");
	robot_wait_alerts("held", 1);
	robot_release(robot_held_id());
	for (double end = robot_now() + WAIT_S; robot_mails() < 2; robot_pause(200))
		cr_assert(robot_now() < end, "the clean reply was not mailed within %d s", WAIT_S);
	m = robot_mail(2);
	{
		char want[1200];
		snprintf(want, sizeof(want), "In-Reply-To: <%s>", cover3);
		cr_assert(strstr(m, want), "%s", m);
	}
	cr_assert(strstr(m, "Subject: Re: [PATCH v3 0/3] mm: per-memcg lru_lock"), "%s", m);
	cr_assert(strstr(m, "kperf tested this series and noticed no performance change"), "%s", m);
	cr_assert(strstr(m, "kbench.throughput"), "%s", m);
	free(m);
	robot_pause(2000);
	cr_assert_eq(robot_mails(), 2);
	json_decref(v3);
	robot_agent_stop(&ap);
}
