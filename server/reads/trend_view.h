/*
 * trend_view.h - what GET /api/v1/trend shows of a trend key: the key
 * groups of (machine, suite, metric), each variant's history (trend.h)
 * with its stored change points and decisions, and a point's figures.
 */
#ifndef KPERF_TREND_VIEW_H
#define KPERF_TREND_VIEW_H

#include <libpq-fe.h>
#include <stddef.h>

#include "server/reads/trend.h"

/* The columns of trend_keys' rows, one row per (params, variant). */
enum trend_key_col {
	TREND_KEY_MACHINE_ID,
	TREND_KEY_TEST_ID,
	TREND_KEY_PARAMS,  /* the test's params as JSON text */
	TREND_KEY_VARIANT_ID,
	TREND_KEY_KNOBS,   /* the variant's knobs as JSON text */
	TREND_KEY_METRIC_ID /* NULL when no metric has that name */
};

/*
 * The key groups of machine and suite, each with the id of metric, ordered
 * by params then knobs; params_json and knobs_json (JSON objects, or NULL
 * for any) match exactly. The result is the caller's to check (db_ok) and
 * PQclear.
 */
PGresult *trend_keys(PGconn *c, const char *machine, const char *suite, const char *metric,
		     const char *params_json, const char *knobs_json);

struct trend_change_point {
	const char *id, *commit, *prev_commit; /* borrowed; commits: sha, else release */
	double shift_pct, ci_lo_pct, ci_hi_pct, p_value;
};

struct trend_decision {
	const char *id, *commit, *verdict, *state; /* borrowed */
	double change_pct;                         /* NaN when not stored */
	double change_abs;
};

/* One variant's series: its history (one trend, of the key's metric),
 * change points and non-noise decisions. */
struct trend_series {
	struct trend_group g;
	struct trend_change_point *cps;
	size_t ncps;
	struct trend_decision *decisions;
	size_t ndecisions;
	const char **names; /* the commit names cps and decisions borrow */
};

/*
 * Load the series of trend_keys' row of keys (the history, change points
 * and decisions in one round trip). Returns 0 (trend_series_release it), or
 * -1 with *failed set (the caller reports and PQclears it; s needs no release).
 */
int trend_series_load(PGconn *c, const PGresult *keys, int row, struct trend_series *s,
		      PGresult **failed);

void trend_series_release(struct trend_series *s);

/* A point's figures: of its samples, with its archived runs' summaries merged. */
struct trend_figures {
	size_t n;
	double mean, stddev, min, max; /* stddev 0 for fewer than two values */
};

void trend_point_figures(const struct trend_point *p, struct trend_figures *f);

#endif
