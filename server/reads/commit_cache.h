/*
 * commit_cache.h - the fields of commits that trends show (sha, parent,
 * release, subject, date), by id, kept while the database's commit epoch
 * (migration 009) stays the same: it changes in the transaction that changes
 * any of those fields, so a kept commit is never older than the epoch read
 * before it was looked up. A trend reads its runs alone and finds their
 * commits here; only commits not seen yet are read (by id).
 *
 * Commits live in generations, one per epoch. A reader holds its generation
 * (commit_cache_take ... commit_cache_put), so what it found stays valid
 * while a newer epoch starts a new generation.
 */
#ifndef KPERF_COMMIT_CACHE_H
#define KPERF_COMMIT_CACHE_H

#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

struct commit_info {
	long id;
	const char *sha, *parent, *release, *subject; /* NULL when unknown */
	int64_t committed;                            /* PostgreSQL microseconds */
	int has_date;                                 /* committed is set */
	const char *json; /* "commit":..,"parent":..,"release":..,"subject":..,"date":.. */
	size_t json_len;
};

struct buf;

/* Append info's JSON members as a trend point shows them (info->json's text). */
void commit_cache_json(struct buf *b, const struct commit_info *info);

struct commit_gen;

/*
 * The generation of epoch (read from commit_epoch before the commits are
 * looked up): the current one when it has that epoch; a new current one when
 * the epoch is newer; for an older epoch (a reader that raced an update) a
 * generation of the reader's own. Never NULL; give it back with
 * commit_cache_put.
 */
struct commit_gen *commit_cache_take(int64_t epoch);
void commit_cache_put(struct commit_gen *g);

/* out[i]: the commit ids[i] in g, or NULL. Returns how many are missing. */
size_t commit_cache_find(struct commit_gen *g, const long *ids, size_t n,
			 const struct commit_info **out);

/*
 * Keep the commits of r (binary: id, sha, parent_sha, release, subject,
 * committed_at, as COMMIT_CACHE_COLUMNS reads them) in g: all of them, so
 * a holder always finds what it read. A generation of LIMIT_COMMIT_CACHE
 * commits or more is no longer handed out (the next reader of its epoch
 * gets an empty one); it is freed when its holders put it back.
 */
void commit_cache_add(struct commit_gen *g, const PGresult *r);

/*
 * out[i]: the commit ids[i] from g, read by id and kept when it is not
 * there yet (a generation takes every commit its holders read); NULL for
 * an id with no commit. With c NULL (its connection busy) only g is looked
 * at: 1 when some are missing. 0, or -1 with *failed (the caller reports
 * and PQclears it).
 */
int commit_cache_fill(PGconn *c, struct commit_gen *g, const long *ids, size_t n,
		      const struct commit_info **out, PGresult **failed);

#define COMMIT_CACHE_COLUMNS "id, sha, parent_sha, release, subject, committed_at"

/* The epoch statement (one bigint, binary) and the commits by id ($1 bigint[]). */
extern const char COMMIT_CACHE_SQL_EPOCH[];
extern const char COMMIT_CACHE_SQL_BY_ID[];

#endif
