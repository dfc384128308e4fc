/*
 * db.c - pooled libpq connections and prepared statements. A thread takes a
 * connection from the pool on its first statement and gives it back with
 * db_release (kperfd's HTTP layer does after each request phase; the worker
 * threads keep theirs). At most db_pool_size connections exist, so a burst of
 * connections to kperfd never becomes a burst of PostgreSQL backends.
 * kperfd keeps no state beside the database: a lost connection is reopened on
 * the next statement; requests in between answer 503.
 *
 * A slot's PGconn is opened once and then only reset in place (PQreset), never
 * freed while a thread holds the slot: a caller's PGconn pointer stays valid
 * for the whole request, also after a statement reconnected under it or the
 * reconnect failed (it then reports the failure, from a live object). Only
 * db_release, which ends the holder's use of it, closes a connection.
 */
#include <endian.h>
#include <unistd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/counters.h"
#include "server/db/db.h"
#include "lib/kperf_limits.h"
#include "lib/util.h"

#define DB_PREPARED_MAX 256

struct slot {
	PGconn *conn;
	const char *prepared[DB_PREPARED_MAX]; /* statement texts, by identity */
	int nprepared;
	int stuck; /* broken or left in pipeline mode: reset on the next db_get */
	struct pool *pool;
	struct slot *next; /* in the free list */
};

/* The primary's connections, and the hot standbys' (KPERF_READ_DATABASE_URL). */
struct pool {
	char *conninfo;
	pthread_mutex_t lock;
	pthread_cond_t freed;
	struct slot *free;
	int made, nfree, size;
};

enum { POOL_PRIMARY, POOL_READ, POOLS };
static struct pool pools[POOLS] = {
	{NULL, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, 0, 8},
	{NULL, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, 0, 8},
};

static _Thread_local struct slot *mine[POOLS];

/* The server each pool's connections reach, as libpq names it, and how
 * often that changed (a failover, a switchover). */
static struct node {
	pthread_mutex_t lock;
	char host[256], port[16];
	long switches;
	double since; /* epoch seconds of the last change (or the first connection) */
} nodes[POOLS] = {{PTHREAD_MUTEX_INITIALIZER, "", "", 0, 0},
		  {PTHREAD_MUTEX_INITIALIZER, "", "", 0, 0}};

static void node_seen(int pool, PGconn *c)
{
	struct node *n = &nodes[pool];
	const char *host = PQhost(c), *port = PQport(c);

	pthread_mutex_lock(&n->lock);
	if (strcmp(n->host, host ? host : "") || strcmp(n->port, port ? port : "")) {
		if (n->host[0]) {
			n->switches++;
			log_info("%s is now %s port %s (was %s port %s)",
				 pool == POOL_READ ? "reads' server" : "the primary", host ? host : "",
				 port ? port : "", n->host, n->port);
		}
		snprintf(n->host, sizeof(n->host), "%s", host ? host : "");
		snprintf(n->port, sizeof(n->port), "%s", port ? port : "");
		{
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			n->since = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
		}
	}
	pthread_mutex_unlock(&n->lock);
}

int db_node(int reads, struct db_node *out)
{
	struct node *n = &nodes[reads ? POOL_READ : POOL_PRIMARY];
	int known;

	pthread_mutex_lock(&n->lock);
	known = n->host[0] != '\0';
	snprintf(out->host, sizeof(out->host), "%s", n->host);
	snprintf(out->port, sizeof(out->port), "%s", n->port);
	out->switches = n->switches;
	out->since = n->since;
	pthread_mutex_unlock(&n->lock);
	return known;
}
/* This thread's statements go to a standby (a GET), after it replayed read_after. */
static _Thread_local int reading;
static _Thread_local char read_after[DB_LSN_MAX];
static pthread_key_t slot_key;
static pthread_once_t slot_once = PTHREAD_ONCE_INIT;

/* A thread that ends holding a connection gives it back. */
static void slot_exit(void *arg)
{
	(void)arg;
	db_release();
}

static void slot_key_create(void)
{
	pthread_key_create(&slot_key, slot_exit);
}

void db_pool_size(int n)
{
	for (int p = 0; p < POOLS; p++)
		pools[p].size = n > 0 ? n : 1;
}

/* This thread's slot of pool p: taken from the free list, made while fewer
 * than the pool's size exist, else waited for. Without waiting (!wait): NULL
 * at once unless two could be had, so that one is left for the next request. */
