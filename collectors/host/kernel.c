/*
 * kernel.c - release, version, command line and config of the running
 * kernel. /proc/config.gz is read with zlib when built with it
 * (KPERF_HAVE_ZLIB), else through zcat; /boot/config-<release> is the
 * fallback for kernels built without CONFIG_IKCONFIG_PROC.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#ifdef KPERF_HAVE_ZLIB
#include <zlib.h>
#endif

#include "lib/buf.h"
#include "collectors/base/cutil.h"
#ifndef KPERF_HAVE_ZLIB
#include "collectors/base/runcmd.h"
#endif
#include "collectors/host/kernel.h"
#include "collectors/parse/parse.h"

/* A kernel config is ~250 KiB; anything past this is not one. */
#define CONFIG_MAX (16u * 1024u * 1024u)

const char *const kernel_config_options[] = {
	"CONFIG_LRU_GEN", "CONFIG_LRU_GEN_ENABLED", "CONFIG_MEMCG", "CONFIG_LOCK_STAT",
	"CONFIG_TRANSPARENT_HUGEPAGE", "CONFIG_TRANSPARENT_HUGEPAGE_ALWAYS",
	"CONFIG_TRANSPARENT_HUGEPAGE_MADVISE", "CONFIG_NUMA", "CONFIG_SWAP", "CONFIG_ZSWAP",
	"CONFIG_PREEMPT", "CONFIG_PREEMPT_NONE", "CONFIG_PREEMPT_VOLUNTARY", "CONFIG_HZ",
	"CONFIG_LOCKDEP", "CONFIG_PROVE_LOCKING", "CONFIG_DEBUG_VM", "CONFIG_KASAN",
	NULL,
};

static int wanted(const char *name, size_t n)
{
	for (const char *const *o = kernel_config_options; *o; o++)
		if (strlen(*o) == n && !strncmp(*o, name, n))
			return 1;
	return 0;
}

json_t *kernel_config_parse(const char *text, size_t len)
{
	json_t *out = json_object();
	struct lines it;
	char *line;

	lines_init(&it, text, len);
	while ((line = lines_next(&it))) {
		char *eq, *val;
		json_t *str;
		size_t n;

		if (!strncmp(line, "# CONFIG_", 9) && strstr(line, " is not set")) {
			n = (size_t)(strstr(line, " is not set") - (line + 2));
			if (wanted(line + 2, n)) {
				line[2 + n] = '\0';
				json_object_set_new(out, line + 2, json_string("n"));
			}
			continue;
		}
		if (strncmp(line, "CONFIG_", 7) || !(eq = strchr(line, '=')))
			continue;
		*eq = '\0';
		if (!wanted(line, strlen(line)))
			continue;
		val = eq + 1;
		n = strlen(val);
		if (n >= 2 && val[0] == '"' && val[n - 1] == '"') {
			val[n - 1] = '\0';
			val++;
		}
		/* json_string refuses invalid UTF-8: such a value is left out. */
		str = json_string(val);
		if (str)
			json_object_set_new(out, line, str);
	}
	lines_release(&it);
	return out;
}

#ifdef KPERF_HAVE_ZLIB
static char *read_gz(const char *path, size_t *len)
{
	struct buf b = BUF_INIT;
	char chunk[65536];
	gzFile f = gzopen(path, "rb");
	int n;

	if (!f)
		return NULL;
	while ((n = gzread(f, chunk, sizeof(chunk))) > 0) {
		buf_append(&b, chunk, (size_t)n);
		if (b.len > CONFIG_MAX)
			break;
	}
	if (n < 0 || b.len > CONFIG_MAX) {
		gzclose(f);
		buf_release(&b);
		return NULL;
	}
	gzclose(f);
	return buf_detach(&b, len);
}
#else
/* Without zlib: zcat, fed the file on stdin so the path needs no quoting. */
static char *read_gz(const char *path, size_t *len)
{
	const char *argv[] = {"zcat", NULL};
	struct buf b = BUF_INIT;
	struct runcmd c;
	int in, st;

	if (access(path, R_OK))
		return NULL;
	if ((in = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	runcmd_init(&c);
	c.argv = argv;
	c.in = RUNCMD_IN_FD;
	c.in_fd = in;
	c.out = RUNCMD_OUT_CAPTURE;
	c.out_buf = &b;
	c.cap = CONFIG_MAX + 1;
	st = runcmd_run(&c);
	close(in);
	if (st || b.len > CONFIG_MAX) {
		buf_release(&b);
		return NULL;
	}
	return buf_detach(&b, len);
}
#endif

/* First line of a small file, trimmed, or NULL. */
static char *read_line(const char *dir, const char *name)
{
	struct buf p = BUF_INIT;
	char *text, *nl, *t;

	buf_printf(&p, "%s/%s", dir, name);
	text = read_file(buf_str(&p), 1u << 20, NULL);
	buf_release(&p);
	if (!text)
		return NULL;
	nl = strchr(text, '\n');
	if (nl)
		*nl = '\0';
	t = xstrdup(str_trim(text));
	free(text);
	return t;
}

/* Keep a release the server takes: printable ASCII without spaces. */
static void set_release(struct kernel_facts *k, const char *r)
{
	size_t o = 0;

	for (; *r && o < KERNEL_RELEASE_MAX; r++)
		if ((unsigned char)*r > 0x20 && (unsigned char)*r < 0x7f)
			k->release[o++] = *r;
	k->release[o] = '\0';
}

void kernel_facts_read(struct kernel_facts *k)
{
	struct buf p = BUF_INIT;
	char *s = read_line(root_proc(), "sys/kernel/osrelease");
	size_t len;
	char *text;

	memset(k, 0, sizeof(*k));
	if (s) {
		set_release(k, s);
		free(s);
	}
	if (!k->release[0]) {
		struct utsname u;
		if (!uname(&u))
			set_release(k, u.release);
	}
	if (!k->release[0])
		set_release(k, "unknown");
	k->version = read_line(root_proc(), "version");
	k->cmdline = read_line(root_proc(), "cmdline");

	buf_printf(&p, "%s/config.gz", root_proc());
	text = read_gz(buf_str(&p), &len);
	if (!text) {
		buf_reset(&p);
		buf_printf(&p, "%s/config-%s", root_boot(), k->release);
		text = read_file(buf_str(&p), CONFIG_MAX, &len);
	}
	if (text) {
		k->config = kernel_config_parse(text, len);
		snprintf(k->config_source, sizeof(k->config_source), "%s", buf_str(&p));
		free(text);
	}
	buf_release(&p);
}

void kernel_facts_release(struct kernel_facts *k)
{
	free(k->version);
	free(k->cmdline);
	json_decref(k->config);
	memset(k, 0, sizeof(*k));
}
