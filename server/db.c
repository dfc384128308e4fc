/*
 * db.c - per-thread libpq connections and prepared statements. kperfd keeps
 * no state beside the database, so a lost connection is simply reopened on
 * the next statement; requests in between answer 503.
 */
#include <endian.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "db.h"
#include "limits.h"
#include "util.h"

#define DB_PREPARED_MAX 256

static char *db_conninfo;

struct thread_db {
	PGconn *conn;
	const char *prepared[DB_PREPARED_MAX]; /* statement texts, by identity */
	int nprepared;
};

static _Thread_local struct thread_db tdb;
static pthread_key_t tdb_key;
static pthread_once_t tdb_once = PTHREAD_ONCE_INIT;

/* Close a worker's connection when libmicrohttpd ends the thread. */
static void tdb_exit(void *arg)
{
	(void)arg;
	db_drop();
}

static void tdb_key_create(void)
{
	pthread_key_create(&tdb_key, tdb_exit);
}

void db_setup(const char *conninfo)
{
	free(db_conninfo);
	db_conninfo = xstrdup(conninfo);
}

PGconn *db_connect(const char *conninfo, char *err, size_t errlen)
{
	/* connect_timeout bounds how long a request waits for a dead server. */
	const char *keys[] = {"dbname", "connect_timeout", "application_name", "options", NULL};
	char timeout[16];
	const char *vals[5];
	PGconn *c;

	snprintf(timeout, sizeof(timeout), "%d", LIMIT_DB_CONNECT_TIMEOUT_S);
	vals[0] = conninfo;
	vals[1] = timeout;
	vals[2] = "kperfd";
	/* JIT compiling a plan over a few dozen sample partitions costs ~100 ms,
	 * far more than the index lookups kperf's statements run. */
	vals[3] = "-c TimeZone=UTC -c jit=off";
	vals[4] = NULL;
	c = PQconnectdbParams(keys, vals, 1);
	if (PQstatus(c) != CONNECTION_OK) {
		if (err)
			snprintf(err, errlen, "%s", PQerrorMessage(c));
		PQfinish(c);
		return NULL;
	}
	return c;
}

