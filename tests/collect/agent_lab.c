/*
 * agent_lab.c - the machinery of the agent suite (test_agent.c,
 * test_agent_lab.c): a lab machine in a directory, `kperf-collect agent`
 * as a process and its log, and the kperfd it talks to, with its jobs.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/collect/agent_lab.h"
#include "tests/collect/testutil.h"

struct kperfd lab_kperfd;
char lab_url[64];

double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void pause_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* ---- a lab machine in a directory ---- */

/* A machine running kernel sha/release, with variant {} (no knobs to read). */
void lab_init(struct lab *l, const char *sha, const char *release)
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
void lab_catalogue(struct lab *l, const char *seconds, int iterations)
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

/* Start `kperf-collect agent` for machine on l with more agent options (NULL-ended). */
void agent_start(struct agent_proc *ap, struct lab *l, const char *machine, const char *const *more)
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
	argv[n++] = lab_url;
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
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* no agent outlives a failed test */
		setenv("KPERF_COLLECT_CONFIG", "/dev/null", 1);
		unsetenv("KPERF_SERVER");
		unsetenv("KPERF_TOKEN");
		for (int i = 0; i < 3; i++)
			putenv(l->env[i]);
		execv(bin, (char *const *)argv);
		_exit(126);
	}
}

char *slurp_or_empty(const char *path)
{
	int fd = open(path, O_RDONLY);
	size_t len;

	if (fd < 0)
		return strdup("");
	close(fd);
	return harness_slurp(path, &len);
}

/* The agent's exit status; asserts it exits within timeout_s. */
int agent_wait(struct agent_proc *ap, int timeout_s)
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
void log_wait(struct agent_proc *ap, const char *text)
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

long call(const char *method, const char *path, const char *token, const char *body, json_t **j)
{
	return harness_call(&lab_kperfd, method, path, token, body, j);
}

long queue(const char *json)
{
	json_t *j;
	long st = call("POST", "/api/v1/jobs", TOKEN_ADMIN, json, &j), id;

	cr_assert_eq(st, 201, "%s", json);
	id = (long)json_number_value(json_object_get(j, "id"));
	json_decref(j);
	return id;
}

json_t *get_job(long id)
{
	char path[64];

	snprintf(path, sizeof(path), "/api/v1/jobs/%ld", id);
	return harness_get_json(&lab_kperfd, path, 200);
}

const char *job_str(json_t *j, const char *key)
{
	const char *s = json_string_value(json_object_get(j, key));
	return s ? s : "(null)";
}

long job_num(json_t *j, const char *key)
{
	return (long)json_number_value(json_object_get(j, key));
}

/* Wait until job id is in state; its object. */
json_t *job_wait(long id, const char *state)
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
long job_runs(long id)
{
	char ids[24];
	const char *p[1] = {ids};
	snprintf(ids, sizeof(ids), "%ld", id);
	return harness_count_params(&lab_kperfd, "SELECT count(*) FROM job_run WHERE job_id = $1::bigint",
				    1, p);
}

/* Runs kperfd stored for commit sha of suite kbench. */
long runs_of(const char *sha)
{
	const char *p[1] = {sha};
	return harness_count_params(&lab_kperfd,
				    "SELECT count(*) FROM run r JOIN commits c ON c.id = r.commit_id"
				    " JOIN test t ON t.id = r.test_id WHERE c.sha = $1"
				    " AND t.suite = 'kbench'",
				    1, p);
}

/* Lines of the workload's log equal to sha, and all lines. */
int kernel_log(struct lab *l, const char *sha, int *all)
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

int file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}
