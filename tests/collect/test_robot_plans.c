/*
 * test_robot_plans.c - the robot's plans beyond one posted series (suite
 * robot, declared in test_robot.c): a branch's heads in the tree-commit
 * form, what a lab refuses (other inboxes, a series that does not apply),
 * series jobs left to agents with a tree, and an improvement's reply.
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

/*
 * A plan on a branch: each new head that `kperf-collect commits --branch`
 * posts is measured against where the branch forked, and a regression is
 * bisected and mailed in the robot's tree-commit form, to the commit's
 * author, with the line regzbot reads.
 */
Test(robot, branch_head_regression_mailed_in_tree_form_with_regzbot)
{
	struct robot_agent ap = {0};
	char out[4096], cmd[4096], git[700], *o = NULL, *e = NULL, *m;
	const char *args[] = {"--server", robot_url, "--token", TOKEN_COLLECTOR, "commits", "--git", git,
			      "--branch", "memcg-lru-lock-v2", "v6.1..memcg-lru-lock-v2", NULL};
	double end;

	robot_lore(NULL, 0, "tree %s", robot_w);
	robot_lore(out, sizeof(out), "series %s 2 2", robot_w);
	robot_lab_start(&ap);
	snprintf(cmd, sizeof(cmd), "git -C '%s/tree' fetch -q '%s/linux' 'refs/heads/*:refs/remotes/lore/*'",
		 robot_l, robot_w);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	robot_wait_offer(&ap);
	cr_assert_eq(robot_call("POST", "/api/v1/plans", TOKEN_ADMIN,
			  "{\"name\":\"branch\",\"branch\":\"memcg-lru-lock-v2\","
			  "\"tests\":[{\"suite\":\"kbench\",\"params\":{\"case\":\"tree\"}}],"
			  "\"machines\":[\"lab1\"],\"runs\":3,"
			  "\"report\":{\"mode\":\"send\",\"regzbot\":true,\"cc\":[\"linux-mm@kvack.org\"]}}",
			  NULL),
		     201);
	snprintf(git, sizeof(git), "%s/linux", robot_w);
	cr_assert_eq(tu_collect(args, NULL, &o, &e), 0, "%s%s", o, e);
	free(o);
	free(e);
	end = robot_now() + WAIT_S;
	while (robot_mails() < 1) {
		if (robot_now() > end) {
			char *log = robot_slurp(ap.log), *klog = robot_slurp(robot_k.log);
			size_t kl = strlen(klog);
			robot_dump_db();
			cr_assert_fail("no mail within %d s; the agent's log:\n%s\nkperfd's log ends:\n%s",
				       WAIT_S, log, klog + (kl > 4000 ? kl - 4000 : 0));
		}
		robot_pause(200);
	}
	m = robot_mail(1);
	cr_assert(strstr(m, "Subject: [memcg-lru-lock-v2] [mm/vmscan]  "), "%s", m);
	cr_assert(strstr(m, "% regression"), "%s", m);
	cr_assert(strstr(m, "To: Lab Dev <dev@example.org>"), "%s", m);
	cr_assert(strstr(m, "#regzbot introduced: "), "%s", m);
	cr_assert(strstr(m, "commit: "), "%s", m);
	cr_assert(strstr(m, "(\"mm/vmscan: use lruvec->lru_lock in shrink_lruvec\")"), "%s", m);
	cr_assert_null(strstr(m, "In-Reply-To:"), "%s", m);
	free(m);
	cr_assert_eq(harness_count(&robot_k, "SELECT count(*) FROM plan_target WHERE state = 'regression'"),
		     1);
	robot_agent_stop(&ap);
}

/*
 * What a lab refuses: a series from an inbox its agent was not given
 * (kperfd must not make a lab build code of its choosing), and a series
 * that does not apply on its base, which fails at once with git am's
 * words and shows on the series as "does not apply".
 */
