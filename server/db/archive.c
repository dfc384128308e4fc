/*
 * archive.c - `kperfd archive` and `kperfd restore-archive`: the SQL of
 * migration 015 (kperf_archive_month, kperf_restore_month) called a month
 * per transaction, and pg_dump / pg_restore run (no shell) for the months
 * that go to files.
 */
#include <errno.h>
#include <spawn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "server/db/archive.h"
#include "server/db/db.h"
#include "lib/util.h"

extern char **environ;

/* The attached monthly partitions before $1, oldest first. */
static const char SQL_MONTHS[] =
	"SELECT to_char(to_date(substr(c.relname, 8), 'YYYYMM'), 'YYYY-MM-DD')"
	" FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
	" WHERE i.inhparent = 'public.sample'::regclass AND c.relname ~ '^sample_[0-9]{6}$'"
	"  AND to_date(substr(c.relname, 8), 'YYYYMM') < $1::date ORDER BY 1";
static const char SQL_CURRENT[] =
	"SELECT to_char(date_trunc('month', now() AT TIME ZONE 'UTC'), 'YYYY-MM-DD')";
static const char SQL_ARCHIVE[] = "SELECT kperf_archive_month($1::date)";
static const char SQL_ARCHIVED[] =
	"SELECT summaries, runs, samples FROM archive_month WHERE month = $1::date";
static const char SQL_DUMPED[] = "SELECT kperf_archive_dumped($1::date, $2)";
static const char SQL_WHERE[] =
	"SELECT place, coalesce(file, '') FROM archive_month WHERE month = $1::date";
static const char SQL_RESTORE[] = "SELECT kperf_restore_month($1::date)";
static const char SQL_LIST[] =
	"SELECT to_char(month, 'YYYY-MM'), place, coalesce(file, ''), runs, samples, summaries,"
	" to_char(archived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') FROM archive_month"
	" ORDER BY month";

int archive_parse_month(const char *s, char out[11])
{
	int y, m;
	char tail;

	if (!s || strlen(s) != 7 || s[4] != '-' || sscanf(s, "%4d-%2d%c", &y, &m, &tail) != 2 ||
	    strspn(s, "0123456789") != 4 || strspn(s + 5, "0123456789") != 2 || y < 1970 ||
	    m < 1 || m > 12)
		return -1;
	snprintf(out, 11, "%04d-%02d-01", y % 10000, m % 100);
	return 0;
}

/* The first statement's failure as err; -1. */
static int failed(PGconn *c, PGresult *r, const char *what, char *err, size_t errlen)
{
	const char *msg = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;

	snprintf(err, errlen, "%s: %s", what, msg ? msg : PQerrorMessage(c));
	PQclear(r);
	return -1;
}

static int exec_ok(PGconn *c, const char *sql, int n, const char *const *p, const char *what,
		   char *err, size_t errlen)
{
	PGresult *r = db_exec(c, sql, n, p);
	if (!db_ok(r))
		return failed(c, r, what, err, errlen);
	PQclear(r);
	return 0;
}

/* Runs argv[0] (from PATH) and waits; 0 when it exited 0. */
static int run_tool(char *const *argv, char *err, size_t errlen)
{
	pid_t pid;
	int st, rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);

	if (rc) {
		snprintf(err, errlen, "cannot run %s: %s", argv[0], strerror(rc));
		return -1;
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			snprintf(err, errlen, "%s: %s", argv[0], strerror(errno));
			return -1;
		}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		snprintf(err, errlen, "%s failed (%s %d); its messages are above", argv[0],
			 WIFEXITED(st) ? "exit status" : "signal",
			 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		return -1;
	}
	return 0;
}

/* Month (YYYY-MM-01) into pg_dump file dir/sample_YYYYMM.dump, then its table dropped. */
static int dump_month(PGconn *c, const char *conninfo, const char *month, const char *dir,
		      char *err, size_t errlen)
{
	char table[64], path[4200], *argv[10];
	const char *p[2] = {month, path};

	snprintf(table, sizeof(table), "archive.sample_%.4s%.2s", month, month + 5);
	if (snprintf(path, sizeof(path), "%s/sample_%.4s%.2s.dump", dir, month, month + 5) >=
	    (int)sizeof(path) - 1) {
		snprintf(err, errlen, "--dump: the path is too long");
		return -1;
	}
	argv[0] = "pg_dump";
	argv[1] = "--format=custom";
	argv[2] = "--no-owner";
	argv[3] = "--table";
	argv[4] = table;
	argv[5] = "--file";
	argv[6] = path;
	argv[7] = "--dbname";
	argv[8] = (char *)conninfo;
	argv[9] = NULL;
	if (run_tool(argv, err, errlen))
		return -1;
	/* the file is whole before the table goes */
	if (exec_ok(c, SQL_DUMPED, 2, p, "dropping the dumped table", err, errlen))
		return -1;
	printf("  dumped to %s\n", path);
	return 0;
}

