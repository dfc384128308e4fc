/*
 * direction.h - whether a metric is better higher or lower, by DESIGN.md's
 * name rules, unless a run or the metric table says otherwise.
 */
#ifndef KPERF_DIRECTION_H
#define KPERF_DIRECTION_H

enum direction { DIR_NONE = 0, DIR_HIGHER = 1, DIR_LOWER = -1 };

/* The default direction of a metric name (perf-profile.*, *latency*, ... lower;
 * the throughput, ops and per-second names higher; anything else none). */
enum direction direction_of_name(const char *metric);

/* Parse "higher" / "lower" / "none"; anything else (or NULL, "") gives dflt. */
enum direction direction_parse(const char *s, enum direction dflt);

/* "higher", "lower" or "none". */
const char *direction_name(enum direction d);

#endif
