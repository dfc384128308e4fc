/*
 * robot_lab.c - the robot tests' lore, kperfd, lab and readers (see
 * robot_lab.h).
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/collect/robot_lab.h"
#include "tests/collect/testutil.h"

struct kperfd robot_k;
char robot_w[512], robot_l[600], robot_url[64], robot_inbox_url[128], robot_cwd[1024];
int robot_lore_port, robot_smtp_port;

double robot_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void robot_pause(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Run tests/robot/lore.sh with args; its stdout (trimmed) into out. */
void robot_lore(char *out, size_t cap, const char *fmt, ...)
{
	char cmd[8192], line[4096];
	va_list ap;
	FILE *p;
	size_t n = 0;
	int st;

	va_start(ap, fmt);
	n = (size_t)snprintf(cmd, sizeof(cmd), "bash tests/robot/lore.sh ");
	vsnprintf(cmd + n, sizeof(cmd) - n, fmt, ap);
	va_end(ap);
	p = popen(cmd, "r");
	cr_assert_not_null(p, "%s", cmd);
	if (out)
		out[0] = '\0';
	n = 0;
	while (fgets(line, sizeof(line), p))
		if (out && n + strlen(line) < cap) {
			memcpy(out + n, line, strlen(line) + 1);
			n += strlen(line);
		}
	st = pclose(p);
	cr_assert_eq(st, 0, "%s exited %d: %s", cmd, st, out ? out : "");
	while (out && n && (out[n - 1] == '\n' || out[n - 1] == ' '))
		out[--n] = '\0';
}

long robot_call(const char *method, const char *path, const char *token, const char *body,
		 json_t **j)
{
	return harness_call(&robot_k, method, path, token, body, j);
}

/* kperfd's settings, for its start and its restarts */
static char smtp_env[64];
const char *robot_settings[] = {smtp_env, "KPERF_MAIL_FROM=kperf@kperf.test",
					"KPERF_CONFIRM_RUNS=3", "KPERF_BISECT=1",
					"KPERF_SMTP_RETRY_S=1", NULL};

void robot_setup(void)
{
	cr_assert_not_null(getcwd(robot_cwd, sizeof(robot_cwd)));
	tu_tmpdir(robot_w, sizeof(robot_w));
	snprintf(robot_l, sizeof(robot_l), "%s/lab", robot_w);
	robot_lore_port = harness_free_port();
	robot_smtp_port = harness_free_port();
	robot_lore(NULL, 0, "init %s %d", robot_w, robot_lore_port);
	robot_lore(NULL, 0, "smtp %s %d", robot_w, robot_smtp_port);
	snprintf(robot_inbox_url, sizeof(robot_inbox_url), "http://127.0.0.1:%d/linux-mm/", robot_lore_port);
	snprintf(smtp_env, sizeof(smtp_env), "KPERF_SMTP_URL=smtp://127.0.0.1:%d", robot_smtp_port);
	kperfd_env(robot_settings);
	kperfd_start(&robot_k, NULL);
	kperfd_env(NULL);
	snprintf(robot_url, sizeof(robot_url), "http://127.0.0.1:%d", robot_k.port);
}

void robot_teardown(void)
{
	kperfd_stop(&robot_k);
	robot_lore(NULL, 0, "stop %s", robot_w);
}



char *robot_slurp(const char *path)
{
	size_t len;
	return access(path, R_OK) ? strdup("") : harness_slurp(path, &len);
}

/* A lab: a clone of the stand-in kernel tree's base, a kernel file, a
 * catalogue whose test is tree-bench.sh over the tree; its agent started. */
void robot_lab_start(struct robot_agent *ap)
{
	robot_lab_start_from(ap, robot_inbox_url);
}

void robot_lab_host(const char *release)
{
	char text[256];

	snprintf(text, sizeof(text), "%s\n", release);
	tu_write(robot_l, "proc/sys/kernel/osrelease", text);
	snprintf(text, sizeof(text), "Linux version %s (gcc) #1 SMP\n", release);
	tu_write(robot_l, "proc/version", text);
	tu_write(robot_l, "proc/cpuinfo", "processor\t: 0\nmodel name\t: Test CPU\n");
	tu_write(robot_l, "proc/meminfo", "MemTotal:       2097152 kB\nMemFree:  1048576 kB\n");
	tu_write(robot_l, "proc/vmstat", "nr_free_pages 262144\npgfault 1000\n");
	tu_write(robot_l, "sys/.keep", "");
	tu_write(robot_l, "boot/.keep", "");
}

