/*
 * store_samples.c - the samples of ingest's runs on their way into table
 * sample: lines of one COPY for a transaction's runs, or PostgreSQL's binary
 * arrays for one run's statement (RUN_SAMPLES in store.c). Values keep
 * their exact double, -0 included.
 */
#include <endian.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/buf.h"
#include "server/db/db.h"
#include "lib/jsonw.h"
#include "api/store.h"
#include "api/store_samples.h"

static const char SQL_COPY[] =
	"COPY sample (at, run_id, metric_id, iteration, value, key_group_id) FROM STDIN";

static int copy_flush(PGconn *c, struct buf *b)
{
	int rc = b->len ? PQputCopyData(c, b->data, (int)b->len) : 1;
	b->len = 0;
	return rc == 1 ? 0 : -1;
}

/* A value in its shortest exact form (as JSON writes it: read back, it is
 * the same double), -0 included, for COPY lines. */
static void value_text(struct buf *b, double value)
{
	if (value == 0 && signbit(value))
		buf_puts(b, "-0"); /* JSON's form would be "0" */
	else
		jsonw_double(b, value);
}

/* One COPY line: the run's head, metric, iteration, value, the run's tail. */
static void copy_line(struct buf *b, const char *head, size_t hl, long mid, size_t iteration,
		      double value, const char *tail, size_t tl)
{
	char mi[48];
	int n = snprintf(mi, sizeof(mi), "%ld\t%zu\t", mid, iteration);

	buf_append(b, head, hl);
	buf_append(b, mi, (size_t)n);
	value_text(b, value);
	buf_append(b, tail, tl);
}

/* COPY the samples of the created runs: one line per value. */
int store_copy_samples(PGconn *c, struct store_item *items, size_t n, const struct strmap *fresh,
		       PGresult **failed)
{
	struct buf b = {0};
	PGresult *r = PQexec(c, SQL_COPY);
	int rc = 0;

	if (PQresultStatus(r) != PGRES_COPY_IN) {
		*failed = r;
		return -1;
	}
	PQclear(r);
	for (size_t i = 0; i < n && !rc; i++) {
		json_t *vals, *v;
		const char *name;
		char head[96], tail[32];
		size_t hl, tl;

		if (items[i].result != STORE_CREATED)
			continue;
		/* "at\trun\t" and "\tkey_group\n" are the run's, in every line */
		hl = (size_t)snprintf(head, sizeof(head), "%s\t%ld\t", items[i].at, items[i].id);
		tl = (size_t)snprintf(tail, sizeof(tail), "\t%ld\n", items[i].key_group);
		json_object_foreach(json_object_get(items[i].run->json, "metrics"), name, vals) {
			long mid = store_metric_id(fresh, name);
			size_t k;

			if (!mid) { /* cannot happen: resolve_metrics found every name */
				rc = -1;
				break;
			}
			if (!json_is_array(vals)) {
				copy_line(&b, head, hl, mid, 0, json_number_value(vals), tail, tl);
				continue;
			}
			json_array_foreach(vals, k, v)
				copy_line(&b, head, hl, mid, k, json_number_value(v), tail, tl);
			if (b.len >= 256 * 1024 && copy_flush(c, &b))
				rc = -1;
		}
	}
	if (!rc)
		rc = copy_flush(c, &b);
	buf_release(&b);
	if (PQputCopyEnd(c, rc ? "kperfd: a metric id was not found" : NULL) != 1)
		rc = -1;
	r = PQgetResult(c);
	if (!db_ok(r)) {
		*failed = r;
		rc = -1;
		while ((r = PQgetResult(c))) /* drain to the end of the COPY */
			PQclear(r);
	} else {
		PQclear(r);
		while ((r = PQgetResult(c)))
			PQclear(r);
	}
	if (rc && !*failed)
		*failed = PQmakeEmptyPGresult(c, PGRES_FATAL_ERROR);
	return rc;
}

/* PostgreSQL's binary form of a one-dimensional array without NULLs (what
 * array_send writes): dimensions, lower bound 1, element type, then each
 * element as its length and its big-endian bytes. */
#define OID_INT8 20
#define OID_INT4 23
#define OID_FLOAT8 701

static void be32(struct buf *b, uint32_t v)
{
	v = htobe32(v);
	buf_append(b, &v, 4);
}

static void be64(struct buf *b, uint64_t v)
{
	v = htobe64(v);
	buf_append(b, &v, 8);
}

static void array_head(struct buf *b, uint32_t type)
{
	be32(b, 1);    /* dimensions */
	be32(b, 0);    /* no NULLs */
	be32(b, type); /* element type */
	be32(b, 0);    /* length: set by array_done */
	be32(b, 1);    /* lower bound */
}

static void array_done(struct buf *b, uint32_t n)
{
	n = htobe32(n);
	memcpy(b->data + 12, &n, 4);
}

/*
 * A run's samples as RUN_SAMPLES' three arrays in binary (metric ids,
 * iterations, values: every double as its own 64 bits, -0 included) into
 * a[0..2], when every metric id is known; else 0 (the run goes the COPY way).
 */
int store_samples_arrays(const struct run_in *run, const struct strmap *fresh, struct buf a[3])
{
	static const uint32_t type[3] = {OID_INT8, OID_INT4, OID_FLOAT8};
	json_t *vals, *v;
	const char *name;
	uint32_t count = 0;
	size_t k;

	for (int i = 0; i < 3; i++)
		array_head(&a[i], type[i]);
	json_object_foreach(json_object_get(run->json, "metrics"), name, vals) {
		long mid = store_metric_id(fresh, name);
		size_t n = json_is_array(vals) ? json_array_size(vals) : 1; /* a scalar: one */

		if (!mid)
			return 0;
		for (k = 0; k < n; k++) {
			double d;
			uint64_t bits;

			v = json_is_array(vals) ? json_array_get(vals, k) : vals;
			d = json_number_value(v);
			memcpy(&bits, &d, 8);
			be32(&a[0], 8);
			be64(&a[0], (uint64_t)mid);
			be32(&a[1], 4);
			be32(&a[1], (uint32_t)k);
			be32(&a[2], 8);
			be64(&a[2], bits);
			count++;
		}
	}
	for (int i = 0; i < 3; i++)
		array_done(&a[i], count);
	return 1;
}