int archive_months(PGconn *c, const char *conninfo, const char *before, const char *dump_dir,
		   char *err, size_t errlen)
{
	const char *p[1] = {before};
	PGresult *cur, *months;
	char dir[PATH_MAX];
	struct stat st;
	int n;

	/* the path recorded for restore-archive is absolute */
	if (dump_dir && (stat(dump_dir, &st) || !S_ISDIR(st.st_mode) || !realpath(dump_dir, dir))) {
		snprintf(err, errlen, "--dump %s: not a directory", dump_dir);
		return -1;
	}
	if (dump_dir)
		dump_dir = dir;
	cur = db_exec(c, SQL_CURRENT, 0, NULL);
	if (!db_ok(cur))
		return failed(c, cur, "reading the date", err, errlen);
	if (strcmp(before, PQgetvalue(cur, 0, 0)) > 0) {
		snprintf(err, errlen,
			 "--before %.7s is after the current month (%.7s), which still receives runs",
			 before, PQgetvalue(cur, 0, 0));
		PQclear(cur);
		return -1;
	}
	PQclear(cur);
	months = db_exec(c, SQL_MONTHS, 1, p);
	if (!db_ok(months))
		return failed(c, months, "listing the months", err, errlen);
	n = PQntuples(months);
	if (!n)
		printf("no month before %.7s is in the hot database\n", before);
	for (int i = 0; i < n; i++) {
		const char *month = PQgetvalue(months, i, 0), *q[1] = {month};
		struct timespec t0, t1;
		PGresult *r;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (exec_ok(c, "BEGIN", 0, NULL, "archiving", err, errlen))
			goto fail;
		r = db_exec(c, SQL_ARCHIVE, 1, q);
		if (db_ok(r)) {
			PQclear(r);
			r = db_exec(c, SQL_ARCHIVED, 1, q);
		}
		if (!db_ok(r) || PQntuples(r) != 1) {
			char what[64];
			snprintf(what, sizeof(what), "archiving %.7s", month);
			failed(c, r, what, err, errlen);
			PQclear(PQexec(c, "ROLLBACK"));
			goto fail;
		}
		if (exec_ok(c, "COMMIT", 0, NULL, "archiving", err, errlen)) {
			PQclear(r);
			goto fail;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("%.7s: %s samples of %s runs summarised as %s (run, metric) rows, partition"
		       " moved to schema archive (%.1f s)\n",
		       month, PQgetvalue(r, 0, 2), PQgetvalue(r, 0, 1), PQgetvalue(r, 0, 0),
		       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
		PQclear(r);
		fflush(stdout);
		if (dump_dir && dump_month(c, conninfo, month, dump_dir, err, errlen))
			goto fail;
	}
	PQclear(months);
	return 0;
fail:
	PQclear(months);
	return -1;
}

int archive_restore(PGconn *c, const char *conninfo, const char *month, const char *file,
		    char *err, size_t errlen)
{
	const char *p[1] = {month};
	PGresult *r = db_exec(c, SQL_WHERE, 1, p);

	if (!db_ok(r))
		return failed(c, r, "reading archive_month", err, errlen);
	if (PQntuples(r) != 1) {
		snprintf(err, errlen, "%.7s is not archived (kperfd archive --list)", month);
		PQclear(r);
		return -1;
	}
	if (!strcmp(PQgetvalue(r, 0, 0), "file")) {
		char path[4096], *argv[8];
		snprintf(path, sizeof(path), "%s", file ? file : PQgetvalue(r, 0, 1));
		argv[0] = "pg_restore";
		argv[1] = "--no-owner";
		argv[2] = "--exit-on-error";
		argv[3] = "--single-transaction";
		argv[4] = "--dbname";
		argv[5] = (char *)conninfo;
		argv[6] = path;
		argv[7] = NULL;
		if (run_tool(argv, err, errlen)) {
			PQclear(r);
			return -1;
		}
		printf("%.7s: restored %s into schema archive\n", month, path);
	}
	PQclear(r);
	if (exec_ok(c, "BEGIN", 0, NULL, "restoring", err, errlen))
		return -1;
	r = db_exec(c, SQL_RESTORE, 1, p);
	if (!db_ok(r)) {
		failed(c, r, "restoring", err, errlen);
		PQclear(PQexec(c, "ROLLBACK"));
		return -1;
	}
	if (exec_ok(c, "COMMIT", 0, NULL, "restoring", err, errlen)) {
		PQclear(r);
		return -1;
	}
	printf("%.7s: partition attached again, %s summaries dropped\n", month,
	       PQgetvalue(r, 0, 0));
	PQclear(r);
	return 0;
}

int archive_list(PGconn *c, char *err, size_t errlen)
{
	PGresult *r = db_exec(c, SQL_LIST, 0, NULL);

	if (!db_ok(r))
		return failed(c, r, "reading archive_month", err, errlen);
	printf("%-8s %-6s %12s %14s %14s  %-16s %s\n", "month", "where", "runs", "samples",
	       "summaries", "archived (UTC)", "file");
	for (int i = 0; i < PQntuples(r); i++)
		printf("%-8s %-6s %12s %14s %14s  %-16s %s\n", PQgetvalue(r, i, 0),
		       PQgetvalue(r, i, 1), PQgetvalue(r, i, 3), PQgetvalue(r, i, 4),
		       PQgetvalue(r, i, 5), PQgetvalue(r, i, 6), PQgetvalue(r, i, 2));
	PQclear(r);
	return 0;
}
