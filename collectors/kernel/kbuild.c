/*
 * kbuild.c - a lab's kernel built with Kbuild (see kbuild.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collectors/base/cutil.h"
#include "collectors/base/runcmd.h"
#include "collectors/kernel/kbuild.h"
#include "lib/banned.h"
#include "lib/util.h"

void kbuild_result_init(struct kbuild_result *r)
{
	memset(r, 0, sizeof(*r));
	buf_init(&r->errors);
	buf_init(&r->tail);
}

void kbuild_result_release(struct kbuild_result *r)
{
	buf_release(&r->errors);
	buf_release(&r->tail);
}

/* Whether prog is an executable in $PATH. */
static int in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char dir[4096];

	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		snprintf(dir, sizeof(dir), "%.*s/%s", (int)n, p, prog);
		if (n && access(dir, X_OK) == 0)
			return 1;
		p += n + (p[n] == ':');
	}
	return 0;
}

static void echo(void *arg, int err, const char *data, size_t n)
{
	(void)arg;
	(void)err;
	fwrite(data, 1, n, stdout);
	fflush(stdout);
}

/* Run argv in dir; stdout and stderr into out (its newest bytes past cap),
 * echoed unless quiet. Its exit status, -1 when it could not start. */
static int run(const char *const *argv, const char *dir, long timeout_s, int quiet,
	       struct buf *out, int *timed_out)
{
	struct runcmd c;
	int st;

	runcmd_init(&c);
	c.argv = argv;
	c.dir = dir;
	c.in = RUNCMD_IN_NULL;
	c.out = RUNCMD_OUT_CAPTURE;
	if (!quiet)
		c.on_output = echo;
	c.err = RUNCMD_OUT_MERGE;
	c.out_buf = out;
	c.cap = KBUILD_OUTPUT_TAIL_MAX * 4;
	c.keep_tail = 1;
	c.timeout_ms = timeout_s * 1000;
	c.new_group = 1;
	st = runcmd_run(&c);
	if (timed_out)
		*timed_out = c.timed_out;
	return st;
}

/* line without a leading strip */
static const char *stripped(const char *line, const char *strip)
{
	size_t n = strip ? strlen(strip) : 0;
	return n && !strncmp(line, strip, n) ? line + n : line;
}

int kbuild_error_lines(const char *output, size_t len, const char *strip, struct buf *out)
{
	struct lines it;
	char *line, *prev = NULL;
	int n = 0;

	lines_init(&it, output, len);
	while ((line = lines_next(&it)) && n < KBUILD_ERROR_LINES_MAX) {
		int err = strstr(line, ": error: ") || strstr(line, ": fatal error: ") ||
			  strstr(line, "undefined reference to ");
		if (err) {
			if (prev && strstr(prev, ": In function ") && n + 1 < KBUILD_ERROR_LINES_MAX) {
				buf_printf(out, "%s\n", stripped(prev, strip));
				n++;
			}
			buf_printf(out, "%s\n", stripped(line, strip));
			n++;
		}
		free(prev);
		prev = strdup(line);
	}
	free(prev);
	lines_release(&it);
	return n;
}

/* The first error line of lines (not an "In function" one), into out. */
static void first_error(const char *lines, char *out, size_t outsz)
{
	const char *p = lines;

	while (*p) {
		size_t n = strcspn(p, "\n");
		if (memmem(p, n, "error: ", 7) || memmem(p, n, "undefined reference", 19)) {
			snprintf(out, outsz, "%.*s", (int)n, p);
			return;
		}
		p += n + (p[n] == '\n');
	}
	snprintf(out, outsz, "no compiler error line");
}

/* The inputs of the build directory's config, as one text: when it changes
 * the config is made again. */
static char *config_inputs(const struct kbuild_opts *o, char *why, size_t whysz)
{
	struct buf b = BUF_INIT;

	buf_puts(&b, "# lab config: ");
	if (o->config) {
		size_t len;
		char *text = read_file(o->config, 1 << 22, &len);
		if (!text) {
			snprintf(why, whysz, "cannot read the kernel config %s: %s", o->config,
				 strerror(errno));
			buf_release(&b);
			return NULL;
		}
		buf_printf(&b, "%s\n", o->config);
		buf_append(&b, text, len);
		free(text);
	} else {
		buf_puts(&b, "tinyconfig\n");
	}
	buf_puts(&b, kbuild_fragment_kperf);
	if (o->vm)
		buf_puts(&b, kbuild_fragment_vm);
	return buf_detach(&b, NULL);
}

