/*
 * runcmd.h - child processes of kperf-collect: git, zcat, perf, the kernel
 * hook, --running-cmd and the benchmark itself. A struct runcmd says what
 * to run and where its input and output go; runcmd_run runs it to the end,
 * runcmd_start / runcmd_finish split that for a caller that works while the
 * child runs. Output is read with poll(), every pipe is O_CLOEXEC, and every
 * child started is reaped.
 */
#ifndef KPERF_COLLECT_RUNCMD_H
#define KPERF_COLLECT_RUNCMD_H

#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "lib/buf.h"

/* Where the child's stdin comes from. */
enum runcmd_in {
	RUNCMD_IN_INHERIT, /* kperf-collect's own */
	RUNCMD_IN_NULL,    /* /dev/null */
	RUNCMD_IN_FD,      /* in_fd, which stays the caller's */
	RUNCMD_IN_DATA,    /* the in_len bytes at in_data, then end of file */
};

/* Where the child's stdout or stderr goes. */
enum runcmd_out {
	RUNCMD_OUT_INHERIT, /* kperf-collect's own */
	RUNCMD_OUT_CAPTURE, /* a pipe read into out_buf / err_buf and on_output */
	RUNCMD_OUT_FD,      /* out_fd / err_fd, which stay the caller's */
	RUNCMD_OUT_MERGE,   /* stderr only: wherever stdout goes (one pipe when captured) */
};

struct runcmd {
	const char *const *argv; /* argv[0] is looked up in $PATH unless path is set */
	const char *path;        /* the program to execute, or NULL */
	const char *const *env;  /* "NAME=value" set in the child's environment, NULL-ended */
	const char *dir;         /* the child's working directory, or NULL */

	enum runcmd_in in;
	int in_fd;
	const char *in_data;
	size_t in_len;

	enum runcmd_out out, err;
	int out_fd, err_fd;
	struct buf *out_buf, *err_buf; /* captured output, appended; NULL: dropped */
	size_t cap;    /* bytes kept per buffer (0: all); further bytes set truncated */
	int keep_tail; /* past cap keep the newest bytes (at least cap / 2), not the first */

	long timeout_ms;  /* > 0: SIGKILL the child after this long, timed_out set */
	int stop_at_exit; /* stop reading once the child exits, though a process it left
			   * behind may hold the pipe open */
	int new_group;    /* the child leads a process group of its own, killed whole */
	const char *exec_error_prefix; /* "PREFIXcannot run ARGV0: ERROR" on the child's
					* stderr when exec fails; NULL: no message */

	/* Called with each chunk of captured output (err: read from the stderr pipe). */
	void (*on_output)(void *arg, int err, const char *data, size_t n);
	/* Called every tick_ms (> 0) without output, and when poll is interrupted. */
	void (*on_tick)(void *arg);
	long tick_ms;
	/* Called in the child after the redirections, before exec; only
	 * async-signal-safe calls (kperf-collect may have threads). */
	void (*child_setup)(void);
	void *arg;

	/* Filled in. */
	pid_t pid;         /* 0 before the start and once reaped */
	int timed_out;     /* killed at timeout_ms */
	int truncated;     /* output past cap was dropped */
	int wait_status;   /* waitpid's status */
	struct rusage ru;  /* the child's resource usage */

	/* Private. */
	int fd_in, fd_out, fd_err;
	size_t in_off;
};

/* Empty: everything inherited, no timeout. */
void runcmd_init(struct runcmd *c);

/*
 * Start c. Returns 0, or -1 with errno when no pipe or process could be
 * made (nothing is left open then). A program that cannot be executed is
 * started: its child exits with status 127.
 */
int runcmd_start(struct runcmd *c);

/*
 * Feed and read the child started by runcmd_start until its output ends
 * (or it exits, with stop_at_exit), or it is killed at the deadline; then
 * reap it. Returns its exit status as a shell says it (128 + signal when
 * killed), or -1 with errno when it could not be waited for.
 */
int runcmd_finish(struct runcmd *c);

/* runcmd_start and runcmd_finish. */
int runcmd_run(struct runcmd *c);

/*
 * Reap a child started without pipes to read (or whose output is done):
 * wait for it, or with nohang only look. Returns 1 when it has exited
 * (wait_status, ru filled in, pid 0), 0 when it runs on, -1 with errno.
 */
int runcmd_reap(struct runcmd *c, int nohang);

/* Send sig to the child (its group with new_group); nothing once reaped. */
void runcmd_kill(const struct runcmd *c, int sig);

#endif
