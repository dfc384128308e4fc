/*
 * test_agent.c - `kperf-collect agent` as processes against a real kperfd:
 * jobs queued with the admin token are claimed, the kernel is switched by a
 * hook script (tests/collect/hooks/record-kernel.sh records the wanted
 * kernel, --running-cmd cats it back; a test plays the reboot by moving the
 * file and starting the agent again), runs are posted naming the job; an
 * agent killed mid-job leaves the job to another once its lease runs out;
 * SIGTERM gives the job back; failures carry their reasons. Catalogues and
 * state files that are not what they should be: test_agent_input.c; the
 * lab loop (confirmation, bisection): test_agent_lab.c; the machinery both
 * share: agent_lab.c.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/collect/agent_lab.h"
#include "tests/integration/harness.h"
#include "tests/collect/testutil.h"

static void setup(void)
{
	kperfd_start(&lab_kperfd, NULL);
	snprintf(lab_url, sizeof(lab_url), "http://127.0.0.1:%d", lab_kperfd.port);
	harness_seed_commits(&lab_kperfd);
}

static void teardown(void)
{
	kperfd_stop(&lab_kperfd);
}

TestSuite(agent, .init = setup, .fini = teardown, .timeout = 240);

/* ---- the tests ---- */

Test(agent, switches_kernels_through_the_hook_and_resumes_after_the_reboot)
{
	struct lab l;
	struct agent_proc ap;
	char hook[8500], running[4400], next[4300], state[4400], cwd[2048];
	json_t *j;
	long id;
	int all;

	lab_init(&l, SHA_A, "6.1.0-a");
	lab_catalogue(&l, "0.1", 2);
	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	snprintf(next, sizeof(next), "%s.next", l.kernel);
	snprintf(hook, sizeof(hook), "/bin/sh '%s/" HOOK "' '%s'", cwd, next);
	snprintf(running, sizeof(running), "cat '%s'", l.kernel);
	snprintf(state, sizeof(state), "%s/state-lab1/job.json", l.dir);
	id = queue("{\"commit\":\"" SHA_B "\",\"suite\":\"kbench\",\"params\":{\"case\":\"sleep\"},"
		   "\"runs\":3,\"reason\":\"agent test\"}");

	/* the hook records the kernel to boot; the agent waits for it */
	{
		const char *more[] = {"--kernel-hook", hook, "--running-cmd", running, "--boot-wait",
				      "120", "--idle-exit", "120", NULL};
		agent_start(&ap, &l, "lab1", more);
	}
	log_wait(&ap, "kernel hook done");
	cr_assert(file_exists(next), "the hook did not record the kernel");
	{
		size_t len;
		char *s = harness_slurp(state, &len);
		cr_expect(strstr(s, "\"booting\"") != NULL, "state file: %s", s);
		free(s);
	}
	/* the reboot: systemd stops the agent, the machine comes up on the new kernel */
	kill(ap.pid, SIGTERM);
	cr_assert_eq(agent_wait(&ap, WAIT_S), 0);
	cr_assert(file_exists(state), "the job must stay in the state file across the reboot");
	j = get_job(id);
	cr_expect_str_eq(job_str(j, "state"), "running", "the job is not given back on a reboot");
	cr_expect_str_eq(job_str(j, "leased_to"), "lab1");
	cr_expect_eq(job_num(j, "attempts"), 0);
	json_decref(j);
	cr_assert_eq(rename(next, l.kernel), 0);

	{
		const char *more[] = {"--kernel-hook", hook, "--running-cmd", running, "--idle-exit",
				      "2", NULL};
		agent_start(&ap, &l, "lab1", more);
	}
	cr_assert_eq(agent_wait(&ap, WAIT_S * 2), 0);
	{
		char *log = slurp_or_empty(ap.log);
		cr_expect(strstr(log, "resuming it") != NULL, "%s", log);
		cr_expect(strstr(log, "done: 3 of 3 runs") != NULL, "%s", log);
		free(log);
	}
	j = get_job(id);
	cr_expect_str_eq(job_str(j, "state"), "done");
	cr_expect_eq(job_num(j, "runs_done"), 3);
	cr_expect_eq(job_num(j, "attempts"), 0);
	json_decref(j);
	cr_expect_eq(job_runs(id), 3);
	cr_expect_eq(runs_of(SHA_B), 3, "3 runs stored on the job's commit");
	cr_expect_eq(kernel_log(&l, SHA_B, &all), 6, "every iteration ran on the new kernel");
	cr_expect_eq(all, 6);
	cr_expect(!file_exists(state), "a finished job leaves no state");
}

