/*
 * group_commit.h - store the runs of one request in a transaction that may
 * also hold the runs of other requests arriving meanwhile: one COMMIT for
 * many requests, each still answered only after that COMMIT.
 */
#ifndef KPERF_GROUP_COMMIT_H
#define KPERF_GROUP_COMMIT_H

#include <libpq-fe.h>

#include "api/store.h"

/*
 * Store items (one request's runs, all or nothing). Returns -1 when stored
 * (each item's result and id set); the index of a run stored already with
 * other content (nothing stored); -2 on a database error (*c and *failed
 * describe it; the caller PQclears *failed); -3 when no database connection
 * could be had.
 */
long group_store(struct store_item *items, size_t n, PGconn **c, PGresult **failed);

#endif
