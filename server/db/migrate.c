/*
 * migrate.c - forward-only schema migrations at start-up. A database that is
 * newer than the binary is refused: an old kperfd must not write into a
 * schema it does not understand.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/db/db.h"
#include "server/db/migrate.h"
#include "lib/util.h"

/* Any constant: the advisory lock that serialises concurrent migrators. */
#define MIGRATE_LOCK_KEY "7411220001"

int migrate_latest(void)
{
	int v = 0;
	for (int i = 0; i < nmigrations; i++)
		if (migrations[i].version > v)
			v = migrations[i].version;
	return v;
}

static int simple(PGconn *c, const char *sql, char *err, size_t errlen)
{
	PGresult *r = PQexec(c, sql);
	int rc = db_ok(r) ? 0 : -1;
	if (rc)
		snprintf(err, errlen, "%s", PQresultErrorMessage(r));
	PQclear(r);
	return rc;
}

static int current_version(PGconn *c, char *err, size_t errlen)
{
	PGresult *r = PQexec(c, "SELECT coalesce(max(version), 0) FROM schema_migrations");
	int64_t v = -1;

	if (!db_ok(r) || parse_int64(PQgetvalue(r, 0, 0), 0, 1000000, &v))
		snprintf(err, errlen, "reading schema_migrations: %s", PQresultErrorMessage(r));
	PQclear(r);
	return (int)v;
}

/* The sample partitions of this month and the next two (migration 005). */
#define SQL_PARTITIONS "SELECT kperf_sample_partitions(now(), now() + interval '2 months')"

int migrate_partitions(PGconn *c)
{
	char err[512];
	int rc;

	if (simple(c, "SELECT pg_advisory_lock(" MIGRATE_LOCK_KEY ")", err, sizeof(err))) {
		log_error("sample partitions: %s", err);
		return -1;
	}
	rc = simple(c, SQL_PARTITIONS, err, sizeof(err));
	if (rc)
		log_error("sample partitions: %s", err);
	PQclear(PQexec(c, "SELECT pg_advisory_unlock(" MIGRATE_LOCK_KEY ")"));
	return rc ? -1 : 0;
}

int migrate_run(PGconn *c, char *err, size_t errlen)
{
	int cur, applied = 0, latest = migrate_latest();

	if (simple(c, "SELECT pg_advisory_lock(" MIGRATE_LOCK_KEY ")", err, errlen))
		return -1;
	if (simple(c,
		   "SET client_min_messages = warning;"
		   "CREATE TABLE IF NOT EXISTS schema_migrations ("
		   " version integer PRIMARY KEY, name text NOT NULL,"
		   " applied_at timestamptz NOT NULL DEFAULT now())",
		   err, errlen))
		goto fail;
	cur = current_version(c, err, errlen);
	if (cur < 0)
		goto fail;
	if (cur > latest) {
		snprintf(err, errlen,
			 "database schema is version %d, newer than this kperfd knows (%d): "
			 "run a newer kperfd",
			 cur, latest);
		goto fail;
	}
	for (int i = 0; i < nmigrations; i++) {
		const struct migration *m = &migrations[i];
		char version[16];
		const char *params[2];
		PGresult *r;

		if (m->version <= cur)
			continue;
		if (simple(c, "BEGIN", err, errlen))
			goto fail;
		if (simple(c, m->sql, err, errlen)) {
			char msg[512];
			snprintf(msg, sizeof(msg), "%s", err);
			snprintf(err, errlen, "migration %03d_%s: %s", m->version, m->name, msg);
			PQclear(PQexec(c, "ROLLBACK"));
			goto fail;
		}
		snprintf(version, sizeof(version), "%d", m->version);
		params[0] = version;
		params[1] = m->name;
		r = PQexecParams(c, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
				 2, NULL, params, NULL, NULL, 0);
		if (!db_ok(r)) {
			snprintf(err, errlen, "recording migration %d: %s", m->version,
				 PQresultErrorMessage(r));
			PQclear(r);
			PQclear(PQexec(c, "ROLLBACK"));
			goto fail;
		}
		PQclear(r);
		if (simple(c, "COMMIT", err, errlen))
			goto fail;
		applied++;
	}
	if (latest >= 5 && simple(c, SQL_PARTITIONS, err, errlen))
		goto fail;
	PQclear(PQexec(c, "SELECT pg_advisory_unlock(" MIGRATE_LOCK_KEY ")"));
	return applied;
fail:
	PQclear(PQexec(c, "SELECT pg_advisory_unlock(" MIGRATE_LOCK_KEY ")"));
	return -1;
}
