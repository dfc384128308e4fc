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
 * is read from the thread as on lore.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/collect/testutil.h"
#include "tests/integration/harness.h"

#define WAIT_S 240
#define SERIES_NAME "mm: per-memcg lru_lock"
#define SERIES_PATH "/api/v1/series/mm:%20per-memcg%20lru_lock"

static struct kperfd K;
static char W[512], L[600], url[64], lore[128], cwd[1024];
static int lore_port, smtp_port;

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

/* Run tests/robot/lore.sh with args; its stdout (trimmed) into out. */
static void lore_sh(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void lore_sh(char *out, size_t cap, const char *fmt, ...)
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

static long call(const char *method, const char *path, const char *token, const char *body,
		 json_t **j)
{
	return harness_call(&K, method, path, token, body, j);
}

/* kperfd's settings, for its start and its restarts */
static char smtp_env[64];
static const char *kperfd_settings[] = {smtp_env, "KPERF_MAIL_FROM=kperf@kperf.test",
					"KPERF_CONFIRM_RUNS=3", "KPERF_BISECT=1",
					"KPERF_SMTP_RETRY_S=1", NULL};

static void setup(void)
{
	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	tu_tmpdir(W, sizeof(W));
	snprintf(L, sizeof(L), "%s/lab", W);
	lore_port = harness_free_port();
	smtp_port = harness_free_port();
	lore_sh(NULL, 0, "init %s %d", W, lore_port);
	lore_sh(NULL, 0, "smtp %s %d", W, smtp_port);
	snprintf(lore, sizeof(lore), "http://127.0.0.1:%d/linux-mm/", lore_port);
	snprintf(smtp_env, sizeof(smtp_env), "KPERF_SMTP_URL=smtp://127.0.0.1:%d", smtp_port);
	kperfd_env(kperfd_settings);
	kperfd_start(&K, NULL);
	kperfd_env(NULL);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", K.port);
}

static void teardown(void)
{
	kperfd_stop(&K);
	lore_sh(NULL, 0, "stop %s", W);
}

TestSuite(robot, .init = setup, .fini = teardown, .timeout = 600);

struct agent_proc {
	pid_t pid;
	char log[4300];
};

static char *slurp_or_empty(const char *path)
{
	size_t len;
	return access(path, R_OK) ? strdup("") : harness_slurp(path, &len);
}

/* A lab: a clone of the stand-in kernel tree's base, a kernel file, a
 * catalogue whose test is tree-bench.sh over the tree; its agent started. */
static void lab_start_from(struct agent_proc *ap, const char *inbox);

static void lab_start(struct agent_proc *ap)
{
	lab_start_from(ap, lore);
}

/* The lab's agent, taking series from inbox only. */
static void lab_start_from(struct agent_proc *ap, const char *inbox)
{
	const char *bin = getenv("KPERF_COLLECT_BIN") ? getenv("KPERF_COLLECT_BIN")
						      : "build/kperf-collect";
	char cmd[9000], cat[700], state[700], kernel[700], hook[2000], running[800];
	char tree[700], spool[700], text[8192], base[64];
	const char *argv[40];
	int n = 0, fd;

	snprintf(tree, sizeof(tree), "%s/tree", L);
	snprintf(cmd, sizeof(cmd), "test -d '%s' || { mkdir -p '%s' && git clone -q --single-branch"
		 " -b master '%s/linux' '%s' && git -C '%s' rev-parse HEAD > '%s/base'; }",
		 tree, L, W, tree, tree, L);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	{
		char *b = slurp_or_empty(strcat(strcpy(cat, L), "/base"));
		snprintf(base, sizeof(base), "%.40s", b);
		free(b);
	}
	snprintf(kernel, sizeof(kernel), "%s/kernel", L);
	tu_write(L, "kernel", strcat(strcpy(text, base), " 6.1.0-lab\n"));
	tu_write(L, "proc/sys/kernel/osrelease", "6.1.0-lab\n");
	tu_write(L, "proc/version", "Linux version test (gcc) #1 SMP\n");
	tu_write(L, "proc/cpuinfo", "processor\t: 0\nmodel name\t: Test CPU\n");
	tu_write(L, "proc/meminfo", "MemTotal:       2097152 kB\nMemFree:  1048576 kB\n");
	tu_write(L, "proc/vmstat", "nr_free_pages 262144\npgfault 1000\n");
	tu_write(L, "sys/.keep", "");
	tu_write(L, "boot/.keep", "");
	snprintf(text, sizeof(text),
		 "[lrucost]\nsuite = kbench\nparams = case=tree\nformat = lkp-stats-json\n"
		 "iterations = 3\ncommand = /bin/sh '%s/tests/robot/tree-bench.sh' '%s' '%s'\n",
		 cwd, tree, kernel);
	tu_write(L, "catalogue", text);
	snprintf(cat, sizeof(cat), "%s/catalogue", L);
	snprintf(state, sizeof(state), "%s/state", L);
	snprintf(spool, sizeof(spool), "%s/spool", L);
	snprintf(hook, sizeof(hook), "sh %s/tests/collect/hooks/record-kernel.sh %s", cwd, kernel);
	snprintf(running, sizeof(running), "cat %s", kernel);
	snprintf(ap->log, sizeof(ap->log), "%s/agent.log", L);
	argv[n++] = bin;
	argv[n++] = "--server";
	argv[n++] = url;
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
	argv[n++] = "--tree";
	argv[n++] = tree;
	argv[n++] = "--inbox";
	argv[n++] = inbox;
	argv[n] = NULL;
	ap->pid = fork();
	cr_assert_neq(ap->pid, -1);
	if (ap->pid == 0) {
		static char e[3][4400], home[4400];
		fd = open(ap->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		setenv("KPERF_COLLECT_CONFIG", "/dev/null", 1);
		snprintf(home, sizeof(home), "%s/home", W);
		setenv("HOME", home, 1); /* b4's cache and the git identity of the lore */
		snprintf(e[0], sizeof(e[0]), "KPERF_PROC_ROOT=%s/proc", L);
		snprintf(e[1], sizeof(e[1]), "KPERF_SYS_ROOT=%s/sys", L);
		snprintf(e[2], sizeof(e[2]), "KPERF_BOOT_ROOT=%s/boot", L);
		for (int i = 0; i < 3; i++)
			putenv(e[i]);
		execv(bin, (char *const *)argv);
		_exit(126);
	}
}

static void agent_stop(struct agent_proc *ap)
{
	int st;
	if (ap->pid <= 0)
		return;
	kill(ap->pid, SIGTERM);
	for (int i = 0; i < 600 && waitpid(ap->pid, &st, WNOHANG) == 0; i++)
		pause_ms(50);
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
static void print_steps(double t0)
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
	snprintf(cmd, sizeof(cmd), "psql -qtA '%s dbname=%s' -c \"%s\" >&2", harness_pg(), K.db, sql);
	if (system(cmd))
		fprintf(stderr, "(psql failed)\n");
}

/* Now, as PostgreSQL's epoch seconds. */
static double db_epoch(void)
{
	return (double)harness_count(&K, "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint") /
	       1000.0;
}

/* On a failure: what the database holds of the robot's work, on stderr. */
static void dump_db(void)
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
		 harness_pg(), K.db);
	if (system(cmd))
		fprintf(stderr, "(psql failed)\n");
}