/* The first 16 hex digits of FNV-1a over text: names a config in runs. */
static void short_hash(const char *text, size_t len, char out[17])
{
	unsigned long long h = 14695981039346656037ULL;
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)text[i];
		h *= 1099511628211ULL;
	}
	snprintf(out, 17, "%016llx", h);
}

/* Make o->out/.config from the lab's config and the fragments. */
static int configure(const struct kbuild_opts *o, const char *inputs, char *why, size_t whysz)
{
	char outdir[4200], cfg[4300], frag[4300], stamp[4300];
	struct buf log = BUF_INIT;
	int st = 0, to = 0;

	snprintf(outdir, sizeof(outdir), "O=%s", o->out);
	snprintf(cfg, sizeof(cfg), "%s/.config", o->out);
	snprintf(stamp, sizeof(stamp), "%s/.kperf-config-inputs", o->out);
	if (o->config) {
		size_t len;
		char *text = read_file(o->config, 1 << 22, &len);
		if (!text || write_file_atomic(cfg, text, len)) {
			snprintf(why, whysz, "cannot copy %s to %s: %s", o->config, cfg,
				 strerror(errno));
			free(text);
			return -1;
		}
		free(text);
		{
			const char *argv[] = {"make", "-s", outdir, "olddefconfig", NULL};
			st = run(argv, o->tree, 600, 1, &log, &to);
		}
	} else {
		const char *argv[] = {"make", "-s", outdir, "tinyconfig", NULL};
		st = run(argv, o->tree, 600, 1, &log, &to);
	}
	for (int i = 0; !st && i < 1 + o->vm; i++) {
		const char *text = i ? kbuild_fragment_vm : kbuild_fragment_kperf;
		snprintf(frag, sizeof(frag), "%s/.kperf-%s.config", o->out, i ? "vm" : "kperf");
		if (write_file_atomic(frag, text, strlen(text))) {
			snprintf(why, whysz, "cannot write %s: %s", frag, strerror(errno));
			buf_release(&log);
			return -1;
		}
		{
			const char *argv[] = {"scripts/kconfig/merge_config.sh", "-m", "-O", o->out,
					      cfg, frag, NULL};
			st = run(argv, o->tree, 600, 1, &log, &to);
		}
	}
	if (!st) {
		const char *argv[] = {"make", "-s", outdir, "olddefconfig", NULL};
		st = run(argv, o->tree, 600, 1, &log, &to);
	}
	if (st) {
		struct lines it;
		char *line, *last = NULL;
		lines_init(&it, buf_str(&log), log.len);
		while ((line = lines_next(&it))) {
			free(last);
			last = strdup(line);
		}
		lines_release(&it);
		snprintf(why, whysz, "the kernel config could not be made in %s (exit status %d%s): %s",
			 o->out, st, to ? ", timed out" : "", last ? last : "");
		free(last);
		buf_release(&log);
		return -1;
	}
	buf_release(&log);
	if (write_file_atomic(stamp, inputs, strlen(inputs))) {
		snprintf(why, whysz, "cannot write %s: %s", stamp, strerror(errno));
		return -1;
	}
	return 0;
}

/* The first line of cmd's output into out. */
static void first_line(const char *const *argv, const char *dir, char *out, size_t outsz)
{
	struct buf b = BUF_INIT;
	int to;

	out[0] = '\0';
	if (run(argv, dir, 60, 1, &b, &to) == 0)
		snprintf(out, outsz, "%.*s", (int)strcspn(buf_str(&b), "\r\n"), buf_str(&b));
	buf_release(&b);
}

