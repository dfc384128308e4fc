/*
 * http.c - libmicrohttpd glue. Request stages: headers (route, content
 * type, declared length, token: rejected before any body byte is kept),
 * body (appended up to the limit, then discarded), answer (the handler),
 * completion (one log line, memory freed in one place).
 */
#include <arpa/inet.h>
#include <malloc.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "server/config.h"
#include "server/counters.h"
#include "server/db/db.h"
#include "server/http/http.h"
#include "lib/kperf_limits.h"
#include "server/reads/readcache.h"
#include "server/decide/regress.h"
#include "server/http/route.h"
#include "server/http/throttle.h"
#include "server/db/token.h"
#include "lib/util.h"

struct counters counters;
const long counters_bucket_us[COUNTERS_BUCKETS] = {1000,   5000,   10000,   25000,  50000,
						   100000, 250000, 500000, 1000000, -1};
static struct MHD_Daemon *daemon_handle;

/*
 * Computing an answer frees megabytes of small blocks (results, rows) around
 * blocks that live on (answers kept in the read cache). Those pages are given
 * back once reads have stopped for TRIM_IDLE_US (http_idle): else RSS wanders
 * by several megabytes from one burst of reads to the next (27-32 MB over six
 * rounds; 26.4 MB flat with the trim). Trimmed after every computed answer,
 * the next one faulted the pages in again: 379 page faults and ~0.5 ms of a
 * 2,000-point trend's 4 ms of CPU. 0: nothing to give back.
 */
#define TRIM_IDLE_US 200000
static _Atomic int64_t trim_after;

/* libmicrohttpd is done with a response sent from the read cache. */
static void release_cached(void *cls)
{
	readcache_release(cls);
}

static enum MHD_Result send_reply(struct request *rq, struct reply *rp)
{
	struct MHD_Response *resp;
	enum MHD_Result rc;
	char *data;
	size_t len;
	char num[16];

	if (rp->cached) {
		const char *bytes = readcache_body(rp->cached, &len);
		/* not const in libmicrohttpd's prototype; it only reads the bytes */
		resp = MHD_create_response_from_buffer_with_free_callback_cls(
			len, (void *)bytes, release_cached, rp->cached);
		if (!resp)
			readcache_release(rp->cached);
		rp->cached = NULL; /* the response holds the reference now */
		if (!resp)
			return MHD_NO;
	} else {
		data = buf_detach(&rp->body, &len);
		resp = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
		if (!resp) {
			free(data);
			return MHD_NO;
		}
	}
	if (rp->content_type)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, rp->content_type);
	if (rp->location)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, rp->location);
	if (rp->retry_after) {
		snprintf(num, sizeof(num), "%d", rp->retry_after);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, num);
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
				rp->cache_control ? rp->cache_control : "no-store");
	if (rp->etag)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, rp->etag);
	if (rp->encoding)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, rp->encoding);
	if (rp->vary_encoding)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, "Accept-Encoding");
	/* no inline script or style, nothing from other origins */
	MHD_add_response_header(resp, "Content-Security-Policy",
				"default-src 'self'; script-src 'self'; style-src 'self';"
				" img-src 'self' data:; object-src 'none'; base-uri 'none';"
				" frame-ancestors 'none'; form-action 'self'");
	if (rp->lsn[0]) /* read-your-writes: the client sends it back on its reads */
		MHD_add_response_header(resp, "X-Kperf-LSN", rp->lsn);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(resp, "X-Frame-Options", "DENY");
	rq->status = rp->status;
	rq->bytes = len;
	rq->responded = 1;
	rc = MHD_queue_response(rq->conn, (unsigned int)rp->status, resp);
	MHD_destroy_response(resp);
	return rc;
}

