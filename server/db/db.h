/*
 * db.h - PostgreSQL access for kperfd: a pool of connections taken by threads,
 * statements prepared once per connection, transactions, and the one map
 * from SQLSTATE to HTTP status.
 */
#ifndef KPERF_DB_H
#define KPERF_DB_H

#include <libpq-fe.h>
#include <stdint.h>

#include "lib/buf.h"

/* Remember the conninfo (keyword=value or URI) for every thread's connection. */
void db_setup(const char *conninfo);

/*
 * Hot standbys for reads (KPERF_READ_DATABASE_URL: a libpq conninfo, which
 * may name several hosts): NULL or "" for none. A thread whose db_reading is
 * on gets a standby's connection from db_get (its own pool), or the
 * primary's when no standby answers or none has replayed far enough.
 */
void db_setup_read(const char *conninfo);
int db_has_standby(void);

/* Longest WAL position text ("16/B374D848") and how long a read waits for a
 * standby to replay a client's own write before reading the primary. */
#define DB_LSN_MAX 32
#define DB_READ_WAIT_US 1000000

/*
 * This thread's next statements are reads (on) that a standby may answer,
 * once it has replayed after_lsn (NULL: any position); off for writes. Reset
 * by db_release. A read that falls back to the primary stays there for the
 * rest of the request (db_reading_now() then says 0).
 */
void db_reading(int on, const char *after_lsn);
int db_reading_now(void);

/* The server a pool's connections reach (host and port as libpq names
 * them), the times it changed and since when (epoch seconds). */
struct db_node {
	char host[256], port[16];
	long switches;
	double since;
};
/* The primary's (reads 0) or the standby pool's (reads 1) node: 1, or 0
 * while no connection of that pool was made. */
int db_node(int reads, struct db_node *out);

/* At most n connections in the pool (set before serving). */
void db_pool_size(int n);

/*
 * The calling thread's connection: taken from the pool on first use (waiting
 * while all are taken), reconnected after it broke, kept until db_release.
 * Returns NULL when the server cannot be reached (answer 503).
 */
PGconn *db_get(void);

/* db_get without waiting, for a second connection of a request (which must
 * not wait for requests that may be waiting for theirs): NULL at once unless
 * the pool could give two, so one is always left for the next request. */
PGconn *db_try_get(void);

/* Give the calling thread's connection back to the pool (idle, kept open). */
void db_release(void);

/* Mark the calling thread's connection broken: the next db_get reopens it
 * in place (a PGconn the thread holds stays a valid object). */
void db_drop(void);

/* A new connection outside the per-thread cache (CLI, migrations); NULL on failure. */
PGconn *db_connect(const char *conninfo, char *err, size_t errlen);

/*
 * Run the constant statement sql with n text parameters (NULL = SQL NULL),
 * prepared on first use on this connection. Outside a transaction, a
 * statement that found the connection broken is retried once on a new one.
 * Never returns NULL; the caller PQclear()s the result.
 */
PGresult *db_exec(PGconn *c, const char *sql, int n, const char *const *params);

/*
 * The same with results in binary format, for statements answering many
 * numbers: read bigint and double precision columns with db_int8 and
 * db_float8 (no text to parse).
 */
PGresult *db_exec_binary(PGconn *c, const char *sql, int n, const char *const *params);
/*
 * db_exec_binary with sequential scans off for the statement (then reset),
 * for reads of samples by index: a partition filled since its last ANALYZE
 * looks empty to the planner, which then plans to scan it whole (the plan of
 * a prepared statement keeps that until the next ANALYZE: 600 ms instead of
 * 30 for a trend, once).
 */
PGresult *db_exec_indexed(PGconn *c, const char *sql, int n, const char *const *params);
/*
 * Statements sent together (libpq's pipeline mode): PostgreSQL runs them
 * back to back while the caller reads the results, one per statement in
 * order, with db_pipeline_next, then db_pipeline_end (always, once
 * db_pipeline_send returned 0). A failed statement fails the ones after it.
 * Saves a round trip per statement, and lets the caller work on a result
 * while the next statements run.
 */
#define DB_PIPELINE_MAX 8
struct db_stmt {
	const char *sql; /* a string constant: prepared once per connection */
	int nparams;
	const char *const *params;
	int binary; /* results in binary format */
	/* parameters: NULL, all text; else each one's length, and its format
	 * (1: binary, as PostgreSQL's type_send writes it) */
	const int *lengths, *formats;
};
int db_pipeline_send(PGconn *c, int n, const struct db_stmt *stmts);
/* The next statement's result (never NULL; PQclear it). */
PGresult *db_pipeline_next(PGconn *c);
void db_pipeline_end(PGconn *c);

/* The statements sent together, for the result of stmts[keep]: the first
 * that failed, before or after keep (a COMMIT after it), else that one
 * (PQclear it). */
PGresult *db_exec_batch(PGconn *c, int n, const struct db_stmt *stmts, int keep);

/* Sequential scans off (on = 1) or back to the configured default (on = 0)
 * for the statements between, as db_exec_indexed does for one. */
void db_prefer_index(PGconn *c, int on);
/* The statement db_prefer_index runs, for a pipeline. */
struct db_stmt db_prefer_index_stmt(int on);
/*
 * Sequential scans off until the transaction ends: in a pipeline outside a
 * transaction block, its Sync ends it, so nothing needs resetting. With
 * generic, generic plans too for the statements that follow: for the trend's
 * samples (the month is not in their condition) a plan made for each
 * request's parameters was the same plan over every monthly partition, made
 * anew (~0.5 ms of binding for 76 months, the change points' and decisions'
 * ~0.4 ms more); PostgreSQL's time per 2,000-point trend fell from ~3.5 to
 * ~3.0 ms, the answers byte for byte the same.
 */
struct db_stmt db_prefer_index_local_stmt(int generic);
int64_t db_int8(const PGresult *r, int row, int col);
double db_float8(const PGresult *r, int row, int col);

/* 1 when r is COMMAND_OK or TUPLES_OK. */
int db_ok(const PGresult *r);

/*
 * A statement answering at most one row of one text column (a JSON
 * document, say): its value appended to out. 0; 1 when there is no row;
 * -1 with the error logged as what.
 */
int db_text(PGconn *c, const char *sql, int n, const char *const *params, struct buf *out,
	    const char *what);

/* Run a statement for its effect: 0, or -1 with the error logged. */
int db_do(PGconn *c, const char *sql, int n, const char *const *params);

/*
 * HTTP status for a failed result: 503 when the server is away or busy,
 * 409 for unique violations, 400 for data errors, else 500.
 */
int db_http_status(PGconn *c, const PGresult *r);

/* 1 when the failure is worth retrying the whole transaction (deadlock,
 * serialization, lost connection). */
int db_retryable(PGconn *c, const PGresult *r);

/* Log a failed result with its SQLSTATE and primary message. */
void db_log_error(const char *what, PGconn *c, const PGresult *r);

#endif
