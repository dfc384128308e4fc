/*
 * proc.h - the kernel's counters around one benchmark iteration:
 * /proc/vmstat, /proc/meminfo, the memory.stat of the collector's cgroup and
 * /proc/lock_stat, read before and after, and LKP's rule that turns the two
 * readings into metrics (event counters as differences, gauges averaged).
 * Paths start at root_proc() and root_sys() (see cutil.h).
 */
#ifndef KPERF_PROC_H
#define KPERF_PROC_H

#include <jansson.h>

struct snapshot {
	json_t *vmstat;   /* /proc/vmstat key -> value; NULL when unreadable */
	json_t *meminfo;  /* /proc/meminfo key -> value (kB for most) */
	json_t *memcg;    /* memory.stat key -> value */
	json_t *lockstat; /* lockstat_read() keys; NULL without CONFIG_LOCK_STAT */
};

/* Read every source that is readable; the others stay NULL. Never fails. */
void snapshot_take(struct snapshot *s);
void snapshot_release(struct snapshot *s);

/*
 * Append one iteration to metrics: proc-vmstat.<key>, meminfo.<key>,
 * memcg.<key> and lock_stat.<class>.<column>, from two snapshots of the same
 * sources.
 */
void snapshot_delta(const struct snapshot *before, const struct snapshot *after, json_t *metrics);

/* Which /proc/vmstat and memory.stat keys count events: metric_role.h. */

/*
 * Read "key value" lines (vmstat, memory.stat) or "Key: value kB" lines
 * (meminfo) into a new object, or NULL when the file cannot be read.
 */
json_t *proc_kv_read(const char *path);
/* The same from a file's text. */
json_t *proc_kv_parse(const char *text, size_t len);
/* /proc/lock_stat's text as a snapshot's lockstat, or NULL when it is not one. */
json_t *snapshot_lockstat(const char *text, size_t len);

/* The memory.stat of the cgroup this process runs in (malloc'd), or NULL. */
char *memcg_stat_path(void);

#endif
