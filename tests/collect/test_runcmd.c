/*
 * test_runcmd.c - collectors/base/runcmd: exit statuses, captured and
 * merged output, head and tail caps, stdin bytes and fds, environment
 * additions, the working directory, the deadline, a child that leaves a
 * process holding its pipe, start/reap by hand, and no fd left open.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collectors/base/runcmd.h"

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* sh -c script, stdout (and stderr when merge) into out. */
static int sh(const char *script, int merge, struct buf *out, struct runcmd *c)
{
	const char *argv[] = {"sh", "-c", script, NULL};

	c->argv = argv;
	c->out = RUNCMD_OUT_CAPTURE;
	c->out_buf = out;
	if (merge)
		c->err = RUNCMD_OUT_MERGE;
	return runcmd_run(c);
}

Test(runcmd, status_and_output)
{
	struct buf out = BUF_INIT, err = BUF_INIT;
	const char *argv[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
	struct runcmd c;
	int fds = open_fds();

	runcmd_init(&c);
	c.argv = argv;
	c.out = c.err = RUNCMD_OUT_CAPTURE;
	c.out_buf = &out;
	c.err_buf = &err;
	cr_assert_eq(runcmd_run(&c), 3);
	cr_assert_str_eq(buf_str(&out), "out\n");
	cr_assert_str_eq(buf_str(&err), "err\n");
	cr_assert_eq(c.pid, 0);
	cr_assert_eq(open_fds(), fds);
	buf_reset(&out);
	runcmd_init(&c);
	cr_assert_eq(sh("echo a; echo b >&2; kill -9 $$", 1, &out, &c), 128 + SIGKILL);
	cr_assert_str_eq(buf_str(&out), "a\nb\n");
	buf_release(&out);
	buf_release(&err);
}

Test(runcmd, exec_failure)
{
	struct buf out = BUF_INIT;
	const char *argv[] = {"/nonexistent/kperf-no-such-program", NULL};
	struct runcmd c;

	runcmd_init(&c);
	c.argv = argv;
	c.out = RUNCMD_OUT_CAPTURE;
	c.err = RUNCMD_OUT_MERGE;
	c.out_buf = &out;
	c.exec_error_prefix = "kperf-collect: ";
	cr_assert_eq(runcmd_run(&c), 127);
	cr_assert_str_eq(buf_str(&out), "kperf-collect: cannot run "
					"/nonexistent/kperf-no-such-program: No such file or "
					"directory\n");
	buf_release(&out);
}

Test(runcmd, caps)
{
	struct buf out = BUF_INIT;
	struct runcmd c;

	runcmd_init(&c);
	c.cap = 4;
	cr_assert_eq(sh("printf 0123456789", 0, &out, &c), 0);
	cr_assert_str_eq(buf_str(&out), "0123");
	cr_assert(c.truncated);
	buf_reset(&out);
	runcmd_init(&c);
	c.cap = 8;
	c.keep_tail = 1;
	cr_assert_eq(sh("for i in 1 2 3 4 5 6 7 8 9; do printf $i; sleep 0.01; done", 0, &out, &c),
		     0);
	cr_assert_geq(out.len, 4);
	cr_assert_leq(out.len, 8);
	cr_assert_eq(strcmp(buf_str(&out) + out.len - 4, "6789"), 0, "%s", buf_str(&out));
	buf_release(&out);
}

Test(runcmd, stdin_env_dir)
{
	struct buf out = BUF_INIT;
	const char *env[] = {"KPERF_RUNCMD_T=one", "HOME=/nowhere", NULL};
	char big[200000];
	struct runcmd c;

	runcmd_init(&c);
	c.in = RUNCMD_IN_DATA;
	c.in_data = "hello\n";
	c.in_len = 6;
	cr_assert_eq(sh("cat", 0, &out, &c), 0);
	cr_assert_str_eq(buf_str(&out), "hello\n");
	/* a child that does not read its stdin: no SIGPIPE for the parent */
	memset(big, 'x', sizeof(big));
	buf_reset(&out);
	runcmd_init(&c);
	c.in = RUNCMD_IN_DATA;
	c.in_data = big;
	c.in_len = sizeof(big);
	cr_assert_eq(sh("exec 0<&-; echo closed", 0, &out, &c), 0);
	cr_assert_str_eq(buf_str(&out), "closed\n");
	buf_reset(&out);
	runcmd_init(&c);
	c.env = env;
	c.dir = "/";
	c.in = RUNCMD_IN_NULL;
	cr_assert_eq(sh("echo $KPERF_RUNCMD_T $HOME $(pwd); cat", 0, &out, &c), 0);
	cr_assert_str_eq(buf_str(&out), "one /nowhere /\n");
	buf_release(&out);
}

Test(runcmd, deadline)
{
	struct buf out = BUF_INIT;
	struct runcmd c;
	double t0 = mono();

	runcmd_init(&c);
	c.timeout_ms = 300;
	cr_assert_eq(sh("echo started; exec sleep 30", 0, &out, &c), 128 + SIGKILL);
	cr_assert(c.timed_out);
	cr_assert_lt(mono() - t0, 10);
	cr_assert_str_eq(buf_str(&out), "started\n");
	buf_release(&out);
}

Test(runcmd, stop_at_exit)
{
	struct buf out = BUF_INIT;
	struct runcmd c;
	double t0 = mono();

	/* the background sleep keeps the pipe open after sh exits */
	runcmd_init(&c);
	c.stop_at_exit = 1;
	cr_assert_eq(sh("echo hook; sleep 5 & exit 0", 1, &out, &c), 0);
	cr_assert_lt(mono() - t0, 4);
	cr_assert_str_eq(buf_str(&out), "hook\n");
	buf_release(&out);
}

Test(runcmd, start_and_reap)
{
	const char *argv[] = {"sleep", "30", NULL};
	struct runcmd c;

	runcmd_init(&c);
	c.argv = argv;
	c.new_group = 1;
	cr_assert_eq(runcmd_start(&c), 0);
	cr_assert_gt(c.pid, 0);
	cr_assert_eq(runcmd_reap(&c, 1), 0);
	runcmd_kill(&c, SIGTERM);
	cr_assert_eq(runcmd_reap(&c, 0), 1);
	cr_assert_eq(c.pid, 0);
	cr_assert(WIFSIGNALED(c.wait_status) && WTERMSIG(c.wait_status) == SIGTERM);
	cr_assert_eq(runcmd_reap(&c, 1), -1);
}
