/*
 * lockstat.h - /proc/lock_stat (version 0.3/0.4) read into LKP's keys
 * "<class>.<column>" and "<class>.contentions.<function>", and the rule that
 * turns two snapshots into one iteration's metrics.
 */
#ifndef KPERF_LOCKSTAT_H
#define KPERF_LOCKSTAT_H

#include <jansson.h>
#include <stddef.h>

/*
 * Read lock_stat text into out (key -> number, in first-seen order; repeated
 * keys are summed, as LKP does). Class names lose their spaces. Returns 0, or
 * -1 with msg set (line number included) when the text is not lock_stat.
 */
int lockstat_read(const char *text, size_t len, json_t *out, char *msg, size_t msgsz);

/* Classes kept per iteration: the most contended, so a run stays far below
 * the server's 10,000 metrics (12 columns and a few call sites each). */
#define LOCKSTAT_TOP_CLASSES 100

/*
 * Add "lock_stat.<key>" metrics for the change from before to after:
 * counts and totals as differences, -min/-max as after's value, -avg
 * recomputed from the differences. Only classes contended during the
 * interval count, the LOCKSTAT_TOP_CLASSES most contended, plus every
 * lru_lock class. Returns the number of classes added.
 */
size_t lockstat_delta(const json_t *before, const json_t *after, json_t *metrics);

#endif
