/*
 * work.h - working on one job of `kperf-collect agent`: its kernel, its
 * runs and how that ended (work.c), with what it shares with the loop that
 * claims and resumes jobs (agent.c). Internal to collectors/agent/.
 */
#ifndef KPERF_AGENT_WORK_H
#define KPERF_AGENT_WORK_H

#include <signal.h>

#include "collectors/agent/agent.h"
#include "collectors/agent/catalogue.h"
#include "collectors/agent/jobfile.h"
#include "collectors/host/machine.h"

struct agent {
	const struct collect_config *c;
	const struct agent_opts *o;
	struct catalogue cat;
	char machine[MACHINE_NAME_MAX + 1];
	char **hook, **running_cmd; /* words, or NULL */
	char state_path[4096];
	char state_dir[4096]; /* the state directory (scratch space for b4 too) */
	struct jobfile state; /* at state_path */
	double idle_since;
	int spooled; /* runs of ours waiting in the spool */
};

/* SIGTERM/SIGINT received, counted up to 10 (agent.c's handler). */
extern volatile sig_atomic_t agent_stops;

/* "kperf-collect: " and the line on stdout, flushed. */
void agent_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Sleep up to s seconds; returns early on a stop. */
void agent_nap(double s);
/* CLOCK_MONOTONIC in seconds. */
double agent_mono(void);

/* How working on a job ended, and what the agent does next. */
enum work_end {
	END_DONE,    /* its runs are posted: check that kperfd counted them */
	END_FAIL,    /* fail it with the reason */
	END_LOST,    /* kperfd took the lease away: drop it */
	END_RELEASE, /* SIGTERM: give it back, exit 0 */
	END_KEPT,    /* SIGTERM while switching kernels: the state stays, exit 0 */
	END_FATAL,   /* a run was lost or the state cannot be written: give it back, exit 75 */
};

/* Why a job is failed: at most REASON_MAX bytes kept by kperfd. */
#define WHY_SIZE 2048

/* Write a job's failure reason into why (WHY_SIZE bytes), cut to what kperfd keeps. */
void work_because(char *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Fail j with why, or give it back; either way its state file is removed. */
void work_fail(struct agent *a, const struct job *j, const char *why);
void work_give_back(struct agent *a, const struct job *j);
/* work_fail, final: no machine could do better (the job ends at once). */
void work_fail_final(struct agent *a, const struct job *j, const char *why, int final);
/* Deliver what waits in the spool (ours and `run`'s); what stays is counted. */
void work_flush_spool(struct agent *a);
/* Work on a claimed or resumed job until it ends; END_DONE, END_RELEASE, ... as done. */
enum work_end work_job(struct agent *a, const struct job *j, enum job_phase ph);

#endif