/* The posted version v of the series, or NULL. */
static json_t *version(int v)
{
	json_t *j = NULL, *vs, *it, *out = NULL;
	size_t i;
	long st = call("GET", SERIES_PATH, NULL, NULL, &j);
	char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;

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
static json_t *wait_state(int v, const char *states, struct agent_proc *ap)
{
	double end = now_s() + WAIT_S;
	char last[64] = "none";

	for (;;) {
		json_t *s = version(v);
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
		if (now_s() > end) {
			char *log = slurp_or_empty(ap->log), *klog = slurp_or_empty(K.log);
			size_t kl = strlen(klog);
			cr_assert_fail("v%d not %s within %d s (it is %s: %.600s); the agent's log:\n%s\n"
				       "kperfd's log ends:\n%s",
				       v, states, WAIT_S, last, last_answer, log,
				       klog + (kl > 6000 ? kl - 6000 : 0));
		}
		pause_ms(200);
	}
}

static int mails(void)
{
	char path[4300];
	int n = 0;

	for (;; n++) {
		snprintf(path, sizeof(path), "%s/smtp/%d.eml", W, n + 1);
		if (access(path, R_OK))
			return n;
	}
}

static char *mail(int i)
{
	char path[4300];
	size_t len;
	snprintf(path, sizeof(path), "%s/smtp/%d.eml", W, i);
	return harness_slurp(path, &len);
}

/* The thread of msgid as lore shows it (MSGID/T/). */
static char *thread_page(const char *msgid)
{
	char cmd[8192], path[700];
	size_t len;

	snprintf(path, sizeof(path), "%s/thread.html", W);
	snprintf(cmd, sizeof(cmd), "curl -sf -o '%s' '%s%s/T/'", path, lore, msgid);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	return harness_slurp(path, &len);
}

static void setup_plan(const char *mode, int clean)
{
	char body[2048];

	snprintf(body, sizeof(body),
		 "{\"name\":\"linux-mm\",\"url\":\"%s\",\"list\":\"linux-mm@kvack.org\",\"poll_s\":1}",
		 lore);
	cr_assert_eq(call("POST", "/api/v1/inboxes", TOKEN_ADMIN, body, NULL), 201);
	snprintf(body, sizeof(body),
		 "{\"name\":\"lru\",\"inbox\":\"linux-mm\",\"match\":{\"subject\":\"*lru_lock*\","
		 "\"files\":[\"mm/*\",\"include/linux/mmzone.h\"]},"
		 "\"tests\":[{\"suite\":\"kbench\",\"params\":{\"case\":\"tree\"}}],"
		 "\"machines\":[\"lab*\"],\"runs\":3,"
		 "\"report\":{\"mode\":\"%s\",\"cc\":[\"perf@example.org\"],\"clean\":%s}}",
		 mode, clean ? "true" : "false");
	cr_assert_eq(call("POST", "/api/v1/plans", TOKEN_ADMIN, body, NULL), 201);
}

/* Until the agent offers its test: its first claim records it. */
static void wait_offer(struct agent_proc *ap)
{
	double end = now_s() + WAIT_S;
	while (harness_count(&K, "SELECT count(*) FROM machine_offer") < 1) {
		if (now_s() > end) {
			char *log = slurp_or_empty(ap->log);
			cr_assert_fail("the agent made no claim; its log:\n%s", log);
		}
		pause_ms(100);
	}
}

static const char *patch_msgid(json_t *v, int pos)
{
	return json_string_value(
		json_object_get(json_array_get(json_object_get(v, "patches"), (size_t)pos - 1),
				"message_id"));
}

Test(robot, v2_regression_bisected_to_patch_2_replied_in_its_thread_then_v3_clean)
{
	struct agent_proc ap = {0};
	char out[4096], cover2[1024], files[8192];
	json_t *v2, *v3;
	char *m, *page;
	double t0, epoch0;

	lore_sh(NULL, 0, "tree %s", W);
	lab_start(&ap);
	wait_offer(&ap);
	setup_plan("send", 0);

	/* v2: patch 2 makes the workload 40% slower */
	lore_sh(cover2, sizeof(cover2), "series %s 2 2", W);
	snprintf(files, sizeof(files), "inject %s %s/out-v2/*.patch", W, W);
	t0 = now_s();
	epoch0 = db_epoch();
	lore_sh(out, sizeof(out), "%s", files);
	v2 = wait_state(2, "regression|does_not_apply|failed|clean", &ap);
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
	for (double end = now_s() + WAIT_S; mails() < 1; pause_ms(200))
		if (now_s() > end) {
			json_t *al = NULL;
			char *klog = slurp_or_empty(K.log), *text;
			size_t kl = strlen(klog);
			call("GET", "/api/v1/alerts", TOKEN_ADMIN, NULL, &al);
			text = json_dumps(al, JSON_COMPACT);
			cr_assert_fail("no mail within %d s; alerts: %.2000s\nkperfd's log ends:\n%s",
				       WAIT_S, text, klog + (kl > 4000 ? kl - 4000 : 0));
		}
	fprintf(stderr, "robot: v2 injected to its reply sent: %.1f s\n", now_s() - t0);
	print_steps(epoch0);
	m = mail(1);
	{
		char want[1200];
		snprintf(want, sizeof(want), "In-Reply-To: <%s>", patch_msgid(v2, 2));
		cr_assert(strstr(m, want), "%s", m);
		snprintf(want, sizeof(want), "References: <%s> <%s>", cover2, patch_msgid(v2, 2));
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
	page = thread_page(patch_msgid(v2, 2));
	cr_assert(strstr(page, "regression of kbench.throughput"), "the thread holds no reply");
	free(page);

	/* v3 fixes it: measured against its base, nothing moved, no mail */
	snprintf(files, sizeof(files), "series %s 3 0", W);
	lore_sh(out, sizeof(out), "%s", files);
	snprintf(files, sizeof(files), "inject %s %s/out-v3/*.patch", W, W);
	lore_sh(out, sizeof(out), "%s", files);
	v3 = wait_state(3, "regression|does_not_apply|failed|clean", &ap);
	cr_assert_str_eq(json_string_value(json_object_get(v3, "state")), "clean", "%s",
			 json_dumps(v3, 0));
	cr_assert_eq((long)json_number_value(json_object_get(v3, "previous_version")), 2);
	pause_ms(3000); /* the mailer would have sent by now */
	cr_assert_eq(mails(), 1, "v3 was mailed about");
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM alert WHERE kind = 'robot'"), 1);
	json_decref(v2);
	json_decref(v3);
	agent_stop(&ap);
}

/* The robot's replies in the outbox, by state ("held", "sent", ...). */
static long robot_alerts(const char *state)
{
	const char *p[1] = {state};
	return harness_count_params(&K, "SELECT count(*) FROM alert WHERE kind = 'robot'"
				    " AND state = $1", 1, p);
}

static void wait_alerts(const char *state, long n)
{
	double end = now_s() + WAIT_S;
	while (robot_alerts(state) != n) {
		cr_assert(now_s() < end, "not %ld %s replies within %d s (%ld)", n, state, WAIT_S,
			  robot_alerts(state));
		pause_ms(200);
	}
}

static void release(long id)
{
	char path[64];
	snprintf(path, sizeof(path), "/api/v1/alerts/%ld/release", id);
	cr_assert_eq(call("POST", path, TOKEN_ADMIN, NULL, NULL), 200);
	cr_assert_eq(call("POST", path, TOKEN_ADMIN, NULL, NULL), 409); /* released once */
}

static long held_id(void)
{
	return harness_count(&K, "SELECT max(id) FROM alert WHERE kind = 'robot' AND state = 'held'");
}

/*
 * "mode": "hold" keeps the reply until an admin releases it, through a
 * kperfd killed (SIGKILL) with it held: nothing mailed twice. With
 * "clean": true a version where nothing moved gets one reply to its cover.
 */
Test(robot, held_reply_survives_a_kill_is_released_once_and_clean_v3_replies_to_its_cover)
{
	struct agent_proc ap = {0};
	char out[4096], cover3[1024], cmd[2048];
	json_t *v3;
	int st;
	char *m;

	lore_sh(NULL, 0, "tree %s", W);
	lab_start(&ap);
	wait_offer(&ap);
	setup_plan("hold", 1);
	lore_sh(out, sizeof(out), "series %s 2 2", W);
	snprintf(cmd, sizeof(cmd), "inject %s %s/out-v2/*.patch", W, W);
	lore_sh(out, sizeof(out), "%s", cmd);
	json_decref(wait_state(2, "regression", &ap));
	wait_alerts("held", 1);
	cr_assert_eq(mails(), 0, "a held reply was mailed");

	/* killed with the reply held: it is still held, once, after the restart */
	kill(K.pid, SIGKILL);
	waitpid(K.pid, &st, 0);
	K.pid = 0;
	kperfd_env(kperfd_settings);
	kperfd_restart(&K);
	kperfd_env(NULL);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", K.port);
	pause_ms(3000); /* three robot passes */
	cr_assert_eq(robot_alerts("held"), 1);
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM alert WHERE kind = 'robot'"), 1);
	release(held_id());
	for (double end = now_s() + WAIT_S; mails() < 1; pause_ms(200))
		cr_assert(now_s() < end, "the released reply was not mailed within %d s", WAIT_S);
	m = mail(1);
	cr_assert(strstr(m, "Subject: Re: [PATCH v2 2/3]"), "%s", m);
	free(m);

	/* v3, clean: one reply to its cover letter, held too, then released */
	agent_stop(&ap);
	lab_start(&ap); /* the agent of the restarted kperfd */
	lore_sh(cover3, sizeof(cover3), "series %s 3 0", W);
	snprintf(cmd, sizeof(cmd), "inject %s %s/out-v3/*.patch", W, W);
	lore_sh(out, sizeof(out), "%s", cmd);
	v3 = wait_state(3, "clean|regression|failed|does_not_apply", &ap);
	cr_assert_str_eq(json_string_value(json_object_get(v3, "state")), "clean");
	wait_alerts("held", 1);
	release(held_id());
	for (double end = now_s() + WAIT_S; mails() < 2; pause_ms(200))
		cr_assert(now_s() < end, "the clean reply was not mailed within %d s", WAIT_S);
	m = mail(2);
	{
		char want[1200];
		snprintf(want, sizeof(want), "In-Reply-To: <%s>", cover3);
		cr_assert(strstr(m, want), "%s", m);
	}
	cr_assert(strstr(m, "Subject: Re: [PATCH v3 0/3] mm: per-memcg lru_lock"), "%s", m);
	cr_assert(strstr(m, "kperf tested this series and noticed no performance change"), "%s", m);
	cr_assert(strstr(m, "kbench.throughput"), "%s", m);
	free(m);
	pause_ms(2000);
	cr_assert_eq(mails(), 2);
	json_decref(v3);
	agent_stop(&ap);
}

/*
 * A plan on a branch: each new head that `kperf-collect commits --branch`
 * posts is measured against where the branch forked, and a regression is
 * bisected and mailed in the robot's tree-commit form, to the commit's
 * author, with the line regzbot reads.
 */
Test(robot, branch_head_regression_mailed_in_tree_form_with_regzbot)
{
	struct agent_proc ap = {0};
	char out[4096], cmd[4096], git[700], *o = NULL, *e = NULL, *m;
	const char *args[] = {"--server", url, "--token", TOKEN_COLLECTOR, "commits", "--git", git,
			      "--branch", "memcg-lru-lock-v2", "v6.1..memcg-lru-lock-v2", NULL};
	double end;

	lore_sh(NULL, 0, "tree %s", W);
	lore_sh(out, sizeof(out), "series %s 2 2", W);
	lab_start(&ap);
	snprintf(cmd, sizeof(cmd), "git -C '%s/tree' fetch -q '%s/linux' 'refs/heads/*:refs/remotes/lore/*'",
		 L, W);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	wait_offer(&ap);
	cr_assert_eq(call("POST", "/api/v1/plans", TOKEN_ADMIN,
			  "{\"name\":\"branch\",\"branch\":\"memcg-lru-lock-v2\","
			  "\"tests\":[{\"suite\":\"kbench\",\"params\":{\"case\":\"tree\"}}],"
			  "\"machines\":[\"lab1\"],\"runs\":3,"
			  "\"report\":{\"mode\":\"send\",\"regzbot\":true,\"cc\":[\"linux-mm@kvack.org\"]}}",
			  NULL),
		     201);
	snprintf(git, sizeof(git), "%s/linux", W);
	cr_assert_eq(tu_collect(args, NULL, &o, &e), 0, "%s%s", o, e);
	free(o);
	free(e);
	end = now_s() + WAIT_S;
	while (mails() < 1) {
		if (now_s() > end) {
			char *log = slurp_or_empty(ap.log), *klog = slurp_or_empty(K.log);
			size_t kl = strlen(klog);
			dump_db();
			cr_assert_fail("no mail within %d s; the agent's log:\n%s\nkperfd's log ends:\n%s",
				       WAIT_S, log, klog + (kl > 4000 ? kl - 4000 : 0));
		}
		pause_ms(200);
	}
	m = mail(1);
	cr_assert(strstr(m, "Subject: [memcg-lru-lock-v2] [mm/vmscan]  "), "%s", m);
	cr_assert(strstr(m, "% regression"), "%s", m);
	cr_assert(strstr(m, "To: Lab Dev <dev@example.org>"), "%s", m);
	cr_assert(strstr(m, "#regzbot introduced: "), "%s", m);
	cr_assert(strstr(m, "commit: "), "%s", m);
	cr_assert(strstr(m, "(\"mm/vmscan: use lruvec->lru_lock in shrink_lruvec\")"), "%s", m);
	cr_assert_null(strstr(m, "In-Reply-To:"), "%s", m);
	free(m);
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM plan_target WHERE state = 'regression'"),
		     1);
	agent_stop(&ap);
}

static json_t *job_of_series(void)
{
	json_t *j = NULL, *it, *out = NULL;
	size_t i;
	cr_assert_eq(call("GET", "/api/v1/jobs?state=failed", NULL, NULL, &j), 200);
	json_array_foreach(json_object_get(j, "items"), i, it)
		if (strstr(json_string_value(json_object_get(it, "reason")) ?: "", "patches"))
			out = json_incref(it);
	json_decref(j);
	return out;
}

/*
 * What a lab refuses: a series from an inbox its agent was not given
 * (kperfd must not make a lab build code of its choosing), and a series
 * that does not apply on its base, which fails at once with git am's
 * words and shows on the series as "does not apply".
 */
Test(robot, a_lab_applies_only_from_its_inboxes_and_says_when_a_series_does_not_apply)
{
	struct agent_proc ap = {0};
	char out[4096], cmd[4096];
	json_t *job, *v;
	const char *why;

	lore_sh(NULL, 0, "tree %s", W);
	lab_start_from(&ap, "http://127.0.0.1:9/other-list/");
	wait_offer(&ap);
	setup_plan("send", 0);
	lore_sh(out, sizeof(out), "series %s 2 0", W);
	snprintf(cmd, sizeof(cmd), "inject %s %s/out-v2/*.patch", W, W);
	lore_sh(out, sizeof(out), "%s", cmd);
	v = wait_state(2, "failed|does_not_apply|clean|regression", &ap);
	cr_assert_str_eq(json_string_value(json_object_get(v, "state")), "failed", "%s",
			 json_dumps(v, 0));
	json_decref(v);
	job = job_of_series();
	cr_assert_not_null(job);
	why = json_string_value(json_object_get(
		json_array_get(json_object_get(job, "failures"), 0), "reason"));
	cr_assert(strstr(why, "which is none of this agent's --inbox"), "%s", why);
	cr_assert_eq((long)json_number_value(json_object_get(job, "attempts")), 1, "not final");
	json_decref(job);
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM posted_patch WHERE commit_id IS NOT NULL"),
		     0, "the tree was changed");

	/* the right inbox, a v3 whose patch 2 has a context line the base lacks */
	agent_stop(&ap);
	lab_start(&ap);
	lore_sh(out, sizeof(out), "series %s 3 0", W);
	snprintf(cmd, sizeof(cmd), "sed -i 's/^-\\tspin_lock_irq(&pgdat->lru_lock);/-\\tspin_lock_irq(\\&nosuch->lru_lock);/' %s/out-v3/v3-0002-*.patch && grep -q nosuch %s/out-v3/v3-0002-*.patch",
		 W, W);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	snprintf(cmd, sizeof(cmd), "inject %s %s/out-v3/*.patch", W, W);
	lore_sh(out, sizeof(out), "%s", cmd);
	v = wait_state(3, "failed|does_not_apply|clean|regression", &ap);
	cr_assert_str_eq(json_string_value(json_object_get(v, "state")), "does_not_apply", "%s",
			 json_dumps(v, 0));
	why = json_string_value(json_object_get(v, "state_detail"));
	cr_assert(strstr(why, "does not apply on bb22bebfc2e8: git am says: "), "%s", why);
	cr_assert(strstr(why, "patch failed") || strstr(why, "does not apply"), "%s", why);
	json_decref(v);
	pause_ms(2000);
	cr_assert_eq(mails(), 0);
	agent_stop(&ap);
}
