/*
 * machine.h - facts about the lab machine for a run's "machine" block: its
 * name, CPU model, CPU and socket counts, memory and NUMA nodes, from
 * /proc/cpuinfo, /proc/meminfo and /sys/devices/system/node.
 */
#ifndef KPERF_MACHINE_H
#define KPERF_MACHINE_H

#include <jansson.h>

#define MACHINE_NAME_MAX 64

struct machine_facts {
	char name[MACHINE_NAME_MAX + 1]; /* [A-Za-z0-9._-], never empty */
	char cpu_model[256];             /* "" when unknown */
	long nr_cpus, sockets, memory_mb, numa_nodes; /* 0 when unknown */
};

/*
 * Fill m; name is the configured machine name or NULL for the host name.
 * Returns 0, or -1 when name (after cleaning) would be empty.
 */
int machine_facts_read(struct machine_facts *m, const char *name);

/* A new "machine" object for the run document. */
json_t *machine_json(const struct machine_facts *m);

/*
 * Copy src into dst (dstsz bytes) keeping only A-Za-z0-9._- (others become
 * '-'), cut to MACHINE_NAME_MAX. Returns the length written.
 */
size_t machine_name_clean(const char *src, char *dst, size_t dstsz);

#endif