static enum MHD_Result send_error(struct request *rq, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static enum MHD_Result send_error(struct request *rq, int status, const char *fmt, ...)
{
	struct reply rp = {0};
	char msg[512];
	va_list ap;
	enum MHD_Result rc;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	reply_error(&rp, status, http_error_code(status), NULL, "%s", msg);
	rc = send_reply(rq, &rp);
	buf_release(&rp.body);
	return rc;
}

static int content_type_json(struct request *rq)
{
	const char *ct = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_CONTENT_TYPE);
	size_t n = strlen("application/json");

	if (!ct || strncasecmp(ct, "application/json", n))
		return 0;
	return ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ';
}

int http_client_gone(struct request *rq)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(rq->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	char c;

	/* readable with nothing to read: the peer's FIN */
	return ci && recv(ci->connect_fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

/* The declared body size: 0 and *len set, 1 when none was declared, -1 when unreadable. */
static int content_length(struct request *rq, int64_t *len)
{
	const char *cl = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (!cl)
		return 1;
	return parse_int64(cl, 0, INT64_MAX, len);
}

/* The token check itself: 0 when allowed, else the HTTP status. */
static int authenticate_token(struct request *rq, int *db_failed)
{
	const char *h = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_AUTHORIZATION);
	PGresult *r = NULL;
	PGconn *c;
	int rc;

	*db_failed = 0;
	if (!h || strncasecmp(h, "Bearer ", 7))
		return 401;
	h += 7;
	while (*h == ' ')
		h++;
	if (!*h)
		return 401; /* "Bearer " and nothing: no token at all */
	c = db_get();
	if (!c) {
		*db_failed = 1;
		return 503;
	}
	rc = token_verify(c, h, &rq->token_id, rq->role, rq->machines, &r);
	if (rc < 0) {
		db_log_error("token lookup", c, r);
		PQclear(r);
		*db_failed = 1;
		return 503;
	}
	if (rc > 0)
		return 403;
	if (rq->route->auth == AUTH_ADMIN && strcmp(rq->role, "admin"))
		return 403;
	return 0;
}

/* The client's address: the peer, or the last X-Forwarded-For hop when the
 * peer is a configured proxy. */
static void client_addr(struct request *rq, char *out, size_t cap)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(rq->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const char *xff;

	snprintf(out, cap, "?");
	if (ci && ci->client_addr) {
		const struct sockaddr *sa = ci->client_addr;
		if (sa->sa_family == AF_INET)
			inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out,
				  (socklen_t)cap);
		else if (sa->sa_family == AF_INET6)
			inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out,
				  (socklen_t)cap);
	}
	if (!cfg.trusted_proxies)
		return;
	{
		size_t n = strlen(out);
		const char *p = cfg.trusted_proxies;
		int trusted = 0;
		while (*p && !trusted) {
			size_t len = strcspn(p, ", ");
			trusted = len == n && !strncmp(p, out, n);
			p += len;
			p += strspn(p, ", ");
		}
		if (!trusted)
			return;
	}
	xff = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "X-Forwarded-For");
	if (xff && *xff) {
		const char *last = strrchr(xff, ',');
		last = last ? last + 1 : xff;
		while (*last == ' ')
			last++;
		snprintf(out, cap, "%.*s", (int)strcspn(last, " "), last);
	}
}

/* Decide authentication: 0 when allowed, else the HTTP status to answer. */
static int authenticate(struct request *rq, int *db_failed)
{
	char addr[64];
	int rc;

	client_addr(rq, addr, sizeof(addr));
	if (throttle_blocked(addr))
		return 429;
	rc = authenticate_token(rq, db_failed);
	if (rc == 401 || rc == 403)
		throttle_fail(addr);
	return rc;
}

static enum MHD_Result send_early(struct request *rq, int status)
{
	switch (status) {
	case 401:
		return send_error(rq, 401, "this request needs Authorization: Bearer <token>");
	case 403:
		return send_error(rq, 403, "the token is unknown, revoked or lacks the role");
	case 413:
		return send_error(rq, 413, "the body exceeds the limit of %ld bytes",
				  cfg.body_limit);
	case 415:
		return send_error(rq, 415, "the body must be Content-Type: application/json");
	case 404:
		return send_error(rq, 404, "no such resource: %s", rq->path);
	case 405:
		return send_error(rq, 405, "method %s is not allowed here", rq->method);
	case 429:
		return send_error(rq, 429, "too many failed authentications; retry later");
	case 503:
		counters.db_unavailable++;
		return send_error(rq, 503, "the database is unavailable; retry later");
	default:
		return send_error(rq, status, "request refused");
	}
}

