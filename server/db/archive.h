/*
 * archive.h - old months out of the hot database (migration 015): `kperfd
 * archive --before YYYY-MM [--dump DIR]` summarises each older month's
 * samples per (run, metric) and detaches its partition into the schema
 * `archive` (with --dump, into DIR/sample_YYYYMM.dump, made by pg_dump, the
 * table then dropped); `kperfd restore-archive YYYY-MM [--file F]` brings a
 * month back; `kperfd archive --list` shows what is archived.
 */
#ifndef KPERF_ARCHIVE_H
#define KPERF_ARCHIVE_H

#include <libpq-fe.h>
#include <stddef.h>

/*
 * Parses "YYYY-MM" (month 01-12, year 1970-9999) into the month's first day
 * as "YYYY-MM-01" (out, at least 11 bytes). 0, or -1.
 */
int archive_parse_month(const char *s, char out[11]);

/*
 * Archives every attached month before `before` (YYYY-MM-01, not after the
 * current month), each in its own transaction, oldest first; with dump_dir,
 * each then goes to a pg_dump file there (conninfo is what pg_dump is given)
 * and its table is dropped. Prints a line per month to stdout. 0, or -1
 * with err set (months archived before the failure stay archived).
 */
int archive_months(PGconn *c, const char *conninfo, const char *before, const char *dump_dir,
		   char *err, size_t errlen);

/*
 * Brings month (YYYY-MM-01) back: from its table in schema archive, or from
 * its pg_dump file (file, else the one archive_month recorded) restored with
 * pg_restore first. 0, or -1 with err set.
 */
int archive_restore(PGconn *c, const char *conninfo, const char *month, const char *file,
		    char *err, size_t errlen);

/* Prints the archived months (month, where, runs, samples, summaries). 0, or -1. */
int archive_list(PGconn *c, char *err, size_t errlen);

#endif