static struct slot *slot_take(int p, int wait)
{
	struct pool *pl = &pools[p];

	if (mine[p])
		return mine[p];
	pthread_mutex_lock(&pl->lock);
	while (wait && !pl->free && pl->made >= pl->size)
		pthread_cond_wait(&pl->freed, &pl->lock);
	if (!wait && pl->nfree + (pl->size - pl->made) < 2) {
		/* none to spare */
	} else if (pl->free) {
		mine[p] = pl->free;
		pl->free = mine[p]->next;
		pl->nfree--;
	} else if (pl->made < pl->size) {
		mine[p] = xcalloc(1, sizeof(*mine[p]));
		mine[p]->pool = pl;
		pl->made++;
	}
	pthread_mutex_unlock(&pl->lock);
	if (!mine[p])
		return NULL;
	pthread_once(&slot_once, slot_key_create);
	pthread_setspecific(slot_key, mine);
	return mine[p];
}

void db_release(void)
{
	for (int p = 0; p < POOLS; p++) {
		struct slot *s = mine[p];
		struct pool *pl;

		if (!s)
			continue;
		pl = s->pool;
		/* a connection left inside a transaction (a bug or a broken request)
		 * is not handed to the next request as it is; its holder is done */
		if (s->conn && (s->stuck || PQtransactionStatus(s->conn) != PQTRANS_IDLE)) {
			PQfinish(s->conn);
			s->conn = NULL;
			s->nprepared = 0;
			s->stuck = 0;
		}
		mine[p] = NULL;
		pthread_mutex_lock(&pl->lock);
		s->next = pl->free;
		pl->free = s;
		pl->nfree++;
		pthread_cond_signal(&pl->freed);
		pthread_mutex_unlock(&pl->lock);
	}
	pthread_setspecific(slot_key, NULL);
	reading = 0;
	read_after[0] = '\0';
}

void db_setup(const char *conninfo)
{
	free(pools[POOL_PRIMARY].conninfo);
	pools[POOL_PRIMARY].conninfo = xstrdup(conninfo);
}

void db_setup_read(const char *conninfo)
{
	free(pools[POOL_READ].conninfo);
	pools[POOL_READ].conninfo = conninfo && *conninfo ? xstrdup(conninfo) : NULL;
}

int db_has_standby(void)
{
	return pools[POOL_READ].conninfo != NULL;
}

void db_reading(int on, const char *after_lsn)
{
	reading = on && db_has_standby();
	snprintf(read_after, sizeof(read_after), "%s", reading && after_lsn ? after_lsn : "");
}

int db_reading_now(void)
{
	return reading;
}