int kbuild_image(const struct kbuild_opts *o, struct kbuild_result *r, char *why, size_t whysz)
{
	char outdir[4200], jobs[32], cc[64], stamp[4300];
	struct buf log = BUF_INIT;
	char *inputs, *old;
	size_t len;
	double t0 = (double)now_us() / 1e6;
	int st, to = 0;

	if (mkdir(o->out, 0755) && errno != EEXIST) {
		snprintf(why, whysz, "cannot make the build directory %s: %s", o->out, strerror(errno));
		return -1;
	}
	inputs = config_inputs(o, why, whysz);
	if (!inputs)
		return -1;
	short_hash(inputs, strlen(inputs), r->config_sha);
	snprintf(stamp, sizeof(stamp), "%s/.kperf-config-inputs", o->out);
	old = read_file(stamp, 1 << 23, &len);
	if ((!old || strcmp(old, inputs)) && configure(o, inputs, why, whysz)) {
		free(old);
		free(inputs);
		return -1;
	}
	free(old);
	free(inputs);
	r->ccache = in_path("ccache");
	snprintf(cc, sizeof(cc), "CC=%sgcc", r->ccache ? "ccache " : "");
	snprintf(outdir, sizeof(outdir), "O=%s", o->out);
	snprintf(jobs, sizeof(jobs), "-j%ld", o->jobs > 0 ? o->jobs : sysconf(_SC_NPROCESSORS_ONLN));
	{
		const char *argv[] = {"make", outdir, jobs, cc, "bzImage", NULL};
		st = run(argv, o->tree, o->timeout_s > 0 ? o->timeout_s : KBUILD_TIMEOUT_S, o->quiet,
			 &log, &to);
	}
	r->seconds = (double)now_us() / 1e6 - t0;
	{
		const char *argv[] = {"gcc", "--version", NULL};
		first_line(argv, o->tree, r->compiler, sizeof(r->compiler));
	}
	if (st) {
		size_t keep = log.len > KBUILD_OUTPUT_TAIL_MAX ? KBUILD_OUTPUT_TAIL_MAX : log.len;
		buf_append(&r->tail, buf_str(&log) + log.len - keep, keep);
		if (st < 0 || to || st == 127) {
			snprintf(why, whysz, "make bzImage %s after %.0f s", to ? "timed out" :
				 st == 127 ? "could not be run" : "could not start", r->seconds);
			buf_release(&log);
			return -1;
		}
		{
			char strip[4200], first[600];
			snprintf(strip, sizeof(strip), "%s/", o->tree);
			kbuild_error_lines(buf_str(&log), log.len, strip, &r->errors);
			first_error(buf_str(&r->errors), first, sizeof(first));
			snprintf(why, whysz, "does not build: make bzImage exited with status %d: %s",
				 st, first);
		}
		buf_release(&log);
		return 1;
	}
	buf_release(&log);
	snprintf(r->image, sizeof(r->image), "%s/arch/x86/boot/bzImage", o->out);
	{
		const char *argv[] = {"make", "-s", outdir, "kernelrelease", NULL};
		first_line(argv, o->tree, r->release, sizeof(r->release));
	}
	if (access(r->image, R_OK) || !r->release[0]) {
		snprintf(why, whysz, "make bzImage exited 0 but %s or its release is missing", r->image);
		return -1;
	}
	return 0;
}

/* VERSION and PATCHLEVEL of the tree's top Makefile ("6.1"), or "". */
static void tree_version(const char *tree, char *out, size_t outsz)
{
	char path[4200];
	size_t len;
	char *mk;
	const char *v, *p;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/Makefile", tree);
	mk = read_file(path, 1 << 20, &len);
	if (!mk)
		return;
	v = strstr(mk, "\nVERSION = ");
	p = strstr(mk, "\nPATCHLEVEL = ");
	if (v && p)
		snprintf(out, outsz, "%.*s.%.*s", (int)strcspn(v + 11, "\n"), v + 11,
			 (int)strcspn(p + 14, "\n"), p + 14);
	free(mk);
}

/* The value config text gives CONFIG_name ("y", "m", "\"s\"", "n" for "is
 * not set"), into out; 0 when it names it. */
static int config_value(const char *text, const char *name, char *out, size_t outsz)
{
	size_t n = strlen(name);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (!strncmp(l, name, n) && l[n] == '=') {
			snprintf(out, outsz, "%.*s", (int)strcspn(l + n + 1, "\n"), l + n + 1);
			return 0;
		}
		if (!strncmp(l, "# ", 2) && !strncmp(l + 2, name, n) &&
		    !strncmp(l + 2 + n, " is not set", 11)) {
			snprintf(out, outsz, "n");
			return 0;
		}
	}
	return -1;
}

