/*
 * query.h - the query-string value formats the read API shares: metric
 * globs, `k=v,k=v` maps (params=, variant=, REF qualifiers) and flags.
 */
#ifndef KPERF_QUERY_H
#define KPERF_QUERY_H

#include <jansson.h>

#include "lib/buf.h"

/* Turn a glob (*, ?) into a LIKE pattern with LIKE's own wildcards escaped. */
void query_glob_like(struct buf *out, const char *glob);

/*
 * Parse "k=v,k=v" (keys 1-64 of A-Za-z0-9._-, values up to 256 bytes without
 * ','), order free. Returns a new JSON object of strings, or NULL for a
 * malformed text. An empty string gives an empty object.
 */
json_t *query_pairs(const char *s);

/* "1"/"true" -> 1, "0"/"false"/NULL -> 0, anything else -1. */
int query_flag(const char *s);

#endif