/* The slot of this thread that holds c, or NULL. */
static struct slot *slot_of(PGconn *c)
{
	for (int p = 0; p < POOLS; p++)
		if (mine[p] && mine[p]->conn == c && c)
			return mine[p];
	return NULL;
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

/* The slot's connection, opened on first use, and after it broke reopened
 * in place (the same PGconn: a holder's pointer stays valid). NULL when the
 * server cannot be reached; s->conn then still describes the failure. */
static PGconn *slot_connect(struct slot *s)
{
	if (s->conn && !s->stuck && PQstatus(s->conn) == CONNECTION_OK)
		return s->conn;
	s->nprepared = 0; /* a new session: nothing is prepared on it */
	s->stuck = 0;
	if (s->conn) {
		PQreset(s->conn); /* leaves pipeline mode, forgets the old session */
	} else {
		char err[512];
		s->conn = db_connect(s->pool->conninfo ? s->pool->conninfo : "", err, sizeof(err));
		if (!s->conn) {
			char *nl = strchr(err, '\n');
			if (nl)
				*nl = '\0';
			log_error("%s unreachable: %s", s->pool == &pools[POOL_READ] ? "standby" : "database",
				  err);
			return NULL;
		}
	}
	if (PQstatus(s->conn) != CONNECTION_OK) {
		const char *m = PQerrorMessage(s->conn);
		log_error("%s unreachable: %.*s", s->pool == &pools[POOL_READ] ? "standby" : "database",
			  (int)strcspn(m, "\n"), m);
		s->stuck = 1;
		return NULL;
	}
	PQsetNoticeProcessor(s->conn, notice_ignore, NULL);
	counters.db_connects++;
	node_seen(s->pool == &pools[POOL_READ] ? POOL_READ : POOL_PRIMARY, s->conn);
	return s->conn;
}

/*
 * A standby's connection for this thread's reads, once the standby has
 * replayed read_after (waiting up to DB_READ_WAIT_US), else NULL: the request
 * reads the primary from then on (no standby, or one too far behind).
 */
static PGconn *standby_get(int wait)
{
	struct slot *s = slot_take(POOL_READ, wait);
	PGconn *c = s ? slot_connect(s) : NULL;

	if (c && read_after[0]) {
		const char *p[1] = {read_after};
		int64_t until = now_us() + DB_READ_WAIT_US;
		int ok = 0;
		for (;;) {
			PGresult *r = db_exec(c, "SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn"
						 " OR NOT pg_is_in_recovery()", 1, p);
			int failed = !db_ok(r);
			ok = !failed && !strcmp(PQgetvalue(r, 0, 0), "t");
			PQclear(r);
			if (ok || failed || now_us() >= until)
				break;
			usleep(10000);
		}
		if (ok)
			read_after[0] = '\0';
		else
			c = NULL;
	}
	if (!c) {
		reading = 0;
		counters.standby_fallbacks++;
	}
	return c;
}

PGconn *db_get(void)
{
	if (reading) {
		PGconn *c = standby_get(1);
		if (c)
			return c;
	}
	return slot_connect(slot_take(POOL_PRIMARY, 1));
}

PGconn *db_try_get(void)
{
	struct slot *s;

	if (reading) {
		PGconn *c = standby_get(0);
		if (c)
			return c;
	}
	s = slot_take(POOL_PRIMARY, 0);
	return s ? slot_connect(s) : NULL;
}

void db_drop(void)
{
	for (int p = 0; p < POOLS; p++)
		if (mine[p] && mine[p]->conn)
			mine[p]->stuck = 1;
}

static int prepared_index(struct slot *s, const char *sql)
{
	for (int i = 0; i < s->nprepared; i++)
		if (s->prepared[i] == sql)
			return i;
	return -1;
}

/* Prepare sql on this thread's connection c unless it is: its index in the
 * cache, or -1 (not this thread's connection, cache full, or failed). */
static int prepare(PGconn *c, const char *sql, int n)
{
	struct slot *s = slot_of(c);
	char name[24];
	PGresult *r;
	int i;

	if (!s)
		return -1;
	if ((i = prepared_index(s, sql)) >= 0 || s->nprepared == DB_PREPARED_MAX)
		return i;
	i = s->nprepared;
	snprintf(name, sizeof(name), "k%d", i);
	r = PQprepare(c, name, sql, n, NULL);
	if (!db_ok(r)) {
		PQclear(r);
		return -1;
	}
	PQclear(r);
	s->prepared[s->nprepared++] = sql;
	return i;
}

int db_pipeline_send(PGconn *c, int n, const struct db_stmt *stmts)
{
	int idx[DB_PIPELINE_MAX];

	if (n > DB_PIPELINE_MAX)
		return -1;
	for (int i = 0; i < n; i++) /* not in pipeline mode: PQprepare waits */
		idx[i] = prepare(c, stmts[i].sql, stmts[i].nparams);
	if (!PQenterPipelineMode(c))
		return -1;
	for (int i = 0; i < n; i++) {
		const struct db_stmt *st = &stmts[i];
		char name[24];
		int ok;

		snprintf(name, sizeof(name), "k%d", idx[i]);
		ok = idx[i] >= 0 ? PQsendQueryPrepared(c, name, st->nparams, st->params,
						       st->lengths, st->formats, st->binary)
				 : PQsendQueryParams(c, st->sql, st->nparams, NULL, st->params,
						     st->lengths, st->formats, st->binary);
		if (!ok)
			break;
	}
	/* whatever was sent is read back by db_pipeline_next either way */
	if (!PQpipelineSync(c)) {
		db_pipeline_end(c);
		return -1;
	}
	return 0;
}

PGresult *db_pipeline_next(PGconn *c)
{
	PGresult *r = PQgetResult(c), *extra;

	if (!r || PQresultStatus(r) == PGRES_PIPELINE_SYNC) { /* never sent */
		PQclear(r);
		return PQmakeEmptyPGresult(c, PGRES_FATAL_ERROR);
	}
	while ((extra = PQgetResult(c))) /* up to the NULL that ends the statement */
		PQclear(extra);
	return r;
}

void db_pipeline_end(PGconn *c)
{
	/* results not read yet, then the sync's, then out of pipeline mode */
	for (int nulls = 0; PQpipelineStatus(c) != PQ_PIPELINE_OFF;) {
		PGresult *r = PQgetResult(c);
		if (r) {
			nulls = 0;
			PQclear(r);
		} else if (PQexitPipelineMode(c) || ++nulls > 1) {
			break;
		}
	}
	/* broken: statements on it fail until db_get replaces it (the caller
	 * still holds c, to report the failure) */
	if (PQpipelineStatus(c) != PQ_PIPELINE_OFF && slot_of(c))
		slot_of(c)->stuck = 1;
}

PGresult *db_exec_batch(PGconn *c, int n, const struct db_stmt *stmts, int keep)
{
	PGresult *r[DB_PIPELINE_MAX] = {0}, *out = NULL;

	if (db_pipeline_send(c, n, stmts))
		return PQmakeEmptyPGresult(c, PGRES_FATAL_ERROR);
	for (int i = 0; i < n; i++)
		r[i] = db_pipeline_next(c);
	db_pipeline_end(c);
	for (int i = 0; i < n && !out; i++) /* the first failure, wherever it is */
		if (!db_ok(r[i]))
			out = r[i];
	if (!out)
		out = r[keep];
	for (int i = 0; i < n; i++)
		if (r[i] != out)
			PQclear(r[i]);
	return out;
}

static PGresult *exec_once(PGconn *c, const char *sql, int n, const char *const *params,
			   int binary)
{
	char name[24];
	int i = prepare(c, sql, n);

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
	if (!db_ok(r) && idle && slot_of(c) && PQstatus(c) == CONNECTION_BAD) {
		/* The server restarted since this connection was opened: one retry,
		 * on c reopened in place (the caller goes on using c). */
		PQclear(r);
		if (!slot_connect(slot_of(c)))
			return PQmakeEmptyPGresult(c, PGRES_FATAL_ERROR); /* c's error */
		r = exec_once(c, sql, n, params, binary);
		if (!r)
			r = PQmakeEmptyPGresult(c, PGRES_FATAL_ERROR);
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

struct db_stmt db_prefer_index_stmt(int on)
{
	static const char off[] = "SELECT set_config('enable_seqscan', 'off', false)";
	static const char reset[] = "RESET enable_seqscan";

	return (struct db_stmt){on ? off : reset, 0, NULL, 0, NULL, NULL};
}

struct db_stmt db_prefer_index_local_stmt(int generic)
{
	static const char off[] = "SELECT set_config('enable_seqscan', 'off', true)";
	static const char off_generic[] =
		"SELECT set_config('enable_seqscan', 'off', true),"
		" set_config('plan_cache_mode', 'force_generic_plan', true)";

	return (struct db_stmt){generic ? off_generic : off, 0, NULL, 0, NULL, NULL};
}

void db_prefer_index(PGconn *c, int on)
{
	PQclear(db_exec(c, db_prefer_index_stmt(on).sql, 0, NULL));
}

PGresult *db_exec_indexed(PGconn *c, const char *sql, int n, const char *const *params)
{
	const struct db_stmt st[3] = {db_prefer_index_stmt(1), {sql, n, params, 1, NULL, NULL},
				      db_prefer_index_stmt(0)};

	if (PQtransactionStatus(c) == PQTRANS_IDLE) { /* the pipeline's Sync resets it */
		const struct db_stmt local[2] = {db_prefer_index_local_stmt(0), st[1]};
		return db_exec_batch(c, 2, local, 1);
	}
	return db_exec_batch(c, 3, st, 1); /* one round trip */
}

int64_t db_int8(const PGresult *r, int row, int col)
{
	uint64_t v;
	memcpy(&v, PQgetvalue(r, row, col), sizeof(v));
	return (int64_t)be64toh(v);
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

int db_text(PGconn *c, const char *sql, int n, const char *const *params, struct buf *out,
	    const char *what)
{
	PGresult *r = db_exec(c, sql, n, params);
	int rc = 0;

	if (!db_ok(r)) {
		db_log_error(what, c, r);
		rc = -1;
	} else if (PQntuples(r) == 0) {
		rc = 1;
	} else {
		buf_puts(out, PQgetvalue(r, 0, 0));
	}
	PQclear(r);
	return rc;
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