/* Each option the fragment sets that the lab's config sets otherwise. */
static void config_overrides(FILE *out, const char *lab, const char *fragment, const char *what)
{
	for (const char *l = fragment; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char name[128], theirs[128], ours[128];
		const char *start = !strncmp(l, "# CONFIG_", 9) ? l + 2 : l;
		size_t n = strncmp(start, "CONFIG_", 7) ? 0 : strcspn(start, "= \n");
		if (!n || n >= sizeof(name))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)n, start);
		if (config_value(fragment, name, ours, sizeof(ours)) ||
		    config_value(lab, name, theirs, sizeof(theirs)) || !strcmp(ours, theirs))
			continue;
		fprintf(out, "kernel: note: %s sets %s=%s over the lab config's %s\n", what, name, ours,
			theirs);
	}
}

int kbuild_check(const struct kbuild_opts *o, FILE *out)
{
	static const char *const tools[][2] = {
	    {"make", "make"}, {"gcc", "gcc"}, {"flex", "flex"}, {"bison", "bison"},
	    {"bc", "bc"},     {"perl", "perl"}, {"cpio", "cpio"}};
	char version[64], head[64], compiler[256];
	int problems = 0;

	if (!o->tree) {
		fprintf(out, "kernel: problem: --kernel-build needs --tree, the git tree to build\n");
		problems++;
	} else {
		const char *argv[] = {"git", "rev-parse", "--short=12", "HEAD", NULL};
		first_line(argv, o->tree, head, sizeof(head));
		tree_version(o->tree, version, sizeof(version));
		if (!head[0] || !version[0]) {
			fprintf(out, "kernel: problem: tree %s is %s\n", o->tree,
				!head[0] ? "not a git tree with a commit"
					 : "no Linux tree (no VERSION in its Makefile)");
			problems++;
		} else {
			fprintf(out, "kernel: tree %s: Linux %s, HEAD %s\n", o->tree, version, head);
		}
	}
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		if (!in_path(tools[i][0])) {
			fprintf(out, "kernel: problem: %s is not in $PATH (apt-get install %s)\n",
				tools[i][0], tools[i][1]);
			problems++;
		}
	if (access("/usr/include/libelf.h", R_OK) || access("/usr/include/openssl/ssl.h", R_OK)) {
		fprintf(out, "kernel: problem: Kbuild's objtool and certificate tools need"
			     " libelf-dev and libssl-dev\n");
		problems++;
	}
	{
		const char *argv[] = {"gcc", "--version", NULL};
		first_line(argv, ".", compiler, sizeof(compiler));
	}
	fprintf(out, "kernel: compiler %s; ccache %s\n", compiler[0] ? compiler : "(none)",
		in_path("ccache") ? "yes" : "no (every build from scratch: apt-get install ccache)");
	if (o->config) {
		size_t len;
		char *text = read_file(o->config, 1 << 22, &len);
		if (!text) {
			fprintf(out, "kernel: problem: cannot read the kernel config %s: %s\n", o->config,
				strerror(errno));
			problems++;
		} else {
			fprintf(out, "kernel: config %s with kperf.config%s on top\n", o->config,
				o->vm ? " and vm.config" : "");
			config_overrides(out, text, kbuild_fragment_kperf, "kperf.config");
			if (o->vm)
				config_overrides(out, text, kbuild_fragment_vm, "vm.config");
			free(text);
		}
	} else {
		fprintf(out, "kernel: config tinyconfig with kperf.config%s on top\n",
			o->vm ? " and vm.config" : "");
	}
	if (mkdir(o->out, 0755) && errno != EEXIST) {
		fprintf(out, "kernel: problem: cannot make the build directory %s: %s\n", o->out,
			strerror(errno));
		problems++;
	} else if (access(o->out, W_OK)) {
		fprintf(out, "kernel: problem: the build directory %s is not writable\n", o->out);
		problems++;
	} else {
		fprintf(out, "kernel: build directory %s\n", o->out);
	}
	return problems;
}