/* The lab's agent, taking series from inbox only (NULL: no --tree at all). */
void robot_lab_start_from(struct robot_agent *ap, const char *inbox)
{
	const char *bin = getenv("KPERF_COLLECT_BIN") ? getenv("KPERF_COLLECT_BIN")
						      : "build/kperf-collect";
	char cmd[9000], cat[700], state[700], kernel[700], hook[2000], running[800];
	char tree[700], spool[700], text[8192], base[64];
	const char *argv[40];
	int n = 0;

	snprintf(tree, sizeof(tree), "%s/tree", robot_l);
	snprintf(cmd, sizeof(cmd), "test -d '%s' || { mkdir -p '%s' && git clone -q --single-branch"
		 " -b master '%s/linux' '%s' && git -C '%s' rev-parse HEAD > '%s/base'; }",
		 tree, robot_l, robot_w, tree, tree, robot_l);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	{
		char *b = robot_slurp(strcat(strcpy(cat, robot_l), "/base"));
		snprintf(base, sizeof(base), "%.40s", b);
		free(b);
	}
	snprintf(kernel, sizeof(kernel), "%s/kernel", robot_l);
	tu_write(robot_l, "kernel", strcat(strcpy(text, base), " 6.1.0-lab\n"));
	robot_lab_host("6.1.0-lab");
	snprintf(text, sizeof(text),
		 "[lrucost]\nsuite = kbench\nparams = case=tree\nformat = lkp-stats-json\n"
		 "iterations = 3\ncommand = /bin/sh '%s/tests/robot/tree-bench.sh' '%s' '%s'\n",
		 robot_cwd, tree, kernel);
	tu_write(robot_l, "catalogue", text);
	snprintf(cat, sizeof(cat), "%s/catalogue", robot_l);
	snprintf(state, sizeof(state), "%s/state", robot_l);
	snprintf(spool, sizeof(spool), "%s/spool", robot_l);
	snprintf(hook, sizeof(hook), "sh %s/tests/collect/hooks/record-kernel.sh %s", robot_cwd, kernel);
	snprintf(running, sizeof(running), "cat %s", kernel);
	snprintf(ap->log, sizeof(ap->log), "%s/agent.log", robot_l);
	argv[n++] = bin;
	argv[n++] = "--server";
	argv[n++] = robot_url;
	argv[n++] = "--token";
	argv[n++] = TOKEN_COLLECTOR;
	argv[n++] = "--machine";
	argv[n++] = "lab1";
	argv[n++] = "--spool";
	argv[n++] = spool;
	argv[n++] = "--timeout";
	argv[n++] = "20";
	argv[n++] = "agent";
	argv[n++] = "--catalogue";
	argv[n++] = cat;
	argv[n++] = "--state";
	argv[n++] = state;
	argv[n++] = "--kernel-hook";
	argv[n++] = hook;
	argv[n++] = "--running-cmd";
	argv[n++] = running;
	if (inbox) {
		argv[n++] = "--tree";
		argv[n++] = tree;
		argv[n++] = "--inbox";
		argv[n++] = inbox;
	}
	argv[n] = NULL;
	robot_agent_exec(ap, argv);
}

