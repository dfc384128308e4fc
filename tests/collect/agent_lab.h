/*
 * agent_lab.h - the machinery of the agent suite (test_agent.c,
 * test_agent_lab.c), in agent_lab.c: lab machines in directories, agents as
 * processes, and the kperfd they talk to (started by the suite's setup).
 */
#ifndef KPERF_AGENT_LAB_H
#define KPERF_AGENT_LAB_H

#include <jansson.h>
#include <sys/types.h>

#include "tests/integration/harness.h"

#define SHA_A HARNESS_SHA_A
#define SHA_B HARNESS_SHA_B
#define SHA_WRONG "1111111111111111111111111111111111111111"
#define HOOK "tests/collect/hooks/record-kernel.sh"
#define WORKLOAD "tests/collect/workloads/kernel-bench.sh"

/* Bounds on waits: generous, for a loaded 2-core machine. */
#define WAIT_S 60

/* The suite's kperfd and its URL (set again after a restart). */
extern struct kperfd lab_kperfd;
extern char lab_url[64];

/* ---- a lab machine in a directory ---- */

struct lab {
	char dir[4096];
	char kernel[4200]; /* what --running-cmd prints: "SHA RELEASE" */
	char env[3][4300]; /* fixture roots */
	char spool[4200];
};

struct agent_proc {
	pid_t pid;
	char log[4300];
};

/* A machine running kernel sha/release; its catalogue (kbench, missing). */
void lab_init(struct lab *l, const char *sha, const char *release);
void lab_catalogue(struct lab *l, const char *seconds, int iterations);

/* `kperf-collect agent` for machine on l with more options (NULL-ended);
 * its exit status (asserted within timeout_s); text awaited in its log. */
void agent_start(struct agent_proc *ap, struct lab *l, const char *machine,
                 const char *const *more);
int agent_wait(struct agent_proc *ap, int timeout_s);
void log_wait(struct agent_proc *ap, const char *text);

/* ---- kperfd: requests and jobs ---- */

long call(const char *method, const char *path, const char *token, const char *body, json_t **j);
/* Queue a job (admin token), its id; GET a job; its string/number keys;
 * wait for it to reach state. */
long queue(const char *json);
json_t *get_job(long id);
const char *job_str(json_t *j, const char *key);
long job_num(json_t *j, const char *key);
json_t *job_wait(long id, const char *state);
/* Runs counted toward job id; runs stored for commit sha of suite kbench. */
long job_runs(long id);
long runs_of(const char *sha);

/* Lines of the workload's log equal to sha (all: every line). */
int kernel_log(struct lab *l, const char *sha, int *all);
int file_exists(const char *path);

/* Monotonic seconds; a sleep; a file's text, "" when it is missing. */
double now_s(void);
void pause_ms(long ms);
char *slurp_or_empty(const char *path);

#endif
