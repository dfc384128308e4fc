/*
 * readcache.h - answers of the expensive reads (trend, compare) kept in
 * memory and served again while the database has not changed.
 *
 * An answer is stored with the snapshot taken just before it was read
 * (pg_current_snapshot(): xmin, xmax and the transactions in progress). A
 * later request takes a fresh snapshot first; when it is identical, no
 * transaction has started or ended since, so the stored answer is exactly
 * what reading again would give. Any write anywhere (this kperfd, another
 * kperfd on the same database, psql) changes the snapshot and makes the next
 * read a miss, so nothing is ever served stale and nothing needs invalidating.
 * An answer read after a write that raced the snapshot is stored under the
 * older snapshot, which can never come back: it is simply never served.
 *
 * Bounded by bytes (least recently used answers go first). Thread-safe.
 */
#ifndef KPERF_READCACHE_H
#define KPERF_READCACHE_H

#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define READCACHE_SNAPSHOT_MAX 256 /* longer snapshots (many open transactions): no caching */

/* Keep at most bytes of answers (0 turns the cache off). Call before serving. */
void readcache_limit(size_t bytes);

/* The database's current snapshot as text into out; 0, or -1 (do not cache). */
int readcache_snapshot(PGconn *c, char out[READCACHE_SNAPSHOT_MAX]);

/*
 * The answer stored for key under snapshot snap: appended to out with its
 * content type and ETag set; 1 on a hit, 0 on a miss.
 */
int readcache_get(const char *key, const char *snap, struct buf *out, const char **content_type,
		  uint64_t *etag);

/* Store an answer (content_type must be a string constant); its ETag
 * (hash_fnv1a64 of the body) into *etag. */
void readcache_put(const char *key, const char *snap, const char *content_type,
		   const char *body, size_t len, uint64_t *etag);

/* Answers and bytes held, hits and misses since start (for /metrics and tests). */
void readcache_stats(size_t *entries, size_t *bytes, unsigned long *hits, unsigned long *misses);

#endif
