/*
 * agent.h - `kperf-collect agent`: the lab machine's side of kperfd's job
 * queue. It claims jobs for the tests of its catalogue, switches kernels
 * through the site's hook, runs the test as `run` does and posts each run
 * naming the job, heartbeating meanwhile. The state machine is in agent.c.
 */
#ifndef KPERF_AGENT_H
#define KPERF_AGENT_H

#include "collectors/base/config.h"
#include "collectors/kernel/vm.h"

#define AGENT_DEFAULT_STATE_DIR "/var/lib/kperf-agent"
/* The file in the state directory that holds the job being worked on. */
#define AGENT_STATE_FILE "job.json"
/* Seconds a claim waits for a job (kperfd allows 60). A SIGTERM waits for the
 * claim's answer, since a claim given up could still lease a job to no one:
 * a short poll keeps `systemctl stop` short. */
#define AGENT_CLAIM_WAIT_MAX_S 20
/* Seconds to wait for the new kernel after the kernel hook exited 0. */
#define AGENT_DEFAULT_BOOT_WAIT_S 600
/* Bytes of the kernel hook's output kept for a failure's reason. */
#define AGENT_HOOK_TAIL_MAX 512
/* Longest wait between attempts while kperfd does not answer, seconds. */
#define AGENT_BACKOFF_MAX_S 30

/* Inboxes an agent applies series from (--inbox). */
#define AGENT_INBOXES_MAX 16

struct agent_opts {
	const char *catalogue;   /* the catalogue file; required */
	const char *kernel_hook; /* "CMD ARGS" run as CMD ARGS SHA RELEASE, or NULL */
	const char *running_cmd; /* "CMD ARGS" printing the running sha and/or release, or NULL */
	const char *state_dir;   /* NULL: AGENT_DEFAULT_STATE_DIR */
	long idle_exit_s;        /* > 0: exit 0 after this long without a job */
	long boot_wait_s;        /* 0: AGENT_DEFAULT_BOOT_WAIT_S */
	const char *tree;        /* a git tree: jobs' commits checked out, series applied; or NULL */
	const char *inboxes[AGENT_INBOXES_MAX]; /* where series may come from (--inbox) */
	int ninboxes;
	int check;               /* only read the catalogue and print its tests */
	const char *kernel_build;  /* build dir: each job's commit built from --tree, or NULL */
	const char *kernel_config; /* the lab's kernel config, or NULL: tinyconfig */
	long build_jobs;           /* make -j for the kernel; 0: the CPUs */
	int vm;                    /* boot the built kernel in QEMU, run the test there */
	struct vm_opts vmo;        /* the guest (--vm-*) */
};

/*
 * Run the agent until SIGTERM/SIGINT (the job in hand is given back) or
 * --idle-exit. Returns the process exit status: 0; EXIT_USAGE for bad
 * options, no server or token, or a state file of another machine or
 * server; EXIT_REJECTED for a bad catalogue or state file, or a claim
 * kperfd refuses (400/401/403/404); EXIT_LOST when a run could be neither
 * posted nor spooled, or the state directory cannot be written.
 */
int agent_command(const struct collect_config *c, const struct agent_opts *o);

#endif
