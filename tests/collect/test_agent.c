/*
 * test_agent.c - `kperf-collect agent` as processes against a real kperfd:
 * jobs queued with the admin token are claimed, the kernel is switched by a
 * hook script (tests/collect/hooks/record-kernel.sh records the wanted
 * kernel, --running-cmd cats it back; a test plays the reboot by moving the
 * file and starting the agent again), runs are posted naming the job; an
 * agent killed mid-job leaves the job to another once its lease runs out;
 * SIGTERM gives the job back; failures carry their reasons. Catalogues and
 * state files that are not what they should be: test_agent_input.c.
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

#include "tests/integration/harness.h"
#include "tests/collect/testutil.h"

#define SHA_A HARNESS_SHA_A
#define SHA_B HARNESS_SHA_B
#define SHA_WRONG "1111111111111111111111111111111111111111"
#define HOOK "tests/collect/hooks/record-kernel.sh"
#define WORKLOAD "tests/collect/workloads/kernel-bench.sh"

/* Bounds on waits: generous, for a loaded 2-core machine. */
#define WAIT_S 60

static struct kperfd K;
static char url[64];

static void setup(void)
{
	kperfd_start(&K, NULL);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", K.port);
	harness_seed_commits(&K);
}

static void teardown(void)
{
	kperfd_stop(&K);
}

TestSuite(agent, .init = setup, .fini = teardown, .timeout = 240);

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pause_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* ---- a lab machine in a directory ---- */

struct lab {
	char dir[4096];
	char kernel[4200]; /* what --running-cmd prints: "SHA RELEASE" */
	char env[3][4300]; /* fixture roots */
	char spool[4200];
};

/* A machine running kernel sha/release, with variant {} (no knobs to read). */
static void lab_init(struct lab *l, const char *sha, const char *release)
{
	char line[200];

	tu_tmpdir(l->dir, sizeof(l->dir));
	snprintf(line, sizeof(line), "%s\n", release);
	tu_write(l->dir, "proc/sys/kernel/osrelease", line);
	tu_write(l->dir, "proc/version", "Linux version test (gcc) #1 SMP\n");
	tu_write(l->dir, "proc/cpuinfo", "processor\t: 0\nmodel name\t: Test CPU\n");
	tu_write(l->dir, "proc/meminfo", "MemTotal:       2097152 kB\nMemFree:  1048576 kB\n");
	tu_write(l->dir, "proc/vmstat", "nr_free_pages 262144\npgfault 1000\n");
	tu_write(l->dir, "sys/.keep", "");
	tu_write(l->dir, "boot/.keep", "");
	snprintf(line, sizeof(line), "%s %s\n", sha, release);
	tu_write(l->dir, "kernel", line);
	snprintf(l->kernel, sizeof(l->kernel), "%s/kernel", l->dir);
	snprintf(l->spool, sizeof(l->spool), "%s/spool", l->dir);
	snprintf(l->env[0], sizeof(l->env[0]), "KPERF_PROC_ROOT=%s/proc", l->dir);
	snprintf(l->env[1], sizeof(l->env[1]), "KPERF_SYS_ROOT=%s/sys", l->dir);
	snprintf(l->env[2], sizeof(l->env[2]), "KPERF_BOOT_ROOT=%s/boot", l->dir);
}

/* The catalogue: kbench (case=sleep, the workload for seconds per iteration), and missing. */
static void lab_catalogue(struct lab *l, const char *seconds, int iterations)
{
	char text[16384], cwd[2048];

	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	snprintf(text, sizeof(text),
		 "# the agent tests' catalogue\n"
		 "[kbench]\n"
		 "suite = kbench\n"
		 "params = case=sleep\n"
		 "format = lkp-stats-json\n"
		 "iterations = %d\n"
		 "command = /bin/sh '%s/" WORKLOAD "' '%s' %s\n"
		 "\n"
		 "[missing]\n"
		 "suite = kbench\n"
		 "params = case=missing\n"
		 "command = /nonexistent/kbench --go\n",
		 iterations, cwd, l->kernel, seconds);
	tu_write(l->dir, "catalogue", text);
}

struct agent_proc {
	pid_t pid;
	char log[4300];
};

