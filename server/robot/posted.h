/*
 * posted.h - the posted_series and posted_patch tables: a series version
 * read from an inbox, stored once with its patches and its place among
 * the series' versions; the commits a lab made from its patches.
 */
#ifndef KPERF_ROBOT_POSTED_H
#define KPERF_ROBOT_POSTED_H

#include <libpq-fe.h>

#include "lib/buf.h"
#include "server/robot/thread.h"

/*
 * In the caller's transaction: store s (read from inbox inbox_id, arrived
 * at posted_at, an ISO time or NULL). Returns the new series' id, 0 when
 * that head was stored already, -1 on error.
 */
long posted_store(PGconn *c, long inbox_id, const struct thread_series *s, const char *posted_at);

/* Set a series' state and its detail (NULL keeps none). 0 or -1. */
int posted_state(PGconn *c, long series_id, const char *state, const char *detail);

/*
 * The commits a lab made from series_id's first n patches (shas in order):
 * each must be a stored commit carrying its patch's Message-ID. 0; 1 with
 * why when they do not fit; -1 on a database error.
 */
int posted_applied(PGconn *c, long series_id, int n, const char *const *shas, char *why,
		   size_t whylen);

/* A series' versions as JSON for /api/v1/series/NAME: [{version, ...,
 * patches: [...]}] oldest first, or "[]". Into out; 0 or -1. */
int posted_versions_json(PGconn *c, const char *name, struct buf *out);

#endif
