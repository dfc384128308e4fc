/*
 * migrate.h - the schema migrations compiled into kperfd (from migrations/)
 * and the start-up step that applies the missing ones in order.
 */
#ifndef KPERF_MIGRATE_H
#define KPERF_MIGRATE_H

#include <libpq-fe.h>
#include <stddef.h>

struct migration {
	int version;
	const char *name;
	const char *sql;
};

extern const struct migration migrations[];
extern const int nmigrations;

/*
 * Apply every migration newer than the database's schema, each in its own
 * transaction, recorded in schema_migrations; several kperfd starting at once
 * serialise on an advisory lock. Returns the number applied, or -1 with a
 * message in err (also when the database is newer than this binary).
 */
int migrate_run(PGconn *c, char *err, size_t errlen);

/* The newest schema version this binary knows. */
int migrate_latest(void);

/* Make the sample partitions of this month and the next two that are missing
 * (kperfd does at start and hourly). 0, or -1 with the error logged. */
int migrate_partitions(PGconn *c);

#endif