/* Start `kperf-collect agent` for machine on l with more agent options (NULL-ended). */
static void agent_start(struct agent_proc *ap, struct lab *l, const char *machine,
			const char *const *more)
{
	const char *bin = getenv("KPERF_COLLECT_BIN") ? getenv("KPERF_COLLECT_BIN")
						      : "build/kperf-collect";
	char catalogue[4300], state[4300];
	const char *argv[64];
	int n = 0, fd;

	snprintf(catalogue, sizeof(catalogue), "%s/catalogue", l->dir);
	snprintf(state, sizeof(state), "%s/state-%s", l->dir, machine);
	snprintf(ap->log, sizeof(ap->log), "%s/agent-%s.log", l->dir, machine);
	argv[n++] = bin;
	argv[n++] = "--server";
	argv[n++] = url;
	argv[n++] = "--token";
	argv[n++] = TOKEN_COLLECTOR;
	argv[n++] = "--machine";
	argv[n++] = machine;
	argv[n++] = "--spool";
	argv[n++] = l->spool;
	argv[n++] = "--timeout";
	argv[n++] = "20";
	argv[n++] = "agent";
	argv[n++] = "--catalogue";
	argv[n++] = catalogue;
	argv[n++] = "--state";
	argv[n++] = state;
	while (more && *more && n < 62)
		argv[n++] = *more++;
	argv[n] = NULL;
	ap->pid = fork();
	cr_assert_neq(ap->pid, -1);
	if (ap->pid == 0) {
		fd = open(ap->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		setenv("KPERF_COLLECT_CONFIG", "/dev/null", 1);
		unsetenv("KPERF_SERVER");
		unsetenv("KPERF_TOKEN");
		for (int i = 0; i < 3; i++)
			putenv(l->env[i]);
		execv(bin, (char *const *)argv);
		_exit(126);
	}
}

static char *slurp_or_empty(const char *path)
{
	int fd = open(path, O_RDONLY);
	size_t len;

	if (fd < 0)
		return strdup("");
	close(fd);
	return harness_slurp(path, &len);
}

/* The agent's exit status; asserts it exits within timeout_s. */
static int agent_wait(struct agent_proc *ap, int timeout_s)
{
	double end = now_s() + timeout_s;
	int st;

	while (now_s() < end) {
		pid_t w = waitpid(ap->pid, &st, WNOHANG);
		if (w == ap->pid) {
			char *log = slurp_or_empty(ap->log);
			cr_assert(WIFEXITED(st), "agent died of signal %d; its log:\n%s",
				  WIFSIGNALED(st) ? WTERMSIG(st) : 0, log);
			free(log);
			ap->pid = 0;
			return WEXITSTATUS(st);
		}
		pause_ms(50);
	}
	{
		char *log = slurp_or_empty(ap->log);
		kill(ap->pid, SIGKILL);
		waitpid(ap->pid, &st, 0);
		ap->pid = 0;
		cr_assert_fail("agent did not exit within %d s; its log:\n%s", timeout_s, log);
	}
	return -1;
}

/* Wait until the agent's log holds text; asserts it does within WAIT_S. */
static void log_wait(struct agent_proc *ap, const char *text)
{
	double end = now_s() + WAIT_S;

	for (;;) {
		char *log = slurp_or_empty(ap->log);
		int hit = strstr(log, text) != NULL;
		if (!hit && now_s() > end)
			cr_assert_fail("\"%s\" not in the agent's log within %d s:\n%s", text, WAIT_S,
				       log);
		free(log);
		if (hit)
			return;
		pause_ms(50);
	}
}

/* ---- kperfd ---- */

static long call(const char *method, const char *path, const char *token, const char *body,
		 json_t **j)
{
	return harness_call(&K, method, path, token, body, j);
}

static long queue(const char *json)
{
	json_t *j;
	long st = call("POST", "/api/v1/jobs", TOKEN_ADMIN, json, &j), id;

	cr_assert_eq(st, 201, "%s", json);
	id = (long)json_number_value(json_object_get(j, "id"));
	json_decref(j);
	return id;
}

static json_t *get_job(long id)
{
	char path[64];

	snprintf(path, sizeof(path), "/api/v1/jobs/%ld", id);
	return harness_get_json(&K, path, 200);
}

static const char *job_str(json_t *j, const char *key)
{
	const char *s = json_string_value(json_object_get(j, key));
	return s ? s : "(null)";
}

static long job_num(json_t *j, const char *key)
{
	return (long)json_number_value(json_object_get(j, key));
}

/* Wait until job id is in state; its object. */
static json_t *job_wait(long id, const char *state)
{
	double end = now_s() + WAIT_S;

	for (;;) {
		json_t *j = get_job(id);
		if (!strcmp(job_str(j, "state"), state))
			return j;
		if (now_s() > end) {
			char *s = json_dumps(j, JSON_COMPACT);
			cr_assert_fail("job %ld not %s within %d s: %s", id, state, WAIT_S, s);
		}
		json_decref(j);
		pause_ms(100);
	}
}

/* Runs counted toward job id. */
static long job_runs(long id)
{
	char ids[24];
	const char *p[1] = {ids};
	snprintf(ids, sizeof(ids), "%ld", id);
	return harness_count_params(&K, "SELECT count(*) FROM job_run WHERE job_id = $1::bigint",
				    1, p);
}

/* Runs kperfd stored for commit sha of suite kbench. */
static long runs_of(const char *sha)
{
	const char *p[1] = {sha};
	return harness_count_params(&K,
				    "SELECT count(*) FROM run r JOIN commits c ON c.id = r.commit_id"
				    " JOIN test t ON t.id = r.test_id WHERE c.sha = $1"
				    " AND t.suite = 'kbench'",
				    1, p);
}

/* Lines of the workload's log equal to sha, and all lines. */
static int kernel_log(struct lab *l, const char *sha, int *all)
{
	char path[4300], *text, *save = NULL;
	int hits = 0;

	snprintf(path, sizeof(path), "%s.log", l->kernel);
	text = slurp_or_empty(path);
	*all = 0;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		(*all)++;
		hits += !strcmp(line, sha);
	}
	free(text);
	return hits;
}

