/*
 * proc.c - counter snapshots around a benchmark and the rule for turning
 * two of them into one iteration: event counters as after - before, gauges
 * as the mean of the two readings (LKP's rule; LKP samples more often, the
 * collector reads twice per iteration).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "collectors/base/cutil.h"
#include "collectors/parse/lockstat.h"
#include "collectors/parse/metrics.h"
#include "collectors/parse/parse.h"
#include "collectors/host/proc.h"
#include "lib/metric_role.h"

/* Largest counter file read: /proc/lock_stat of a big machine. */
#define PROC_FILE_MAX (64u * 1024u * 1024u)

json_t *proc_kv_read(const char *path)
{
	size_t len;
	char *text = read_file(path, PROC_FILE_MAX, &len);
	json_t *out;

	if (!text)
		return NULL;
	out = proc_kv_parse(text, len);
	free(text);
	return out;
}

json_t *proc_kv_parse(const char *text, size_t len)
{
	struct lines it;
	json_t *out;
	char *line;

	out = json_object();
	lines_init(&it, text, len);
	while ((line = lines_next(&it))) {
		char *f[4];
		size_t n = split_ws(line, f, 4);
		size_t kl;
		double v;

		if (n < 2 || cparse_double(f[1], &v))
			continue;
		kl = strlen(f[0]);
		if (kl && f[0][kl - 1] == ':')
			f[0][kl - 1] = '\0';
		if (f[0][0])
			json_object_set_new(out, f[0], json_real(v));
	}
	lines_release(&it);
	return out;
}

char *memcg_stat_path(void)
{
	struct buf path = BUF_INIT, file = BUF_INIT;
	char *text, *v1 = NULL, *v2 = NULL, *line;
	struct lines it;
	size_t len;

	buf_printf(&file, "%s/self/cgroup", root_proc());
	text = read_file(buf_str(&file), 1u << 20, &len);
	buf_release(&file);
	if (!text)
		return NULL;
	lines_init(&it, text, len);
	while ((line = lines_next(&it))) {
		/* "4:memory:/path" (v1, controllers comma-separated) or "0::/path" (v2) */
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		if (!strcmp(c1 + 1, "") && !v2)
			v2 = xstrdup(c2 + 1);
		for (char *tok = c1 + 1; tok && *tok;) {
			char *comma = strchr(tok, ',');
			size_t n = comma ? (size_t)(comma - tok) : strlen(tok);
			if (n == 6 && !strncmp(tok, "memory", 6) && !v1)
				v1 = xstrdup(c2 + 1);
			tok = comma ? comma + 1 : NULL;
		}
	}
	lines_release(&it);
	free(text);
	if (v1)
		buf_printf(&path, "%s/fs/cgroup/memory%s/memory.stat", root_sys(),
			    strcmp(v1, "/") ? v1 : "");
	else if (v2)
		buf_printf(&path, "%s/fs/cgroup%s/memory.stat", root_sys(), strcmp(v2, "/") ? v2 : "");
	free(v1);
	free(v2);
	if (!path.len)
		return NULL;
	return buf_detach(&path, NULL);
}

void snapshot_take(struct snapshot *s)
{
	struct buf p = BUF_INIT;
	char *memcg = memcg_stat_path();
	size_t len;
	char *text;

	memset(s, 0, sizeof(*s));
	buf_printf(&p, "%s/vmstat", root_proc());
	s->vmstat = proc_kv_read(buf_str(&p));
	buf_reset(&p);
	buf_printf(&p, "%s/meminfo", root_proc());
	s->meminfo = proc_kv_read(buf_str(&p));
	if (memcg)
		s->memcg = proc_kv_read(memcg);
	buf_reset(&p);
	buf_printf(&p, "%s/lock_stat", root_proc());
	text = read_file(buf_str(&p), PROC_FILE_MAX, &len);
	if (text)
		s->lockstat = snapshot_lockstat(text, len);
	free(text);
	free(memcg);
	buf_release(&p);
}

json_t *snapshot_lockstat(const char *text, size_t len)
{
	json_t *ls = json_object();
	char msg[128];

	if (lockstat_read(text, len, ls, msg, sizeof(msg))) {
		json_decref(ls);
		return NULL;
	}
	return ls;
}

void snapshot_release(struct snapshot *s)
{
	json_decref(s->vmstat);
	json_decref(s->meminfo);
	json_decref(s->memcg);
	json_decref(s->lockstat);
	memset(s, 0, sizeof(*s));
}

/* Keys present in both readings: events as differences, gauges as means. */
static void kv_delta(const json_t *before, const json_t *after, const char *prefix,
		     int (*is_event)(const char *), json_t *metrics)
{
	const char *key;
	json_t *a;

	if (!before || !after)
		return;
	json_object_foreach((json_t *)after, key, a) {
		json_t *b = json_object_get(before, key);
		double x = json_number_value(a), y;
		struct buf name = BUF_INIT;

		if (!b)
			continue;
		y = json_number_value(b);
		buf_printf(&name, "%s.%s", prefix, key);
		metrics_add(metrics, buf_str(&name),
			    is_event && is_event(key) ? x - y : (x + y) / 2);
		buf_release(&name);
	}
}

void snapshot_delta(const struct snapshot *before, const struct snapshot *after, json_t *metrics)
{
	kv_delta(before->vmstat, after->vmstat, "proc-vmstat", vmstat_is_event, metrics);
	kv_delta(before->meminfo, after->meminfo, "meminfo", NULL, metrics);
	kv_delta(before->memcg, after->memcg, "memcg", memcg_is_event, metrics);
	if (before->lockstat && after->lockstat)
		lockstat_delta(before->lockstat, after->lockstat, metrics);
}
