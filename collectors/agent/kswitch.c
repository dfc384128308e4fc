/*
 * kswitch.c - the running kernel and the kernel hook (kswitch.h). Both are
 * child processes of the site's; their output is read through a pipe that
 * is polled, so a daemon the hook leaves behind holding the pipe does not
 * keep the agent waiting once the hook itself has exited.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/agent/catalogue.h"
#include "lib/buf.h"
#include "collectors/base/cutil.h"
#include "collectors/base/runcmd.h"
#include "collectors/agent/kswitch.h"
#include "collectors/parse/parse.h"
#include "collectors/deliver/rundoc.h"

/* Seconds --running-cmd may take; bytes of its output read. */
#define RUNNING_CMD_TIMEOUT_S 30
#define RUNNING_OUTPUT_MAX 4096

/* Captured output echoed on stdout. */
static void echo_output(void *arg, int err, const char *data, size_t n)
{
	(void)arg;
	(void)err;
	fwrite(data, 1, n, stdout);
}

/*
 * Run argv (extra words appended) with stdout and stderr on one pipe, echoed
 * when echo; the last keep bytes of it into *out (malloc'd, never NULL).
 * timeout_s > 0 kills it after that long. Returns its exit status as a
 * shell says it, or -1 (errno) when it cannot be started.
 */
static int exec_capture(char **argv, const char *const *extra, int echo, size_t keep,
			long timeout_s, char **out)
{
	const char *args[CATALOGUE_WORDS_MAX + 4];
	struct buf b = BUF_INIT;
	struct runcmd c;
	int n = 0, st;

	for (char **w = argv; *w && n < CATALOGUE_WORDS_MAX; w++)
		args[n++] = *w;
	for (; extra && *extra; extra++)
		args[n++] = *extra;
	args[n] = NULL;
	runcmd_init(&c);
	c.argv = args;
	c.out = RUNCMD_OUT_CAPTURE;
	c.err = RUNCMD_OUT_MERGE;
	c.out_buf = &b;
	c.cap = 2 * keep;
	c.keep_tail = 1;
	c.timeout_ms = timeout_s > 0 ? timeout_s * 1000 : 0;
	c.stop_at_exit = 1;
	c.exec_error_prefix = "";
	if (echo)
		c.on_output = echo_output;
	if (runcmd_start(&c)) {
		*out = xcalloc(1, 1);
		return -1;
	}
	st = runcmd_finish(&c);
	if (echo)
		fflush(stdout);
	*out = rundoc_utf8_tail(buf_str(&b), b.len, keep);
	buf_release(&b);
	return st;
}

int kswitch_hex40(const char *s)
{
	return strlen(s) == 40 && strspn(s, "0123456789abcdefABCDEF") == 40;
}

int kswitch_release_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > KERNEL_RELEASE_MAX)
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

static int from_cmd(char **cmd, struct running *r, char *err, size_t errsz)
{
	char *text, *w[3];
	const char *rel;
	size_t nw;
	int st = exec_capture(cmd, NULL, 0, RUNNING_OUTPUT_MAX, RUNNING_CMD_TIMEOUT_S, &text);
	int rc = -1;

	if (st) {
		char *t = text;
		size_t n = strlen(t);
		while (n && (t[n - 1] == '\n' || t[n - 1] == ' '))
			t[--n] = '\0';
		if (strrchr(t, '\n'))
			t = strrchr(t, '\n') + 1;
		if (st < 0)
			snprintf(err, errsz, "--running-cmd %s: %s", cmd[0], strerror(errno));
		else
			snprintf(err, errsz, "--running-cmd %s exited with status %d: %.200s", cmd[0],
				 st, t);
		goto out;
	}
	nw = split_ws(text, w, 3);
	if (nw == 0 || nw > 2 || (nw == 2 && !kswitch_hex40(w[0]))) {
		snprintf(err, errsz,
			 "--running-cmd %s printed %s: expected a sha, a release, or a sha then a "
			 "release",
			 cmd[0], nw ? "something else" : "nothing");
		goto out;
	}
	if (kswitch_hex40(w[0]))
		for (int i = 0; i < 40; i++)
			r->sha[i] = (char)(w[0][i] | 0x20); /* digits stay, letters go lower case */
	rel = nw == 2 ? w[1] : r->sha[0] ? NULL : w[0];
	if (rel && !kswitch_release_ok(rel)) {
		snprintf(err, errsz, "--running-cmd %s printed a release of more than %d bytes",
			 cmd[0], KERNEL_RELEASE_MAX);
		goto out;
	}
	if (rel)
		snprintf(r->release, sizeof(r->release), "%s", rel);
	r->release_given = r->release[0] != '\0';
	rc = 0;
out:
	free(text);
	return rc;
}

int kswitch_running(char **cmd, struct running *r, char *err, size_t errsz)
{
	char path[4200], *text;

	memset(r, 0, sizeof(*r));
	if (cmd && from_cmd(cmd, r, err, errsz))
		return -1;
	if (r->release_given)
		return 0;
	snprintf(path, sizeof(path), "%s/sys/kernel/osrelease", root_proc());
	text = read_file(path, 4096, NULL);
	if (!text) {
		if (r->sha[0])
			return 0; /* the sha is what counts */
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		return -1;
	}
	snprintf(r->release, sizeof(r->release), "%.*s", KERNEL_RELEASE_MAX, str_trim(text));
	free(text);
	if (!kswitch_release_ok(r->release)) {
		r->release[0] = '\0';
		if (r->sha[0])
			return 0;
		snprintf(err, errsz, "%s holds no usable release", path);
		return -1;
	}
	return 0;
}

int kswitch_is(const struct running *r, const char *sha, const char *release)
{
	if (r->sha[0])
		return sha[0] && !strcmp(r->sha, sha);
	return release[0] && !strcmp(r->release, release);
}

void kswitch_text(const struct running *r, char *out, size_t outsz)
{
	if (r->sha[0])
		snprintf(out, outsz, "commit %s%s%s%s", r->sha, r->release[0] ? " (release " : "",
			 r->release, r->release[0] ? ")" : "");
	else
		snprintf(out, outsz, "release %s", r->release);
}

int kswitch_hook(char **hook, const char *sha, const char *release, size_t tailmax,
		 char **tail)
{
	const char *extra[3] = {sha, release, NULL};

	return exec_capture(hook, extra, 1, tailmax, 0, tail);
}