static void notice_ignore(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

PGconn *db_get(void)
{
	char err[512];

	if (tdb.conn && PQstatus(tdb.conn) == CONNECTION_OK)
		return tdb.conn;
	db_drop();
	tdb.conn = db_connect(db_conninfo ? db_conninfo : "", err, sizeof(err));
	if (!tdb.conn) {
		char *nl = strchr(err, '\n');
		if (nl)
			*nl = '\0';
		log_error("database unreachable: %s", err);
		return NULL;
	}
	PQsetNoticeProcessor(tdb.conn, notice_ignore, NULL);
	counters.db_connects++;
	pthread_once(&tdb_once, tdb_key_create);
	pthread_setspecific(tdb_key, &tdb);
	return tdb.conn;
}

void db_drop(void)
{
	if (tdb.conn)
		PQfinish(tdb.conn);
	tdb.conn = NULL;
	tdb.nprepared = 0;
}

static int prepared_index(const char *sql)
{
	for (int i = 0; i < tdb.nprepared; i++)
		if (tdb.prepared[i] == sql)
			return i;
	return -1;
}

static PGresult *exec_once(PGconn *c, const char *sql, int n, const char *const *params,
			   int binary)
{
	char name[24];
	int i;

	/* Only the thread's own connection keeps a prepared-statement cache. */
	if (c != tdb.conn)
		return PQexecParams(c, sql, n, NULL, params, NULL, NULL, binary);
	i = prepared_index(sql);
	if (i < 0 && tdb.nprepared < DB_PREPARED_MAX) {
		PGresult *r;
		i = tdb.nprepared;
		snprintf(name, sizeof(name), "k%d", i);
		r = PQprepare(c, name, sql, n, NULL);
		if (!db_ok(r))
			return r;
		PQclear(r);
		tdb.prepared[tdb.nprepared++] = sql;
	}
	if (i < 0)
		return PQexecParams(c, sql, n, NULL, params, NULL, NULL, binary);
	snprintf(name, sizeof(name), "k%d", i);
	return PQexecPrepared(c, name, n, params, NULL, NULL, binary);
}

static PGresult *exec_retry(PGconn *c, const char *sql, int n, const char *const *params,
			    int binary)
{
	int idle = PQtransactionStatus(c) == PQTRANS_IDLE;
	PGresult *r = exec_once(c, sql, n, params, binary);

	if (!r)
		r = PQmakeEmptyPGresult(c, PGRES_FATAL_ERROR);
	if (!db_ok(r) && idle && c == tdb.conn && PQstatus(c) == CONNECTION_BAD) {
		/* The server restarted since this connection was opened: one retry. */
		PGconn *fresh;
		PQclear(r);
		db_drop();
		fresh = db_get();
		if (!fresh)
			return PQmakeEmptyPGresult(NULL, PGRES_FATAL_ERROR);
		r = exec_once(fresh, sql, n, params, binary);
		if (!r)
			r = PQmakeEmptyPGresult(fresh, PGRES_FATAL_ERROR);
	}
	return r;
}

PGresult *db_exec(PGconn *c, const char *sql, int n, const char *const *params)
{
	return exec_retry(c, sql, n, params, 0);
}

PGresult *db_exec_binary(PGconn *c, const char *sql, int n, const char *const *params)
{
	return exec_retry(c, sql, n, params, 1);
}

int64_t db_int8(const PGresult *r, int row, int col)
{
	uint64_t v;
	memcpy(&v, PQgetvalue(r, row, col), sizeof(v));
	return (int64_t)be64toh(v);
}

int32_t db_int4(const PGresult *r, int row, int col)
{
	uint32_t v;
	memcpy(&v, PQgetvalue(r, row, col), sizeof(v));
	return (int32_t)be32toh(v);
}

double db_float8(const PGresult *r, int row, int col)
{
	uint64_t v;
	double d;
	memcpy(&v, PQgetvalue(r, row, col), sizeof(v));
	v = be64toh(v);
	memcpy(&d, &v, sizeof(d));
	return d;
}

int db_ok(const PGresult *r)
{
	ExecStatusType st = PQresultStatus(r);
	return st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
}

int db_do(PGconn *c, const char *sql, int n, const char *const *params)
{
	PGresult *r = db_exec(c, sql, n, params);
	int rc = db_ok(r) ? 0 : -1;
	if (rc)
		db_log_error("statement", c, r);
	PQclear(r);
	return rc;
}

static const char *sqlstate(const PGresult *r)
{
	const char *s = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	return s ? s : "";
}

int db_http_status(PGconn *c, const PGresult *r)
{
	const char *s = sqlstate(r);

	if (!c || PQstatus(c) != CONNECTION_OK || !*s)
		return 503;
	if (!strncmp(s, "08", 2) || !strncmp(s, "53", 2) || !strncmp(s, "57P", 3) ||
	    !strcmp(s, "40001") || !strcmp(s, "40P01"))
		return 503;
	if (!strcmp(s, "23505"))
		return 409;
	if (!strncmp(s, "22", 2) || !strncmp(s, "23", 2))
		return 400;
	return 500;
}

int db_retryable(PGconn *c, const PGresult *r)
{
	const char *s = sqlstate(r);
	return !c || PQstatus(c) != CONNECTION_OK || !strcmp(s, "40001") || !strcmp(s, "40P01");
}

void db_log_error(const char *what, PGconn *c, const PGresult *r)
{
	const char *msg = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	if (!msg && c)
		msg = PQerrorMessage(c);
	log_error("%s failed: sqlstate %s: %s", what, *sqlstate(r) ? sqlstate(r) : "none",
		  msg ? msg : "no connection");
}
