/*
 * robot_lab.h - what the robot's end-to-end tests share (robot_lab.c): a
 * real public-inbox with its SMTP bridge (tests/robot/lore.sh), kperfd
 * with mail, a lab with a git tree and its agent, and reading the series,
 * the outbox and the mail that came back.
 */
#ifndef KPERF_TEST_ROBOT_LAB_H
#define KPERF_TEST_ROBOT_LAB_H

#include <jansson.h>
#include <sys/types.h>

#include "tests/integration/harness.h"

/* Bounds on waits: generous, for a loaded 2-core machine. */
#define WAIT_S 240
#define SERIES_NAME "mm: per-memcg lru_lock"
#define SERIES_PATH "/api/v1/series/mm:%20per-memcg%20lru_lock"

struct robot_agent {
	pid_t pid;
	char log[4300];
};

/* The suite's kperfd, work directory (the lore: robot_w), lab (robot_l),
 * kperfd's URL, the inbox's URL, the tests' working directory. */
extern struct kperfd robot_k;
extern char robot_w[512], robot_l[600], robot_url[64], robot_inbox_url[128], robot_cwd[1024];
extern int robot_lore_port, robot_smtp_port;
/* kperfd's settings, for its start and its restarts */
extern const char *robot_settings[];

double robot_now(void);

void robot_pause(long ms);

/* Run tests/robot/lore.sh with args; its stdout (trimmed) into out. */
void robot_lore(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

long robot_call(const char *method, const char *path, const char *token, const char *body,
		 json_t **j);

void robot_setup(void);

void robot_teardown(void);

char *robot_slurp(const char *path);

/* A lab: a clone of the stand-in kernel tree's base, a kernel file, a
 * catalogue whose test is tree-bench.sh over the tree; its agent started. */
void robot_lab_start(struct robot_agent *ap);

/* The lab machine's own /proc, /sys and /boot under robot_l (the agents'
 * KPERF_PROC_ROOT, _SYS_ROOT, _BOOT_ROOT): a kernel called release. */
void robot_lab_host(const char *release);

/* The lab's agent, taking series from inbox only (NULL: no --tree at all). */
void robot_lab_start_from(struct robot_agent *ap, const char *inbox);

/* Start an agent: argv[0] the kperf-collect binary; its output into ap->log
 * (set by the caller), HOME and the lab's proc/sys/boot roots as the
 * robot's labs have them. */
void robot_agent_exec(struct robot_agent *ap, const char *const *argv);

void robot_agent_stop(struct robot_agent *ap);

/*
 * The loop's steps for the bench (tests/bench/robot.sh reads the line):
 * seconds from the series' arrival (t0, epoch seconds taken before the
 * injection) to it being stored with its jobs, to its base and head
 * measured, to the bisection's end, to the reply queued and sent.
 */
void robot_print_steps(double t0);

/* Now, as PostgreSQL's epoch seconds. */
double robot_db_epoch(void);

/* On a failure: what the database holds of the robot's work, on stderr. */
void robot_dump_db(void);

/* The posted version v of the series, or NULL. */
json_t *robot_version(int v);

/* Version v of the series called name, or NULL. */
json_t *robot_series_version(const char *name, int v);

/* Wait until version v's state is one of states ("a|b"); its object. */
json_t *robot_wait_state(int v, const char *states, struct robot_agent *ap);

/* The same for the series called name, waiting at most wait_s. */
json_t *robot_wait_series(const char *name, int v, const char *states, struct robot_agent *ap,
			  int wait_s);

int robot_mails(void);

char *robot_mail(int i);

/* The thread of msgid as lore shows it (MSGID/T/). */
char *robot_thread_page(const char *msgid);

void robot_setup_plan(const char *mode, int clean);

/* The same plan with test (one JSON object: suite and params) instead. */
void robot_setup_plan_for(const char *mode, int clean, const char *test);

/* Until the agent offers its test: its first claim records it. */
void robot_wait_offer(struct robot_agent *ap);

const char *robot_patch_msgid(json_t *v, int pos);

/* The robot's replies in the outbox, by state ("held", "sent", ...). */
long robot_alerts(const char *state);

void robot_wait_alerts(const char *state, long n);

void robot_release(long id);

long robot_held_id(void);

json_t *robot_job_of_series(void);

long robot_jobs_in(const char *state, const char *reason_like);

#endif
