/*
 * ha.c - a test's Patroni cluster, driven through tests/ha/cluster.sh (ha.h).
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/ha/ha.h"

void ha_sleep(double seconds)
{
	usleep((useconds_t)(seconds * 1e6));
}

/* sh -c cmd with nothing open but stdin, stdout (into out) and stderr: a
 * Patroni that cluster.sh starts must not inherit the test's sockets to
 * kperfd, which would then never see those connections close. */
static int run_closed(const char *cmd, char *out, size_t outsz)
{
	int fd[2], st;
	pid_t pid;
	FILE *f;

	cr_assert_eq(pipe(fd), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(fd[1], STDOUT_FILENO);
		closefrom(3);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	f = fdopen(fd[0], "r");
	cr_assert_not_null(f);
	if (out && outsz) {
		out[0] = '\0';
		if (fgets(out, (int)outsz, f))
			out[strcspn(out, "\n")] = '\0';
	}
	{
		char sink[256];
		while (fgets(sink, sizeof(sink), f))
			;
	}
	fclose(f);
	while (waitpid(pid, &st, 0) < 0)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int ha_run(const struct ha *c, char *out, size_t outsz, const char *fmt, ...)
{
	char args[1024], cmd[4096];
	const char *sp;
	va_list ap;
	int vl;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	/* VERB DIR REST: cluster.sh takes the directory second */
	sp = strchr(args, ' ');
	vl = sp ? (int)(sp - args) : (int)strlen(args);
	snprintf(cmd, sizeof(cmd), "tests/ha/cluster.sh %.*s '%s'%s 2>>'%s/cluster.log'", vl, args,
		 c->dir, sp ? sp : "", c->dir);
	return run_closed(cmd, out, outsz);
}

int ha_leader(const struct ha *c)
{
	char out[16];

	if (ha_run(c, out, sizeof(out), "leader") != 0)
		return 0;
	return atoi(out);
}

int ha_port(const struct ha *c, int n)
{
	return c->pg[n - 1];
}

void ha_up(struct ha *c, const char *name, const char *env)
{
	char cmd[4096];
	double t0 = harness_now();

	memset(c, 0, sizeof(*c));
	harness_tmpdir(c->dir, sizeof(c->dir), name);
	c->etcd = harness_free_port();
	c->peer = harness_free_port();
	for (int i = 0; i < 2; i++) {
		c->pg[i] = harness_free_port();
		c->api[i] = harness_free_port();
	}
	/* cluster.sh wants the directory empty: it makes everything inside */
	rmdir(c->dir);
	snprintf(cmd, sizeof(cmd),
		 "%s tests/ha/cluster.sh up '%s' %d %d %d %d %d %d 2>'%s.up.log' && mv '%s.up.log' "
		 "'%s/up.log'",
		 env ? env : "", c->dir, c->etcd, c->peer, c->pg[0], c->pg[1], c->api[0], c->api[1],
		 c->dir, c->dir, c->dir);
	cr_assert_eq(run_closed(cmd, NULL, 0), 0, "the Patroni cluster did not come up; see %s.up.log", c->dir);
	ha_note(c, "ha: %s: cluster up in %.1f s", name, harness_now() - t0);
	cr_assert_eq(ha_run(c, NULL, 0, "psql 1 \"CREATE ROLE kperf LOGIN CREATEDB\""), 0);
	snprintf(c->write_url, sizeof(c->write_url),
		 "host=127.0.0.1,127.0.0.1 port=%d,%d user=kperf target_session_attrs=read-write "
		 "connect_timeout=2",
		 c->pg[0], c->pg[1]);
}

void ha_kperfd(struct ha *c, struct kperfd *k, const char *const *extra)
{
	const char *env[16];
	int n = 0;

	kperfd_prepare(k, c->write_url);
	snprintf(c->read_env, sizeof(c->read_env),
		 "KPERF_READ_DATABASE_URL=host=127.0.0.1,127.0.0.1 port=%d,%d user=kperf "
		 "target_session_attrs=prefer-standby connect_timeout=2 dbname=%s",
		 c->pg[0], c->pg[1], k->db);
	env[n++] = c->read_env;
	env[n++] = "KPERF_THREADS=8";
	for (int i = 0; extra && extra[i] && n < 15; i++)
		env[n++] = extra[i];
	env[n] = NULL;
	kperfd_env(env);
	kperfd_restart(k);
	kperfd_env(NULL);
}

void ha_note(const struct ha *c, const char *fmt, ...)
{
	char path[600];
	va_list ap;
	FILE *f;

	snprintf(path, sizeof(path), "%s/times", c->dir);
	f = fopen(path, "a");
	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void ha_down(struct ha *c)
{
	ha_run(c, NULL, 0, "down");
}