Test(robot, a_lab_applies_only_from_its_inboxes_and_says_when_a_series_does_not_apply)
{
	struct robot_agent ap = {0};
	char out[4096], cmd[4096];
	json_t *job, *v;
	const char *why;

	robot_lore(NULL, 0, "tree %s", robot_w);
	robot_lab_start_from(&ap, "http://127.0.0.1:9/other-list/");
	robot_wait_offer(&ap);
	robot_setup_plan("send", 0);
	robot_lore(out, sizeof(out), "series %s 2 0", robot_w);
	snprintf(cmd, sizeof(cmd), "inject %s %s/out-v2/*.patch", robot_w, robot_w);
	robot_lore(out, sizeof(out), "%s", cmd);
	v = robot_wait_state(2, "failed|does_not_apply|clean|regression", &ap);
	cr_assert_str_eq(json_string_value(json_object_get(v, "state")), "failed", "%s",
			 json_dumps(v, 0));
	json_decref(v);
	job = robot_job_of_series();
	cr_assert_not_null(job);
	why = json_string_value(json_object_get(
		json_array_get(json_object_get(job, "failures"), 0), "reason"));
	cr_assert(strstr(why, "which is none of this agent's --inbox"), "%s", why);
	cr_assert_eq((long)json_number_value(json_object_get(job, "attempts")), 1, "not final");
	json_decref(job);
	cr_assert_eq(harness_count(&robot_k, "SELECT count(*) FROM posted_patch WHERE commit_id IS NOT NULL"),
		     0, "the tree was changed");

	/* the right inbox, a v3 whose patch 2 has a context line the base lacks */
	robot_agent_stop(&ap);
	robot_lab_start(&ap);
	robot_lore(out, sizeof(out), "series %s 3 0", robot_w);
	snprintf(cmd, sizeof(cmd), "sed -i 's/^-\\tspin_lock_irq(&pgdat->lru_lock);/-\\tspin_lock_irq(\\&nosuch->lru_lock);/' %s/out-v3/v3-0002-*.patch && grep -q nosuch %s/out-v3/v3-0002-*.patch",
		 robot_w, robot_w);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	snprintf(cmd, sizeof(cmd), "inject %s %s/out-v3/*.patch", robot_w, robot_w);
	robot_lore(out, sizeof(out), "%s", cmd);
	v = robot_wait_state(3, "failed|does_not_apply|clean|regression", &ap);
	cr_assert_str_eq(json_string_value(json_object_get(v, "state")), "does_not_apply", "%s",
			 json_dumps(v, 0));
	why = json_string_value(json_object_get(v, "state_detail"));
	cr_assert(strstr(why, "does not apply on bb22bebfc2e8: git am says: "), "%s", why);
	cr_assert(strstr(why, "patch failed") || strstr(why, "does not apply"), "%s", why);
	json_decref(v);
	robot_pause(2000);
	cr_assert_eq(robot_mails(), 0);
	robot_agent_stop(&ap);
}

/*
 * An agent without --tree runs the base but leaves the series job to one
 * with a tree; an improvement is answered too, in the head patch's thread.
 */
Test(robot, series_jobs_wait_for_an_agent_with_a_tree_and_an_improvement_is_replied)
{
	struct robot_agent ap = {0};
	char out[4096], cmd[4096];
	json_t *v;
	char *m;

	robot_lore(NULL, 0, "tree %s", robot_w);
	robot_lab_start_from(&ap, NULL);
	robot_wait_offer(&ap);
	robot_setup_plan("send", 0);
	setenv("LORE_COST", "-300", 1); /* patch 2 makes it 30% faster */
	robot_lore(out, sizeof(out), "series %s 2 2", robot_w);
	unsetenv("LORE_COST");
	snprintf(cmd, sizeof(cmd), "inject %s %s/out-v2/*.patch", robot_w, robot_w);
	robot_lore(out, sizeof(out), "%s", cmd);
	for (double end = robot_now() + WAIT_S; robot_jobs_in("done", "%the base") < 1; robot_pause(200))
		cr_assert(robot_now() < end, "the base was not measured within %d s", WAIT_S);
	robot_pause(3000); /* claims the tree-less agent makes meanwhile */
	cr_assert_eq(robot_jobs_in("queued", "%patches"), 1, "a tree-less agent took the series job");
	robot_agent_stop(&ap);
	robot_lab_start(&ap);
	v = robot_wait_state(2, "improvement|regression|clean|failed|does_not_apply", &ap);
	cr_assert_str_eq(json_string_value(json_object_get(v, "state")), "improvement", "%s",
			 json_dumps(v, 0));
	for (double end = robot_now() + WAIT_S; robot_mails() < 1; robot_pause(200))
		cr_assert(robot_now() < end, "no mail within %d s", WAIT_S);
	m = robot_mail(1);
	{
		char want[1200];
		snprintf(want, sizeof(want), "In-Reply-To: <%s>", robot_patch_msgid(v, 3));
		cr_assert(strstr(m, want), "%s", m);
	}
	cr_assert(strstr(m, "kperf noticed a +29.") || strstr(m, "kperf noticed a +30."), "%s", m);
	cr_assert(strstr(m, "% improvement of kbench.throughput on:"), "%s", m);
	cr_assert(strstr(m, "Subject: Re: [PATCH v2 3/3]"), "%s", m);
	free(m);
	json_decref(v);
	robot_agent_stop(&ap);
}
