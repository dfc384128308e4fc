/*
 * runcmd.c - child processes (runcmd.h): fork, the redirections, exec, then
 * one poll() loop that feeds stdin, reads stdout and stderr, ticks and
 * watches the deadline. The child does only async-signal-safe work between
 * fork and exec: the agent forks with its heartbeat thread running.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collectors/base/cutil.h"
#include "collectors/base/runcmd.h"

extern char **environ;

/* How often a child that stop_at_exit is looked at while its pipes are quiet, ms. */
#define RUNCMD_EXIT_POLL_MS 200

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void runcmd_init(struct runcmd *c)
{
	memset(c, 0, sizeof(*c));
	c->in_fd = c->out_fd = c->err_fd = -1;
	c->fd_in = c->fd_out = c->fd_err = -1;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* environ with c->env's settings replacing or joining its own; free() the array only. */
static char **child_env(const struct runcmd *c)
{
	size_t n = 0, k = 0, i;
	char **e;

	while (environ[n])
		n++;
	while (c->env[k])
		k++;
	e = xcalloc(n + k + 1, sizeof(*e));
	for (i = 0; i < n; i++)
		e[i] = environ[i];
	for (size_t j = 0; j < k; j++) {
		size_t len = strcspn(c->env[j], "=") + 1, m;
		for (m = 0; m < n; m++)
			if (!strncmp(e[m], c->env[j], len))
				break;
		e[m] = (char *)c->env[j];
		if (m == n)
			n++;
	}
	e[n] = NULL;
	return e;
}

/* fd onto target in the child, without close-on-exec. */
static void child_dup(int fd, int target)
{
	if (fd == target)
		fcntl(fd, F_SETFD, 0);
	else
		dup2(fd, target);
}

static void child_say(const struct runcmd *c, const char *what, const char *name)
{
	char msg[600];
	int k;

	if (!c->exec_error_prefix)
		return;
	k = snprintf(msg, sizeof(msg), "%scannot %s %s: %s\n", c->exec_error_prefix, what,
		     name, strerror(errno));
	if (k > 0 && write(2, msg, strlen(msg)) < 0)
		_exit(127);
}

static void child(const struct runcmd *c, const int in[2], const int out[2], const int err[2],
		  char **envp)
{
	if (c->new_group)
		setpgid(0, 0);
	if (c->in == RUNCMD_IN_NULL) {
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			child_dup(devnull, 0);
	} else if (c->in == RUNCMD_IN_FD) {
		child_dup(c->in_fd, 0);
	} else if (c->in == RUNCMD_IN_DATA) {
		child_dup(in[0], 0);
	}
	if (c->out == RUNCMD_OUT_CAPTURE)
		child_dup(out[1], 1);
	else if (c->out == RUNCMD_OUT_FD)
		child_dup(c->out_fd, 1);
	if (c->err == RUNCMD_OUT_MERGE)
		dup2(1, 2);
	else if (c->err == RUNCMD_OUT_CAPTURE)
		child_dup(err[1], 2);
	else if (c->err == RUNCMD_OUT_FD)
		child_dup(c->err_fd, 2);
	if (c->dir && chdir(c->dir)) {
		child_say(c, "change to", c->dir);
		_exit(127);
	}
	if (c->child_setup)
		c->child_setup();
	if (c->path)
		execve(c->path, (char *const *)c->argv, envp);
	else
		execvpe(c->argv[0], (char *const *)c->argv, envp);
	child_say(c, "run", c->argv[0]);
	_exit(127);
}

int runcmd_start(struct runcmd *c)
{
	int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, e;
	char **envp = c->env ? child_env(c) : environ;

	c->pid = 0;
	c->timed_out = c->truncated = 0;
	c->wait_status = 0;
	c->in_off = 0;
	memset(&c->ru, 0, sizeof(c->ru));
	if ((c->in == RUNCMD_IN_DATA && pipe2(in, O_CLOEXEC)) ||
	    (c->out == RUNCMD_OUT_CAPTURE && pipe2(out, O_CLOEXEC)) ||
	    (c->err == RUNCMD_OUT_CAPTURE && pipe2(err, O_CLOEXEC)))
		goto fail;
	fflush(stdout);
	fflush(stderr);
	c->pid = fork();
	if (c->pid < 0) {
		c->pid = 0;
		goto fail;
	}
	if (c->pid == 0)
		child(c, in, out, err, envp);
	if (c->new_group)
		setpgid(c->pid, c->pid); /* here too: a kill right after the start reaches the group */
	if (envp != environ)
		free(envp);
	close_fd(&in[0]);
	close_fd(&out[1]);
	close_fd(&err[1]);
	c->fd_in = in[1];
	c->fd_out = out[0];
	c->fd_err = err[0];
	if (c->fd_in >= 0)
		fcntl(c->fd_in, F_SETFL, O_NONBLOCK);
	if (c->fd_out >= 0)
		fcntl(c->fd_out, F_SETFL, O_NONBLOCK);
	if (c->fd_err >= 0)
		fcntl(c->fd_err, F_SETFL, O_NONBLOCK);
	return 0;
fail:
	e = errno;
	for (int i = 0; i < 2; i++) {
		close_fd(&in[i]);
		close_fd(&out[i]);
		close_fd(&err[i]);
	}
	if (envp != environ)
		free(envp);
	errno = e;
	return -1;
}

void runcmd_kill(const struct runcmd *c, int sig)
{
	if (c->pid > 0)
		kill(c->new_group ? -c->pid : c->pid, sig);
}

int runcmd_reap(struct runcmd *c, int nohang)
{
	pid_t w;

	if (c->pid <= 0) {
		errno = ECHILD;
		return -1;
	}
	while ((w = wait4(c->pid, &c->wait_status, nohang ? WNOHANG : 0, &c->ru)) < 0)
		if (errno != EINTR)
			return -1;
	if (w == 0)
		return 0;
	c->pid = 0;
	return 1;
}

/* A chunk of output into its buffer, within cap. */
static void keep(struct runcmd *c, struct buf *b, const char *data, size_t n)
{
	if (!b)
		return;
	if (c->cap && c->keep_tail && b->len + n > c->cap && b->len > c->cap / 2) {
		/* the newest half: a benchmark's tail and final summary matter most */
		size_t half = c->cap / 2;
		memmove(b->data, b->data + b->len - half, half);
		b->len = half;
		b->data[half] = '\0';
		c->truncated = 1;
	} else if (c->cap && !c->keep_tail && b->len + n > c->cap) {
		c->truncated = 1;
		n = b->len < c->cap ? c->cap - b->len : 0;
	}
	if (n)
		buf_append(b, data, n);
}

/*
 * Read a chunk of *fd, or with drain all it has now; it is closed at end of
 * file or on an error. One chunk a round keeps a fast writer from holding
 * off the deadline and the ticks.
 */
static void take(struct runcmd *c, int *fd, int err, int drain)
{
	char chunk[65536];
	ssize_t n;

	while ((n = read(*fd, chunk, sizeof(chunk))) > 0) {
		if (c->on_output)
			c->on_output(c->arg, err, chunk, (size_t)n);
		keep(c, err ? c->err_buf : c->out_buf, chunk, (size_t)n);
		if (!drain)
			return;
	}
	if (n == 0 || (errno != EINTR && errno != EAGAIN))
		close_fd(fd);
}

/* Write what stdin has left; SIGPIPE from a child that stopped reading is
 * taken here, not delivered. */
static void feed(struct runcmd *c)
{
	sigset_t pipe_set, old;
	struct timespec zero = {0, 0};
	int pending = 0;
	ssize_t n;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	{
		sigset_t p;
		sigpending(&p);
		pending = sigismember(&p, SIGPIPE);
	}
	n = write(c->fd_in, c->in_data + c->in_off, c->in_len - c->in_off);
	if (n > 0)
		c->in_off += (size_t)n;
	if (n < 0 && errno == EPIPE && !pending)
		sigtimedwait(&pipe_set, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (c->in_off >= c->in_len || (n < 0 && errno != EINTR && errno != EAGAIN))
		close_fd(&c->fd_in);
}

/* How long the next poll may wait, ms (-1: no limit); 0 once the deadline is past. */
static int wait_ms(const struct runcmd *c, long long deadline)
{
	long long ms = -1;

	if (c->stop_at_exit)
		ms = RUNCMD_EXIT_POLL_MS;
	if (c->on_tick && c->tick_ms > 0 && (ms < 0 || c->tick_ms < ms))
		ms = c->tick_ms;
	if (deadline) {
		long long left = deadline - now_ms();
		if (left <= 0)
			return 0;
		if (ms < 0 || left < ms)
			ms = left;
	}
	return ms > 1000000000 ? 1000000000 : (int)ms;
}

/* The poll loop; returns 1 when the child was reaped in it. */
static int pump(struct runcmd *c)
{
	long long deadline = c->timeout_ms > 0 ? now_ms() + c->timeout_ms : 0;

	for (;;) {
		struct pollfd fds[3];
		int nfds = 0, ms, r;

		if (c->fd_out >= 0)
			fds[nfds++] = (struct pollfd){.fd = c->fd_out, .events = POLLIN};
		if (c->fd_err >= 0)
			fds[nfds++] = (struct pollfd){.fd = c->fd_err, .events = POLLIN};
		if (c->fd_in >= 0)
			fds[nfds++] = (struct pollfd){.fd = c->fd_in, .events = POLLOUT};
		if (!nfds && !c->stop_at_exit)
			return 0;
		ms = wait_ms(c, deadline);
		if (deadline && ms == 0 && now_ms() >= deadline) {
			runcmd_kill(c, SIGKILL);
			c->timed_out = 1;
			return 0;
		}
		r = poll(fds, (nfds_t)nfds, ms);
		if (r < 0 && errno != EINTR) {
			runcmd_kill(c, SIGKILL);
			return 0;
		}
		if (r <= 0 && c->on_tick)
			c->on_tick(c->arg);
		for (int i = 0; r > 0 && i < nfds; i++) {
			if (!fds[i].revents)
				continue;
			if (fds[i].fd == c->fd_in)
				feed(c);
			else if (fds[i].fd == c->fd_out)
				take(c, &c->fd_out, 0, 0);
			else
				take(c, &c->fd_err, 1, 0);
		}
		if (c->stop_at_exit && runcmd_reap(c, 1) != 0) {
			/* what it wrote before it exited, not what others write later */
			if (c->fd_out >= 0)
				take(c, &c->fd_out, 0, 1);
			if (c->fd_err >= 0)
				take(c, &c->fd_err, 1, 1);
			return 1;
		}
	}
}

int runcmd_finish(struct runcmd *c)
{
	int reaped = pump(c), rc = 0;

	close_fd(&c->fd_in);
	close_fd(&c->fd_out);
	close_fd(&c->fd_err);
	if (!reaped && runcmd_reap(c, 0) < 0)
		rc = -1;
	return rc ? -1 : exit_status_of(c->wait_status);
}

int runcmd_run(struct runcmd *c)
{
	if (runcmd_start(c))
		return -1;
	return runcmd_finish(c);
}