void robot_agent_exec(struct robot_agent *ap, const char *const *argv)
{
	int fd;

	ap->pid = fork();
	cr_assert_neq(ap->pid, -1);
	if (ap->pid == 0) {
		static char e[3][4400], home[4400];
		fd = open(ap->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* no agent outlives a failed test */
		setenv("KPERF_COLLECT_CONFIG", "/dev/null", 1);
		snprintf(home, sizeof(home), "%s/home", robot_w);
		setenv("HOME", home, 1); /* b4's cache and the git identity of the lore */
		snprintf(e[0], sizeof(e[0]), "KPERF_PROC_ROOT=%s/proc", robot_l);
		snprintf(e[1], sizeof(e[1]), "KPERF_SYS_ROOT=%s/sys", robot_l);
		snprintf(e[2], sizeof(e[2]), "KPERF_BOOT_ROOT=%s/boot", robot_l);
		for (int i = 0; i < 3; i++)
			putenv(e[i]);
		execv(argv[0], (char *const *)argv);
		_exit(126);
	}
}

void robot_agent_stop(struct robot_agent *ap)
{
	int st;
	if (ap->pid <= 0)
		return;
	kill(ap->pid, SIGTERM);
	for (int i = 0; i < 600 && waitpid(ap->pid, &st, WNOHANG) == 0; i++)
		robot_pause(50);
	kill(ap->pid, SIGKILL);
	waitpid(ap->pid, &st, 0);
	ap->pid = 0;
}

static char last_answer[4096];

/*
 * The loop's steps for the bench (tests/bench/robot.sh reads the line):
 * seconds from the series' arrival (t0, epoch seconds taken before the
 * injection) to it being stored with its jobs, to its base and head
 * measured, to the bisection's end, to the reply queued and sent.
 */
void robot_print_steps(double t0)
{
	char cmd[2048], sql[1200];
	snprintf(sql, sizeof(sql),
		 "SELECT format('robot steps: stored %%s measured %%s bisected %%s queued %%s sent %%s',"
		 " round((extract(epoch FROM (SELECT min(created_at) FROM posted_series)) - %.3f)::numeric, 2),"
		 " round((extract(epoch FROM (SELECT max(ended_at) FROM job WHERE plan_target_id IS NOT NULL))"
		 " - %.3f)::numeric, 2),"
		 " round((extract(epoch FROM (SELECT max(ended_at) FROM bisection)) - %.3f)::numeric, 2),"
		 " round((extract(epoch FROM (SELECT min(created_at) FROM alert WHERE kind = 'robot'))"
		 " - %.3f)::numeric, 2),"
		 " round((extract(epoch FROM (SELECT min(sent_at) FROM alert WHERE kind = 'robot'))"
		 " - %.3f)::numeric, 2))",
		 t0, t0, t0, t0, t0);
	snprintf(cmd, sizeof(cmd), "psql -qtA '%s dbname=%s' -c \"%s\" >&2", harness_pg(), robot_k.db, sql);
	if (system(cmd))
		fprintf(stderr, "(psql failed)\n");
}

/* Now, as PostgreSQL's epoch seconds. */
double robot_db_epoch(void)
{
	return (double)harness_count(&robot_k, "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint") /
	       1000.0;
}

/* On a failure: what the database holds of the robot's work, on stderr. */
void robot_dump_db(void)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd),
		 "psql '%s dbname=%s' -c 'SELECT id, plan_id, series_id, head_commit_id,"
		 " base_commit_id, state, detail FROM plan_target' -c 'SELECT id, commit_id, state,"
		 " reason, plan_target_id FROM job ORDER BY id' -c 'SELECT id, commit_id, base_commit_id,"
		 " base_kind, verdict, kpi, confirmation, bisection_id, command_differs FROM decision"
		 " ORDER BY id' -c 'SELECT * FROM decision_queue' -c 'SELECT id, state,"
		 " first_bad_commit_id FROM bisection' -c 'SELECT id, kind, state, robot_kind FROM alert'"
		 " >&2",
		 harness_pg(), robot_k.db);
	if (system(cmd))
		fprintf(stderr, "(psql failed)\n");
}

/* The posted version v of the series, or NULL. */
json_t *robot_version(int v)
{
	return robot_series_version(SERIES_NAME, v);
}

json_t *robot_series_version(const char *name, int v)
{
	json_t *j = NULL, *vs, *it, *out = NULL;
	size_t i;
	char path[600], *esc = curl_easy_escape(NULL, name, 0);
	long st;
	char *text;

	snprintf(path, sizeof(path), "/api/v1/series/%s", esc ? esc : "");
	curl_free(esc);
	st = robot_call("GET", path, NULL, NULL, &j);
	text = j ? json_dumps(j, JSON_COMPACT) : NULL;

	snprintf(last_answer, sizeof(last_answer), "HTTP %ld %s", st, text ? text : "");
	free(text);
	if (st != 200) {
		json_decref(j);
		return NULL;
	}
	vs = json_object_get(j, "posted");
	json_array_foreach(vs, i, it)
		if ((long)json_number_value(json_object_get(it, "version")) == v)
			out = json_incref(it);
	json_decref(j);
	return out;
}

/* Wait until version v's state is one of states ("a|b"); its object. */
json_t *robot_wait_state(int v, const char *states, struct robot_agent *ap)
{
	return robot_wait_series(SERIES_NAME, v, states, ap, WAIT_S);
}

json_t *robot_wait_series(const char *name, int v, const char *states, struct robot_agent *ap,
			  int wait_s)
{
	double end = robot_now() + wait_s;
	char last[64] = "none";

	for (;;) {
		json_t *s = robot_series_version(name, v);
		const char *st = s ? json_string_value(json_object_get(s, "state")) : NULL;
		if (st) {
			char want[128];
			snprintf(last, sizeof(last), "%s", st);
			snprintf(want, sizeof(want), "|%s|", states);
			char key[80];
			snprintf(key, sizeof(key), "|%s|", st);
			if (strstr(want, key))
				return s;
		}
		json_decref(s);
		if (robot_now() > end) {
			char *log = robot_slurp(ap->log), *klog = robot_slurp(robot_k.log);
			size_t kl = strlen(klog);
			cr_assert_fail("v%d not %s within %d s (it is %s: %.600s); the agent's log:\n%s\n"
				       "kperfd's log ends:\n%s",
				       v, states, wait_s, last, last_answer, log,
				       klog + (kl > 6000 ? kl - 6000 : 0));
		}
		robot_pause(200);
	}
}

