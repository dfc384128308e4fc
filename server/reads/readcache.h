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
 * Bounded by bytes (least recently used answers go first). Answers are sent
 * from the cache's own memory, never copied: each response holds a reference
 * until libmicrohttpd has sent it. Thread-safe.
 */
#ifndef KPERF_READCACHE_H
#define KPERF_READCACHE_H

#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

#define READCACHE_SNAPSHOT_MAX 256 /* longer snapshots (many open transactions): no caching */

struct readcache_answer; /* one stored answer, reference-counted */

/* Keep at most bytes of answers (0 turns the cache off). Call before serving. */
void readcache_limit(size_t bytes);

/* The database's current snapshot as text into out; 0, or -1 (do not cache). */
int readcache_snapshot(PGconn *c, char out[READCACHE_SNAPSHOT_MAX]);

/*
 * The answer stored for key under snapshot snap, as a new reference (its
 * bytes stay valid until readcache_release), or NULL on a miss.
 */
struct readcache_answer *readcache_get(const char *key, const char *snap);

/*
 * Store an answer read under snap, taking body (malloc'd; content_type a
 * string constant). Returns a reference to it for sending, also when it is
 * not kept (the cache off, or the answer bigger than a quarter of it).
 */
struct readcache_answer *readcache_put(const char *key, const char *snap,
				       const char *content_type, char *body, size_t len);

/* An answer's bytes, content type and ETag (hash64 of the bytes). */
const char *readcache_body(const struct readcache_answer *a, size_t *len);
const char *readcache_content_type(const struct readcache_answer *a);
uint64_t readcache_etag(const struct readcache_answer *a);

/* Drop a reference; the last one of an answer no longer kept frees it. */
void readcache_release(struct readcache_answer *a);

/* Answers and bytes held, hits and misses since start (for /metrics and tests). */
void readcache_stats(size_t *entries, size_t *bytes, unsigned long *hits, unsigned long *misses);

#endif