/* First call: everything that can be decided from the request line and headers. */
static void on_headers(struct request *rq)
{
	int path_known = 0, db_failed = 0;
	int64_t len;

	rq->route = route_match(rq->method, rq->path, &rq->arg, &path_known);
	if (!rq->route) {
		rq->early_status = path_known ? 405 : 404;
		return;
	}
	if (rq->route->json_body) {
		if (content_length(rq, &len) == 0 && len > cfg.body_limit) {
			if (len - cfg.body_limit > (int64_t)LIMIT_DRAIN_BYTES) {
				rq->early_status = 413; /* answered now, the connection closed */
				return;
			}
			rq->too_large = 1; /* read and dropped, then 413 (keep-alive kept) */
		}
		if (!content_type_json(rq)) {
			rq->early_status = 415;
			return;
		}
	}
	if (rq->route->auth != AUTH_PUBLIC)
		rq->early_status = authenticate(rq, &db_failed);
}

/* The read cache's key of a request: its path and query arguments in order,
 * each length-prefixed so no decoded value can forge another key. */
static enum MHD_Result key_each(void *cls, enum MHD_ValueKind kind, const char *key,
				const char *value)
{
	struct buf *b = cls;
	(void)kind;
	buf_printf(b, "&%zu:%s", strlen(key), key);
	if (value)
		buf_printf(b, "=%zu:%s", strlen(value), value);
	return MHD_YES;
}

/*
 * Run the handler; for a cached route, answer from the read cache when the
 * database has not changed since the stored answer was read (readcache.h),
 * else store the new answer. Either way the answer carries an ETag and a
 * request whose If-None-Match holds it gets 304 without a body.
 */
static void answer(struct request *rq, struct reply *rp)
{
	char snap[READCACHE_SNAPSHOT_MAX];
	struct buf key = BUF_INIT;
	const char *inm;
	char *data;
	size_t len;
	PGconn *c;

	if (!rq->route->cached || !(c = db_get()) || readcache_snapshot(c, snap)) {
		rq->route->fn(rq, rp);
		return;
	}
	buf_printf(&key, "%zu:%s", strlen(rq->path), rq->path);
	MHD_get_connection_values(rq->conn, MHD_GET_ARGUMENT_KIND, key_each, &key);
	rp->cached = readcache_get(buf_str(&key), snap);
	if (!rp->cached) {
		rq->route->fn(rq, rp);
		if (rp->status != 200) {
			buf_release(&key);
			return;
		}
		data = buf_detach(&rp->body, &len);
		rp->cached = readcache_put(buf_str(&key), snap, rp->content_type, data, len);
		trim_after = now_us() + TRIM_IDLE_US;
	}
	buf_release(&key);
	rp->status = 200;
	rp->content_type = readcache_content_type(rp->cached);
	snprintf(rp->etag_buf, sizeof(rp->etag_buf), "\"%016llx\"",
		 (unsigned long long)readcache_etag(rp->cached));
	rp->etag = rp->etag_buf;
	rp->cache_control = "no-cache"; /* browsers keep it and revalidate by ETag */
	inm = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
	if (inm && strstr(inm, rp->etag_buf)) {
		rp->status = 304;
		readcache_release(rp->cached);
		rp->cached = NULL;
	}
}

static int is_read(const struct request *rq)
{
	return !strcmp(rq->method, "GET") || !strcmp(rq->method, "HEAD");
}

/* GETs may be answered by a hot standby (KPERF_READ_DATABASE_URL), once it
 * has replayed the client's own last write (its X-Kperf-LSN). */
