/*
 * knobs.c - variant knobs and environment facts, read from sysfs and procfs
 * (roots overridable for tests). A variant value is a trend-key component,
 * so it is normalised ("on"/"off", a THP mode); the environment keeps raw
 * text for people to read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "collectors/base/cutil.h"
#include "collectors/host/knobs.h"
#include "collectors/parse/parse.h"

/* Server limit on a variant or environment value. */
#define KNOB_VALUE_MAX 256

static char *read_small(const char *root, const char *rel)
{
	struct buf p = BUF_INIT;
	char *text;

	buf_printf(&p, "%s/%s", root, rel);
	text = read_file(buf_str(&p), 1u << 20, NULL);
	buf_release(&p);
	return text;
}

char *knobs_bracketed(const char *text)
{
	const char *open = strchr(text, '['), *close = open ? strchr(open, ']') : NULL;
	if (!close || close == open + 1)
		return NULL;
	return xstrndup(open + 1, (size_t)(close - open - 1));
}

static void set_str(json_t *o, const char *key, const char *val)
{
	char tmp[KNOB_VALUE_MAX + 1];
	json_t *s;

	snprintf(tmp, sizeof(tmp), "%s", val);
	s = json_string(tmp);
	if (s)
		json_object_set_new(o, key, s);
}

static int swap_on(const char *swaps)
{
	struct lines it;
	char *line;
	int n = 0;

	lines_init(&it, swaps, strlen(swaps));
	while ((line = lines_next(&it)))
		if (it.no > 1 && line[0] && line[0] != ' ')
			n++;
	lines_release(&it);
	return n > 0;
}

/* /proc/cgroups: "memory  0  120  1" - the last column is "enabled". */
static int memcg_enabled(const char *cgroups)
{
	struct lines it;
	char *line;
	int on = -1;

	lines_init(&it, cgroups, strlen(cgroups));
	while ((line = lines_next(&it))) {
		char *f[5];
		size_t n = split_ws(line, f, 5);
		if (n == 4 && !strcmp(f[0], "memory"))
			on = !strcmp(f[3], "1");
	}
	lines_release(&it);
	return on;
}

json_t *knobs_variant(void)
{
	json_t *v = json_object();
	char *t, *mode;
	int on;

	if ((t = read_small(root_sys(), "kernel/mm/lru_gen/enabled"))) {
		/* "0x0007": any capability bit set means MGLRU is on */
		char *s = str_trim(t), *end;
		unsigned long bits = strtoul(s, &end, 0);
		if (end != s)
			set_str(v, "lru_gen", bits ? "on" : "off");
		else if (!strcmp(s, "y") || !strcmp(s, "n"))
			set_str(v, "lru_gen", s[0] == 'y' ? "on" : "off");
		free(t);
	}
	if ((t = read_small(root_sys(), "kernel/mm/transparent_hugepage/enabled"))) {
		if ((mode = knobs_bracketed(t))) {
			set_str(v, "thp", mode);
			free(mode);
		}
		free(t);
	}
	if ((t = read_small(root_proc(), "swaps"))) {
		set_str(v, "swap", swap_on(t) ? "on" : "off");
		free(t);
	}
	if ((t = read_small(root_proc(), "cgroups"))) {
		on = memcg_enabled(t);
		if (on >= 0)
			set_str(v, "memcg", on ? "on" : "off");
		free(t);
	}
	return v;
}

json_t *knobs_environment(const char *proc_version)
{
	static const char *const sysctls[] = {
		"vm/swappiness",      "vm/overcommit_memory", "vm/min_free_kbytes",
		"vm/watermark_scale_factor", "vm/zone_reclaim_mode", "vm/dirty_ratio",
		"vm/dirty_background_ratio", "kernel/numa_balancing", NULL,
	};
	json_t *env = json_object();
	char *t, *mode;

	for (const char *const *s = sysctls; *s; s++) {
		char rel[128], key[128];
		snprintf(rel, sizeof(rel), "sys/%s", *s);
		if (!(t = read_small(root_proc(), rel)))
			continue;
		snprintf(key, sizeof(key), "sysctl.%s", *s);
		for (char *k = key; *k; k++)
			if (*k == '/')
				*k = '.';
		set_str(env, key, str_trim(t));
		free(t);
	}
	if ((t = read_small(root_sys(), "kernel/mm/transparent_hugepage/defrag"))) {
		if ((mode = knobs_bracketed(t))) {
			set_str(env, "thp.defrag", mode);
			free(mode);
		}
		free(t);
	}
	if ((t = read_small(root_sys(), "kernel/mm/lru_gen/enabled"))) {
		set_str(env, "lru_gen.enabled", str_trim(t));
		free(t);
	}
	if (proc_version)
		set_str(env, "kernel.version", proc_version);
	return env;
}