static int file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

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
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM run r JOIN machine m"
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

	return harness_post_run(&K, NULL, &d, NULL);
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
	kperfd_kill(&K);
	kperfd_env(env);
	kperfd_restart(&K);
	kperfd_env(NULL);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", K.port);

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
		if (harness_count(&K, "SELECT count(*) FROM machine_offer o JOIN machine m"
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
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM job"), 6);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM job WHERE state = 'done'"
				       " AND attempts = 0 AND runs_done = runs"),
		     6);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM job WHERE decision_id IS NOT NULL"),
		     2);
	/* nothing measured beyond what the bisection needed */
	cr_expect_eq(harness_count(&K, "SELECT count(DISTINCT commit_id) FROM run"), 6);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM run"), 3 + 3 + 4 * 3);
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
	kperfd_kill(&K);
	kperfd_env(env);
	kperfd_restart(&K);
	kperfd_env(NULL);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", K.port);
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
		if (harness_count(&K, "SELECT count(*) FROM machine_offer o JOIN machine m"
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
		if (harness_count(&K, "SELECT count(*) FROM decision d JOIN metric m"
				      " ON m.id = d.metric_id WHERE m.name = 'kbench.throughput'"
				      " AND d.confirmation = 'refuted'") == 1)
			break;
		pause_ms(100);
	}
	kill(ap.pid, SIGTERM);
	/* confirm_started_at is set when a decision starts to wait, and kept */
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM decision d JOIN metric m"
				       " ON m.id = d.metric_id WHERE m.name = 'kbench.throughput'"
				       " AND d.confirm_started_at IS NOT NULL"),
		     1, "the regression waited for its confirmation");
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM decision d JOIN metric m"
				       " ON m.id = d.metric_id WHERE m.name = 'kbench.throughput'"
				       " AND d.confirmation = 'refuted' AND d.verdict = 'noise'"
				       " AND d.base_runs = 3 AND d.target_runs = 3"),
		     1, "refuted by 3 runs a side");
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM job WHERE state = 'done'"
				       " AND decision_id IS NOT NULL"),
		     2, "a job for each side's missing runs");
	pause_ms(3000); /* past the settle time */
	cr_expect_eq(maildir_count(maildir), 0, "a refuted regression mails nothing");
	agent_wait(&ap, WAIT_S);
	smtp_stop(smtp);
}