static void reads_to_standby(struct request *rq)
{
	const char *lsn = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "X-Kperf-LSN");
	size_t a = lsn ? strspn(lsn, "0123456789ABCDEFabcdef") : 0;

	if (lsn && !(a >= 1 && a <= 8 && lsn[a] == '/' &&
		     strspn(lsn + a + 1, "0123456789ABCDEFabcdef") == strlen(lsn + a + 1) &&
		     strlen(lsn + a + 1) >= 1 && strlen(lsn + a + 1) <= 8))
		lsn = NULL; /* not a WAL position: read as if none was given */
	db_reading(is_read(rq), lsn);
}

/* The primary's WAL position after a write, for the answer's X-Kperf-LSN. */
static void commit_position(struct reply *rp)
{
	PGconn *c = db_get();
	PGresult *r = c ? db_exec(c, "SELECT pg_current_wal_lsn()::text", 0, NULL) : NULL;

	if (r && db_ok(r) && PQntuples(r) == 1)
		snprintf(rp->lsn, sizeof(rp->lsn), "%s", PQgetvalue(r, 0, 0));
	PQclear(r);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size,
				  void **req_cls)
{
	struct request *rq = *req_cls;
	struct reply rp = {0};
	enum MHD_Result rc;

	(void)cls;
	(void)version;
	if (!rq) {
		rq = xcalloc(1, sizeof(*rq));
		rq->conn = conn;
		rq->method = method;
		rq->path = url;
		rq->t0 = now_us();
		*req_cls = rq;
		reads_to_standby(rq);
		on_headers(rq);
		db_release(); /* not held while the body arrives */
		/*
		 * Refusals of a request with a body go out now, so the client stops
		 * sending; everything else waits for the next call (a response
		 * queued here would cost the connection its keep-alive).
		 */
		if (rq->early_status && rq->route && rq->route->json_body)
			return send_early(rq, rq->early_status);
		return MHD_YES;
	}
	if (*upload_data_size) {
		size_t n = *upload_data_size;
		*upload_data_size = 0;
		if (rq->early_status || rq->too_large)
			return MHD_YES;
		if (rq->body.len + n > (size_t)cfg.body_limit) {
			rq->too_large = 1; /* keep reading, keep nothing */
			buf_release(&rq->body);
			return MHD_YES;
		}
		buf_append(&rq->body, upload_data, n);
		return MHD_YES;
	}
	if (rq->responded)
		return MHD_YES;
	if (rq->early_status)
		return send_early(rq, rq->early_status);
	if (rq->too_large)
		return send_early(rq, 413);
	rp.status = 200;
	reads_to_standby(rq);
	answer(rq, &rp);
	if (!is_read(rq) && rp.status < 300 && db_has_standby())
		commit_position(&rp);
	db_release();
	rc = send_reply(rq, &rp);
	buf_release(&rp.body);
	return rc;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct request *rq = *req_cls;
	int64_t us;

	(void)cls;
	(void)conn;
	if (!rq)
		return;
	us = now_us() - rq->t0;
	if (rq->status >= 100 && rq->status < 600) {
		counters.requests_by_class[rq->status / 100]++;
		if (rq->route && rq->route - routes < COUNTERS_ROUTES)
			counters.route_requests[rq->route - routes][rq->status / 100]++;
	}
	for (int b = 0; b < COUNTERS_BUCKETS; b++) {
		if (counters_bucket_us[b] < 0 || us <= counters_bucket_us[b]) {
			counters.latency_bucket[b]++;
			break;
		}
	}
	counters.request_us_total += (unsigned long)us;
	log_info("%s %s %d %zu %ldus%s", rq->method, rq->path, rq->status, rq->bytes, (long)us,
		 toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " aborted");
	buf_release(&rq->body);
	free(rq);
	*req_cls = NULL;
}

/*
 * Percent-decoding of paths and query values, in place. "%00" stays as it
 * is: a decoded NUL would cut the C string the rest of kperfd sees, so
 * "/static/a.html%00.png" would serve a.html and "limit=10%00x" would pass.
 */
