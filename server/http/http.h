/*
 * http.h - the request and reply of one HTTP exchange, as handlers see them,
 * and the daemon around libmicrohttpd: limits, authentication, routing,
 * one log line per request.
 */
#ifndef KPERF_HTTP_H
#define KPERF_HTTP_H

#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"

struct MHD_Connection;
struct readcache_answer;
struct route;

struct request {
	struct MHD_Connection *conn;
	const char *method;
	const char *path;
	const struct route *route;
	const char *arg;   /* the path part matched by a route's '*' */
	struct buf body;
	int64_t t0;
	int too_large;
	int early_status;  /* error decided before the body was read */
	int responded;
	int status;
	size_t bytes;
	long token_id;     /* 0 when no token was presented */
	char role[16];
	char machines[1024]; /* the token's machine globs, comma-joined; "": any */
};

struct reply {
	int status;
	struct buf body;
	const char *content_type;
	const char *location;
	int retry_after;
	const char *cache_control;
	const char *etag;     /* static files and cached reads */
	char etag_buf[24];    /* a cached read's ETag, quoted */
	struct readcache_answer *cached; /* sent instead of body: the read cache's bytes */
	const char *encoding; /* "gzip" when the body is compressed */
	int vary_encoding;    /* the answer depends on Accept-Encoding */
	char lsn[32];         /* a write's WAL position (X-Kperf-LSN), with standbys */
};

/* The value of query parameter key, or NULL. Borrowed from the connection. */
const char *http_query(struct request *rq, const char *key);

/* Up to max values of a repeated query parameter; returns how many. */
int http_query_all(struct request *rq, const char *key, const char **out, int max);

/*
 * Read limit and offset per the read contract; on a bad value answers 400
 * naming the parameter and returns -1.
 */
int http_list_params(struct request *rq, struct reply *rp, long *limit, long *offset);

/* 1 when the client has closed its connection (a long poll stops waiting). */
int http_client_gone(struct request *rq);

/* Answer with a JSON body (copied). */
void reply_json(struct reply *rp, int status, const char *json);

/* Answer {"error": code, "field": field or null, "message": ...}; 503 gets Retry-After. */
void reply_error(struct reply *rp, int status, const char *code, const char *field,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Answer a failed database call: log the detail, send only the mapped status. */
void reply_db_error(struct reply *rp, PGconn *c, const PGresult *r, const char *what);
/* The same for a failure already logged, mapped to status by db_http_status. */
void reply_db_status(struct reply *rp, int status, const char *what);

/* Answer 503 because no database connection could be had. */
void reply_unavailable(struct reply *rp);

/* The error code word for an HTTP status (400 -> "invalid", 404 -> "not_found"). */
const char *http_error_code(int status);

/* Start the daemon on cfg.listen:cfg.port; returns the bound port or -1. */
int http_start(void);
void http_stop(void);

/* Called every ~0.1 s by the main thread: gives memory freed by computed
 * answers back to the system once reads have paused (0.2 s). */
void http_idle(void);

#endif
