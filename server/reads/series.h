/*
 * series.h - a patch series (`NAME vN`) as /api/v1/series/{name} shows it:
 * its versions, each version's patches in commit order with their KPI
 * decisions and base, and a version's last patch against the previous one's.
 */
#ifndef KPERF_SERIES_H
#define KPERF_SERIES_H

#include <libpq-fe.h>
#include <stddef.h>

#include "server/stats/compare.h"

/* The columns of series_versions' rows, one per version in version order. */
enum series_version_col { SERIES_V_SERIES, SERIES_V_NAME, SERIES_V_VERSION };

/* The versions of the series name (`NAME vN`, or NAME for all of them). The
 * result is the caller's to check (db_ok) and PQclear. */
PGresult *series_versions(PGconn *c, const char *name);

/* A patch; the strings are borrowed from the version's result. */
struct series_patch {
	long id;
	const char *sha, *parent, *subject; /* parent, subject: NULL when not known */
	const char *runs;                   /* its valid runs, a decimal count */
	const char *kpis;                   /* its KPI decisions, a JSON array */
};

struct series_version {
	struct series_patch *patches; /* in commit order */
	size_t npatches;
	/* the parent of the first patch, and its subject when it is a stored
	 * commit; NULL when the first patch names no parent */
	const char *base_commit, *base_subject;
	PGresult *res[2]; /* what the strings are borrowed from */
};

/*
 * Load the version series (`NAME vN`, a series_versions SERIES_V_SERIES
 * value). Returns 0 (series_version_release it), or -1 with *failed set (the
 * caller reports and PQclears it; v needs no release).
 */
int series_version_load(PGconn *c, const char *series, struct series_version *v,
			PGresult **failed);

void series_version_release(struct series_version *v);

/* The KPI rows of commit to against commit from (ids), in key order. */
struct series_versus {
	struct cmp_set set;
	struct cmp_row *rows; /* rows[i].key borrowed from set */
	size_t nrows;
};

/* Load and compute them. Returns 0 (series_versus_release it), or -1
 * (logged; nothing to release). */
int series_versus_load(PGconn *c, long from, long to, struct series_versus *v);

void series_versus_release(struct series_versus *v);

#endif