int robot_mails(void)
{
	char path[4300];
	int n = 0;

	for (;; n++) {
		snprintf(path, sizeof(path), "%s/smtp/%d.eml", robot_w, n + 1);
		if (access(path, R_OK))
			return n;
	}
}

char *robot_mail(int i)
{
	char path[4300];
	size_t len;
	snprintf(path, sizeof(path), "%s/smtp/%d.eml", robot_w, i);
	return harness_slurp(path, &len);
}

/* The thread of msgid as lore shows it (MSGID/T/). */
char *robot_thread_page(const char *msgid)
{
	char cmd[8192], path[700];
	size_t len;

	snprintf(path, sizeof(path), "%s/thread.html", robot_w);
	snprintf(cmd, sizeof(cmd), "curl -sf -o '%s' '%s%s/T/'", path, robot_inbox_url, msgid);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	return harness_slurp(path, &len);
}

void robot_setup_plan(const char *mode, int clean)
{
	robot_setup_plan_for(mode, clean, "{\"suite\":\"kbench\",\"params\":{\"case\":\"tree\"}}");
}

void robot_setup_plan_for(const char *mode, int clean, const char *test)
{
	char body[2048];

	snprintf(body, sizeof(body),
		 "{\"name\":\"linux-mm\",\"url\":\"%s\",\"list\":\"linux-mm@kvack.org\",\"poll_s\":1}",
		 robot_inbox_url);
	cr_assert_eq(robot_call("POST", "/api/v1/inboxes", TOKEN_ADMIN, body, NULL), 201);
	snprintf(body, sizeof(body),
		 "{\"name\":\"lru\",\"inbox\":\"linux-mm\",\"match\":{\"subject\":\"*lru_lock*\","
		 "\"files\":[\"mm/*\",\"include/linux/mmzone.h\"]},"
		 "\"tests\":[%s],"
		 "\"machines\":[\"lab*\"],\"runs\":3,"
		 "\"report\":{\"mode\":\"%s\",\"cc\":[\"perf@example.org\"],\"clean\":%s}}",
		 test, mode, clean ? "true" : "false");
	cr_assert_eq(robot_call("POST", "/api/v1/plans", TOKEN_ADMIN, body, NULL), 201);
}

/* Until the agent offers its test: its first claim records it. */
void robot_wait_offer(struct robot_agent *ap)
{
	double end = robot_now() + WAIT_S;
	while (harness_count(&robot_k, "SELECT count(*) FROM machine_offer") < 1) {
		if (robot_now() > end) {
			char *log = robot_slurp(ap->log);
			cr_assert_fail("the agent made no claim; its log:\n%s", log);
		}
		robot_pause(100);
	}
}

const char *robot_patch_msgid(json_t *v, int pos)
{
	return json_string_value(
		json_object_get(json_array_get(json_object_get(v, "patches"), (size_t)pos - 1),
				"message_id"));
}

/* The robot's replies in the outbox, by state ("held", "sent", ...). */
long robot_alerts(const char *state)
{
	const char *p[1] = {state};
	return harness_count_params(&robot_k, "SELECT count(*) FROM alert WHERE kind = 'robot'"
				    " AND state = $1", 1, p);
}

void robot_wait_alerts(const char *state, long n)
{
	double end = robot_now() + WAIT_S;
	while (robot_alerts(state) != n) {
		cr_assert(robot_now() < end, "not %ld %s replies within %d s (%ld)", n, state, WAIT_S,
			  robot_alerts(state));
		robot_pause(200);
	}
}

void robot_release(long id)
{
	char path[64];
	snprintf(path, sizeof(path), "/api/v1/alerts/%ld/release", id);
	cr_assert_eq(robot_call("POST", path, TOKEN_ADMIN, NULL, NULL), 200);
	cr_assert_eq(robot_call("POST", path, TOKEN_ADMIN, NULL, NULL), 409); /* released once */
}

long robot_held_id(void)
{
	return harness_count(&robot_k, "SELECT max(id) FROM alert WHERE kind = 'robot' AND state = 'held'");
}

json_t *robot_job_of_series(void)
{
	json_t *j = NULL, *it, *out = NULL;
	size_t i;
	cr_assert_eq(robot_call("GET", "/api/v1/jobs?state=failed", NULL, NULL, &j), 200);
	json_array_foreach(json_object_get(j, "items"), i, it)
		if (strstr(json_string_value(json_object_get(it, "reason")) ?: "", "patches"))
			out = json_incref(it);
	json_decref(j);
	return out;
}

long robot_jobs_in(const char *state, const char *reason_like)
{
	const char *p[2] = {state, reason_like};
	return harness_count_params(&robot_k, "SELECT count(*) FROM job WHERE state = $1"
				    " AND reason LIKE $2", 2, p);
}