Test(agent, runs_on_the_running_release_without_a_hook_and_records_its_offer)
{
	struct lab l;
	struct agent_proc ap;
	json_t *j, *items;
	long id;
	int all;

	/* no --running-cmd: /proc/sys/kernel/osrelease (6.1.0-a) is SHA_A's release */
	lab_init(&l, SHA_A, "6.1.0-a");
	lab_catalogue(&l, "0", 1);
	id = queue("{\"commit\":\"" SHA_A "\",\"suite\":\"kbench\",\"params\":{\"case\":\"sleep\"},"
		   "\"runs\":2}");
	{
		const char *more[] = {"--idle-exit", "2", NULL};
		agent_start(&ap, &l, "lab1", more);
	}
	cr_assert_eq(agent_wait(&ap, WAIT_S), 0);
	j = get_job(id);
	cr_expect_str_eq(job_str(j, "state"), "done");
	cr_expect_eq(job_num(j, "runs_done"), 2);
	json_decref(j);
	cr_expect_eq(runs_of(SHA_A), 2);
	cr_expect_eq(kernel_log(&l, SHA_A, &all), 2);
	/* the claim told kperfd what the machine offers */
	cr_assert_eq(call("GET", "/api/v1/agents", NULL, NULL, &j), 200);
	items = json_object_get(j, "items");
	cr_assert_eq(json_array_size(items), 1);
	cr_expect_str_eq(job_str(json_array_get(items, 0), "machine"), "lab1");
	/* kperfd records every test the catalogue offers (case=missing has no job
	 * or run yet: a test is its suite and params, known from the offer) */
	cr_expect_eq(json_array_size(json_object_get(json_array_get(items, 0), "tests")), 2);
	json_decref(j);
}

Test(agent, killed_mid_job_the_lease_runs_out_and_another_agent_finishes_it_once)
{
	struct lab l;
	struct agent_proc a1, a2;
	char running[4400];
	json_t *j;
	long id, done_by_first;
	double end;

	lab_init(&l, SHA_A, "6.1.0-a");
	lab_catalogue(&l, "1.5", 1);
	snprintf(running, sizeof(running), "cat '%s'", l.kernel);
	id = queue("{\"commit\":\"" SHA_A "\",\"suite\":\"kbench\",\"params\":{\"case\":\"sleep\"},"
		   "\"runs\":4,\"lease_s\":4}");
	{
		const char *more[] = {"--running-cmd", running, NULL};
		agent_start(&a1, &l, "lab1", more);
	}
	/* the first run counted: kill it in the middle of the second */
	end = now_s() + WAIT_S;
	for (;;) {
		j = get_job(id);
		done_by_first = job_num(j, "runs_done");
		json_decref(j);
		if (done_by_first >= 1)
			break;
		cr_assert(now_s() < end, "no run of the first agent counted within %d s", WAIT_S);
		pause_ms(50);
	}
	kill(a1.pid, SIGKILL);
	waitpid(a1.pid, NULL, 0);
	j = get_job(id);
	done_by_first = job_num(j, "runs_done");
	cr_assert_lt(done_by_first, 4, "the first agent finished before it was killed");
	cr_expect_str_eq(job_str(j, "state"), "running");
	cr_expect_str_eq(job_str(j, "leased_to"), "lab1");
	json_decref(j);

	{
		/* idle far longer than the lease: its claim waits for the lease to run
		 * out, however late the loaded machine starts it */
		const char *more[] = {"--running-cmd", running, "--idle-exit", "30", NULL};
		agent_start(&a2, &l, "lab2", more);
	}
	j = job_wait(id, "done");
	cr_expect_eq(job_num(j, "runs_done"), 4);
	json_decref(j);
	/* done: stopped as systemd stops it, it leaves cleanly */
	kill(a2.pid, SIGTERM);
	cr_assert_eq(agent_wait(&a2, WAIT_S), 0);
	{
		char *log = slurp_or_empty(a2.log);
		char want[64];
		snprintf(want, sizeof(want), "claimed: %ld run%s of kbench", 4 - done_by_first,
			 4 - done_by_first == 1 ? "" : "s");
		cr_expect(strstr(log, want) != NULL, "the second agent claims the runs still wanted "
						     "(%s):\n%s",
			  want, log);
		free(log);
	}
	cr_expect_eq(job_runs(id), 4);
	cr_expect_eq(runs_of(SHA_A), 4, "each wanted run stored once: the killed run is not");
	cr_expect_eq(harness_count(&lab_kperfd, "SELECT count(*) FROM run r JOIN machine m"
				       " ON m.id = r.machine_id WHERE m.name = 'lab1'"),
		     done_by_first, "the killed agent posted only the runs that counted");
}

