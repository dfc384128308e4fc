/*
 * metrics.h - the metrics of one run as the ingest contract wants them: a
 * jansson object of metric name -> array of numbers (one per iteration),
 * names cleaned to 1-256 printable ASCII characters without spaces.
 */
#ifndef KPERF_METRICS_H
#define KPERF_METRICS_H

#include <jansson.h>
#include <stddef.h>

/* Longest metric name the server takes (its LIMIT_METRIC_NAME). */
#define METRIC_NAME_MAX 256

/*
 * Clean name in place: bytes outside '!'..'~' become '_' (runs of them one
 * '_'), and the name is cut to METRIC_NAME_MAX. Returns name.
 */
char *metric_name_clean(char *name);

/*
 * Append v to metrics[name], creating the array; the name is cleaned first.
 * Returns 0, or -1 (nothing added) when v is not finite or the name is empty.
 */
int metrics_add(json_t *metrics, const char *name, double v);
int metrics_addf(json_t *metrics, double v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Append every value of every metric of src to dst (iterations in order). */
void metrics_merge(json_t *dst, const json_t *src);

/* Number of values in metrics (an array of values counts each). */
size_t metrics_nvalues(const json_t *metrics);

#endif