static size_t on_unescape(void *cls, struct MHD_Connection *conn, char *s)
{
	char *out = s;
	(void)cls;
	(void)conn;
	for (const char *in = s; *in;) {
		int hi, lo;
		if (in[0] == '%' && (hi = hex_digit(in[1])) >= 0 && (lo = hex_digit(in[2])) >= 0 &&
		    (hi || lo)) {
			*out++ = (char)(hi * 16 + lo);
			in += 3;
		} else {
			*out++ = *in++;
		}
	}
	*out = '\0';
	return (size_t)(out - s);
}

static void on_mhd_error(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	log_error("http: %s", msg);
}

int http_start(void)
{
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
	struct sockaddr *sa;
	const union MHD_DaemonInfo *info;
	long threads = cfg.threads;

	memset(&sin, 0, sizeof(sin));
	memset(&sin6, 0, sizeof(sin6));
	if (inet_pton(AF_INET, cfg.listen, &sin.sin_addr) == 1) {
		sin.sin_family = AF_INET;
		sin.sin_port = htons((uint16_t)cfg.port);
		sa = (struct sockaddr *)&sin;
	} else if (inet_pton(AF_INET6, cfg.listen, &sin6.sin6_addr) == 1) {
		sin6.sin6_family = AF_INET6;
		sin6.sin6_port = htons((uint16_t)cfg.port);
		sa = (struct sockaddr *)&sin6;
	} else {
		log_error("listen address \"%s\" is not an IPv4 or IPv6 address", cfg.listen);
		return -1;
	}
	/*
	 * A thread per connection, so a slow request (a 5,000-metric compare) or
	 * a transaction waiting for its group commit never stalls the other
	 * connections; PostgreSQL work is bounded by the connection pool instead:
	 * KPERF_THREADS requests use the database at once (four per core: they
	 * mostly wait for it), plus one connection each for the worker threads
	 * (the mailer and the decision workers).
	 */
	if (threads <= 0)
		threads = 4 * sysconf(_SC_NPROCESSORS_ONLN);
	if (threads <= 0)
		threads = 4;
	if (threads > LIMIT_THREADS_MAX)
		threads = LIMIT_THREADS_MAX;
	db_pool_size((int)threads + 1 + REGRESS_WORKERS);
	daemon_handle = MHD_start_daemon(
		MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
			MHD_USE_ERROR_LOG | (sa->sa_family == AF_INET6 ? MHD_USE_IPv6 : 0),
		(uint16_t)cfg.port, NULL, NULL, on_request, NULL, MHD_OPTION_EXTERNAL_LOGGER,
		on_mhd_error, NULL, MHD_OPTION_SOCK_ADDR, sa, MHD_OPTION_CONNECTION_LIMIT,
		(unsigned int)LIMIT_CONNECTIONS, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
		(unsigned int)LIMIT_CONNECTIONS_PER_IP, MHD_OPTION_CONNECTION_TIMEOUT,
		(unsigned int)LIMIT_CONNECTION_TIMEOUT_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
		(size_t)LIMIT_CONNECTION_MEMORY, MHD_OPTION_THREAD_STACK_SIZE,
		(size_t)LIMIT_THREAD_STACK, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
		MHD_OPTION_UNESCAPE_CALLBACK, on_unescape, NULL, MHD_OPTION_END);
	if (!daemon_handle) {
		log_error("cannot listen on %s:%ld", cfg.listen, cfg.port);
		return -1;
	}
	info = MHD_get_daemon_info(daemon_handle, MHD_DAEMON_INFO_BIND_PORT);
	log_info("listening on http://%s:%u, a thread per connection, %ld database connections",
		 cfg.listen, info ? info->port : 0, threads + 1 + REGRESS_WORKERS);
	return info ? info->port : -1;
}

void http_idle(void)
{
	int64_t t = trim_after;

	if (t && now_us() >= t && atomic_compare_exchange_strong(&trim_after, &t, 0))
		malloc_trim(0);
}

void http_stop(void)
{
	if (daemon_handle)
		MHD_stop_daemon(daemon_handle);
	daemon_handle = NULL;
}