Test(agent, sigterm_finishes_the_iteration_and_gives_the_job_back)
{
	struct lab l;
	struct agent_proc ap;
	char running[4400], state[4400];
	json_t *j;
	long id;
	int all, before;

	lab_init(&l, SHA_A, "6.1.0-a");
	/* iterations of 5 s: the SIGTERM lands in the first, however slow the
	 * test is to send it after the run's start */
	lab_catalogue(&l, "5", 3);
	snprintf(running, sizeof(running), "cat '%s'", l.kernel);
	snprintf(state, sizeof(state), "%s/state-lab1/job.json", l.dir);
	id = queue("{\"commit\":\"" SHA_A "\",\"suite\":\"kbench\",\"params\":{\"case\":\"sleep\"},"
		   "\"runs\":2}");
	{
		const char *more[] = {"--running-cmd", running, NULL};
		agent_start(&ap, &l, "lab1", more);
	}
	log_wait(&ap, "run 1 of 2");
	kernel_log(&l, SHA_A, &before);
	kill(ap.pid, SIGTERM);
	cr_assert_eq(agent_wait(&ap, WAIT_S), 0);
	{
		char *log = slurp_or_empty(ap.log);
		cr_expect(strstr(log, "given back") != NULL, "%s", log);
		free(log);
	}
	cr_expect_eq(before, 0);
	cr_expect_eq(kernel_log(&l, SHA_A, &all), 1, "the iteration under way was finished");
	cr_expect_eq(all, 1, "no iteration was started after the SIGTERM");
	j = get_job(id);
	cr_expect_str_eq(job_str(j, "state"), "queued");
	cr_expect_eq(job_num(j, "attempts"), 0, "a job given back costs no attempt");
	cr_expect_eq(job_num(j, "runs_done"), 0);
	cr_expect(json_is_null(json_object_get(j, "leased_to")));
	json_decref(j);
	cr_expect_eq(runs_of(SHA_A), 0, "a run cut short is not posted");
	cr_expect(!file_exists(state));
}

Test(agent, a_claim_for_tests_no_job_wants_gets_nothing_and_idle_exit_ends_it)
{
	struct lab l;
	struct agent_proc ap;
	json_t *j;
	double t0;
	long id;

	lab_init(&l, SHA_A, "6.1.0-a");
	lab_catalogue(&l, "0", 1);
	id = queue("{\"commit\":\"" SHA_A "\",\"suite\":\"ycsb\",\"params\":{\"case\":\"sleep\"}}");
	t0 = now_s();
	{
		const char *more[] = {"--idle-exit", "2", NULL};
		agent_start(&ap, &l, "lab1", more);
	}
	cr_assert_eq(agent_wait(&ap, WAIT_S), 0);
	cr_expect_geq(now_s() - t0, 2.0, "exited before --idle-exit");
	j = get_job(id);
	cr_expect_str_eq(job_str(j, "state"), "queued");
	json_decref(j);
	{
		char *log = slurp_or_empty(ap.log);
		cr_expect(strstr(log, "no job for 2 s: exiting") != NULL, "%s", log);
		free(log);
	}
}

