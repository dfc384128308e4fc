/*
 * store_samples.h - a run's samples as ingest writes them: lines of one
 * COPY for a transaction's runs, or three binary arrays for a single run
 * whose metric ids are all known (store.c's RUN_SAMPLES).
 */
#ifndef KPERF_STORE_SAMPLES_H
#define KPERF_STORE_SAMPLES_H

#include <libpq-fe.h>

#include "lib/buf.h"
#include "lib/strmap.h"
#include "lib/ingest_decode.h"
#include "api/store.h"

/* The id of metric name: learnt in this transaction (fresh) or committed
 * before (the process-wide cache); 0 when unknown. */
long store_metric_id(const struct strmap *fresh, const char *name);

/*
 * COPY the samples of the items[0..n) that were created (STORE_CREATED),
 * one line per value, every metric id in fresh or the cache. Returns 0, or
 * -1 with *failed set (the caller reports and PQclears it).
 */
int store_copy_samples(PGconn *c, struct store_item *items, size_t n, const struct strmap *fresh,
		       PGresult **failed);

/*
 * A run's samples as RUN_SAMPLES' three arrays in PostgreSQL's binary form
 * (metric ids, iterations, values) into a[0..2] (zeroed buffers), when
 * every metric id is known: 1; else 0 (the run goes the COPY way).
 */
int store_samples_arrays(const struct run_in *run, const struct strmap *fresh, struct buf a[3]);

#endif
