/*
 * harness_smtp.c - a real SMTP server for the alert tests: python3-aiosmtpd
 * on a port of the harness's, writing what it takes to a Maildir, and the
 * messages read back from it.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/integration/harness.h"

pid_t smtp_start(int *port, const char *dir)
{
	return smtp_start_limit(port, dir, 0);
}

pid_t smtp_start_limit(int *port, const char *dir, long max_bytes)
{
	char listen[64], size[32];
	const char *argv[16];
	int n = 0;
	pid_t pid;

	if (!*port)
		*port = harness_free_port();
	/* a Maildir: aiosmtpd creates none of it when dir exists */
	mkdir(dir, 0755);
	for (int i = 0; i < 3; i++) {
		static const char *const sub[] = {"tmp", "new", "cur"};
		char path[600];
		snprintf(path, sizeof(path), "%s/%s", dir, sub[i]);
		mkdir(path, 0755);
	}
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", *port);
	snprintf(size, sizeof(size), "%ld", max_bytes);
	argv[n++] = "python3";
	argv[n++] = "-m";
	argv[n++] = "aiosmtpd";
	argv[n++] = "-n";
	if (max_bytes > 0) { /* else aiosmtpd's own limit, 32 MiB */
		argv[n++] = "-s";
		argv[n++] = size;
	}
	argv[n++] = "-l";
	argv[n++] = listen;
	argv[n++] = "-c";
	argv[n++] = "aiosmtpd.handlers.Mailbox";
	argv[n++] = dir;
	argv[n] = NULL;
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		dup2(fd, 2);
		execv("/usr/bin/python3", (char *const *)argv);
		_exit(127);
	}
	cr_assert(harness_wait_port(*port, 30),
		  "the SMTP server (python3-aiosmtpd) did not listen on port %d within 30 s",
		  *port);
	return pid;
}

void smtp_stop(pid_t pid)
{
	int status;
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, &status, 0);
	}
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files in dir/new, sorted (Maildir names start with the time). */
static int maildir_list(const char *dir, char ***names)
{
	char path[600];
	DIR *d;
	struct dirent *e;
	int n = 0;

	*names = NULL;
	snprintf(path, sizeof(path), "%s/new", dir);
	if (!(d = opendir(path)))
		return 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		*names = realloc(*names, (size_t)(n + 1) * sizeof(char *));
		(*names)[n++] = strdup(e->d_name);
	}
	closedir(d);
	if (n)
		qsort(*names, (size_t)n, sizeof(char *), name_cmp);
	return n;
}

int maildir_count(const char *dir)
{
	char **names;
	int n = maildir_list(dir, &names);
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return n;
}

char *maildir_read(const char *dir, int i)
{
	char **names, path[900];
	char *text = NULL;
	int n = maildir_list(dir, &names);

	if (i < n) {
		snprintf(path, sizeof(path), "%s/new/%s", dir, names[i]);
		text = harness_slurp(path, NULL);
	}
	for (int j = 0; j < n; j++)
		free(names[j]);
	free(names);
	return text;
}
