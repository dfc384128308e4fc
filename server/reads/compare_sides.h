/*
 * compare_sides.h - what GET /api/v1/compare reads and computes for its
 * sides: every side's samples (the targets on a helper thread), the runs'
 * environments and how they differ, and the rows written on two threads.
 */
#ifndef KPERF_COMPARE_SIDES_H
#define KPERF_COMPARE_SIDES_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stddef.h>

#include "lib/buf.h"
#include "server/reads/compare_load.h"
#include "server/stats/compare.h"

/*
 * Load side s of set from f[s], for s in [0, nsides): the base on c, the
 * targets meanwhile by a helper thread on a connection of its own when the
 * pool can spare one (else after the base, on c). runs[s] and run_ids[s]
 * as cmp_load_side gives them. Returns 0, or -1 (logged) with *status the
 * HTTP status of the failure (0: none known).
 */
int cmp_load_sides(PGconn *c, struct cmp_set *set, int nsides, const struct cmp_filter *f,
		   size_t *runs, char **run_ids, int *status);

/*
 * The environments of each side's runs (run_ids[s], bigint[] literals) into
 * env[s]: {"config", "cmdline", "variant", "machine"}, each a key -> the
 * distinct values of the side's runs. Returns 0 (json_decref each env[s]),
 * or -1 with *failed set (the caller reports and PQclears it; env[] holds
 * what was read).
 */
int cmp_load_env(PGconn *c, int nsides, char *const *run_ids, json_t **env, PGresult **failed);

/* One difference: kind's key has other values at target than at the base. */
typedef void (*cmp_env_diff_fn)(void *arg, const char *kind, const char *key, int target,
				json_t *base, json_t *tgt);

/* Call put for every difference of env[1..nsides) from env[0], by target,
 * kind (in cmp_load_env's order) and key; a side lacking a key has []. */
void cmp_env_diff(json_t *const *env, int nsides, cmp_env_diff_fn put, void *arg);

typedef int (*cmp_row_shown_fn)(const struct cmp_row *row, const void *arg);
typedef void (*cmp_row_put_fn)(struct buf *out, const struct cmp_row *row, const void *arg);

/*
 * Write into b the rows of set's keys in order, each key against each
 * target 1..nsides-1: computed (cmp_row_compute), then written by put when
 * shown (NULL: all) says so, a comma between two rows. From 1,000 keys, two
 * threads compute and write half of the keys each; put must be thread-safe.
 */
void cmp_rows_write(const struct cmp_set *set, int nsides, cmp_row_shown_fn shown,
		    cmp_row_put_fn put, const void *arg, struct buf *b);

#endif