Test(agent, jobs_it_cannot_do_fail_with_the_reason)
{
	struct lab l;
	struct agent_proc ap;
	char running[4400];
	json_t *j, *f;
	long missing, variant, other_kernel;
	const char *reason;

	lab_init(&l, SHA_A, "6.1.0-a");
	lab_catalogue(&l, "0", 1);
	snprintf(running, sizeof(running), "cat '%s'", l.kernel);
	missing = queue("{\"commit\":\"" SHA_A "\",\"suite\":\"kbench\","
			"\"params\":{\"case\":\"missing\"}}");
	variant = queue("{\"commit\":\"" SHA_A "\",\"suite\":\"kbench\","
			"\"params\":{\"case\":\"sleep\"},\"variant\":{\"thp\":\"never\"}}");
	other_kernel = queue("{\"commit\":\"" SHA_B "\",\"suite\":\"kbench\","
			     "\"params\":{\"case\":\"sleep\"}}");
	{
		const char *more[] = {"--running-cmd", running, "--idle-exit", "2", NULL};
		agent_start(&ap, &l, "lab1", more);
	}
	cr_assert_eq(agent_wait(&ap, WAIT_S * 2), 0);

	j = get_job(missing);
	cr_expect_str_eq(job_str(j, "state"), "failed", "three failures end a job");
	f = json_object_get(j, "failures");
	cr_assert_eq(json_array_size(f), 3);
	reason = job_str(json_array_get(f, 0), "reason");
	cr_expect(strstr(reason, "test missing: /nonexistent/kbench cannot be run (exit status "
				 "127)") != NULL,
		  "%s", reason);
	cr_expect(strstr(reason, "No such file or directory") != NULL, "%s", reason);
	json_decref(j);

	j = get_job(variant);
	cr_expect_str_eq(job_str(j, "state"), "failed");
	reason = job_str(json_array_get(json_object_get(j, "failures"), 0), "reason");
	cr_expect(strstr(reason, "the machine's variant is {} and the job's {\"thp\":\"never\"}") !=
			  NULL,
		  "%s", reason);
	json_decref(j);

	/* without a kernel hook the agent claims jobs on its own kernel only
	 * (the claim's "switch": false): another kernel's job is left queued
	 * for a machine that can boot it */
	j = get_job(other_kernel);
	cr_expect_str_eq(job_str(j, "state"), "queued");
	cr_expect_eq(json_array_size(json_object_get(j, "failures")), 0);
	json_decref(j);
	cr_expect_eq(runs_of(SHA_A) + runs_of(SHA_B), 0, "no run of a failed job is posted");
}

Test(agent, a_reboot_into_the_wrong_kernel_fails_the_job)
{
	struct lab l;
	struct agent_proc ap;
	char hook[8500], running[4400], next[4300];
	json_t *j;
	long id;
	const char *reason;

	lab_init(&l, SHA_A, "6.1.0-a");
	lab_catalogue(&l, "0", 1);
	snprintf(next, sizeof(next), "%s.next", l.kernel);
	/* a hook that installs another kernel than it was asked for */
	snprintf(hook, sizeof(hook), "/bin/sh -c 'echo " SHA_WRONG " 6.1.0-x > \"$0\"' '%s'", next);
	snprintf(running, sizeof(running), "cat '%s'", l.kernel);
	id = queue("{\"commit\":\"" SHA_B "\",\"suite\":\"kbench\",\"params\":{\"case\":\"sleep\"},"
		   "\"runs\":1}");
	{
		const char *more[] = {"--kernel-hook", hook, "--running-cmd", running, NULL};
		agent_start(&ap, &l, "lab1", more);
	}
	log_wait(&ap, "kernel hook done");
	kill(ap.pid, SIGTERM);
	cr_assert_eq(agent_wait(&ap, WAIT_S), 0);
	cr_assert_eq(rename(next, l.kernel), 0);
	{
		const char *more[] = {"--kernel-hook", hook, "--running-cmd", running, "--idle-exit",
				      "1", NULL};
		agent_start(&ap, &l, "lab1", more);
	}
	log_wait(&ap, "failed: after the kernel hook");
	kill(ap.pid, SIGTERM);
	cr_assert_eq(agent_wait(&ap, WAIT_S), 0);
	j = get_job(id);
	reason = job_str(json_array_get(json_object_get(j, "failures"), 0), "reason");
	cr_expect(strstr(reason, "after the kernel hook the machine runs commit " SHA_WRONG
				 " (release 6.1.0-x), not the job's commit " SHA_B
				 " (release 6.1.0-b)") != NULL,
		  "%s", reason);
	cr_expect_eq(job_num(j, "attempts"), 1);
	json_decref(j);
}
