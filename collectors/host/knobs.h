/*
 * knobs.h - the runtime settings of a run that are not the commit: the
 * variant knobs that are part of every trend key (lru_gen, thp, swap, memcg)
 * and environment facts shown beside a comparison (sysctls, /proc/version).
 */
#ifndef KPERF_KNOBS_H
#define KPERF_KNOBS_H

#include <jansson.h>

/*
 * The detected variant as a new object of strings:
 *   lru_gen  "on"/"off" from /sys/kernel/mm/lru_gen/enabled (absent: no MGLRU)
 *   thp      the bracketed mode of /sys/kernel/mm/transparent_hugepage/enabled
 *   swap     "on" when /proc/swaps lists a device, else "off"
 *   memcg    "on"/"off" from the memory line of /proc/cgroups
 * A source that cannot be read leaves its knob out.
 */
json_t *knobs_variant(void);

/*
 * Environment facts as a new object of strings: sysctl.vm.* settings that
 * change reclaim, kernel.numa_balancing, the THP defrag mode, lru_gen's raw
 * value and kernel.version (/proc/version, cut to 256 bytes).
 */
json_t *knobs_environment(const char *proc_version);

/* The mode in brackets of a sysfs choice ("always [madvise] never"), malloc'd, or NULL. */
char *knobs_bracketed(const char *text);

#endif
