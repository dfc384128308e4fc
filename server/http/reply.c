/*
 * reply.c - what a handler calls on its request and reply: the query
 * parameters (http_query, the list's limit and offset) and the answers
 * (reply_json, reply_error with the error code of a status, the database's
 * failures as 503, 409, 400 or 500). http.c sends the reply they fill.
 */
#include <microhttpd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "server/counters.h"
#include "server/db/db.h"
#include "server/http/http.h"
#include "lib/jsonw.h"
#include "lib/kperf_limits.h"
#include "lib/util.h"

const char *http_query(struct request *rq, const char *key)
{
	return MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, key);
}

struct query_iter {
	const char *key;
	const char **out;
	int max, n;
};

static enum MHD_Result query_each(void *cls, enum MHD_ValueKind kind, const char *key,
				  const char *value)
{
	struct query_iter *it = cls;
	(void)kind;
	if (value && !strcmp(key, it->key) && it->n < it->max)
		it->out[it->n++] = value;
	return MHD_YES;
}

int http_query_all(struct request *rq, const char *key, const char **out, int max)
{
	struct query_iter it = {key, out, max, 0};
	MHD_get_connection_values(rq->conn, MHD_GET_ARGUMENT_KIND, query_each, &it);
	return it.n;
}

int http_list_params(struct request *rq, struct reply *rp, long *limit, long *offset)
{
	const char *l = http_query(rq, "limit"), *o = http_query(rq, "offset");
	int64_t v;

	*limit = LIMIT_LIST_DEFAULT;
	*offset = 0;
	if (l) {
		if (parse_int64(l, 1, LIMIT_LIST_MAX, &v) || *l == '+' || *l == '-') {
			reply_error(rp, 400, "invalid", "limit",
				    "limit must be a decimal integer from 1 to %d", LIMIT_LIST_MAX);
			return -1;
		}
		*limit = (long)v;
	}
	if (o) {
		if (parse_int64(o, 0, INT32_MAX, &v) || *o == '+' || *o == '-') {
			reply_error(rp, 400, "invalid", "offset",
				    "offset must be a decimal integer >= 0");
			return -1;
		}
		*offset = (long)v;
	}
	return 0;
}

void reply_json(struct reply *rp, int status, const char *json)
{
	rp->status = status;
	buf_reset(&rp->body);
	buf_puts(&rp->body, json);
	rp->content_type = "application/json";
}

const char *http_error_code(int status)
{
	switch (status) {
	case 400:
		return "invalid";
	case 401:
		return "unauthorized";
	case 403:
		return "forbidden";
	case 404:
		return "not_found";
	case 405:
		return "method_not_allowed";
	case 409:
		return "conflict";
	case 413:
		return "too_large";
	case 415:
		return "unsupported_media_type";
	case 429:
		return "too_many_requests";
	case 503:
		return "unavailable";
	default:
		return "internal";
	}
}

void reply_error(struct reply *rp, int status, const char *code, const char *field,
		 const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rp->status = status;
	rp->content_type = "application/json";
	buf_reset(&rp->body);
	buf_puts(&rp->body, "{\"error\":");
	jsonw_string(&rp->body, code, strlen(code));
	buf_puts(&rp->body, ",\"field\":");
	if (field && *field)
		jsonw_string(&rp->body, field, strlen(field));
	else
		buf_puts(&rp->body, "null");
	buf_puts(&rp->body, ",\"message\":");
	jsonw_string(&rp->body, msg, strlen(msg));
	buf_puts(&rp->body, "}");
	if (status == 503)
		rp->retry_after = LIMIT_RETRY_AFTER_S;
	if (status == 429)
		rp->retry_after = LIMIT_AUTH_BLOCK_S;
}

void reply_unavailable(struct reply *rp)
{
	counters.db_unavailable++;
	reply_error(rp, 503, "unavailable", NULL, "the database is unavailable; retry later");
}

void reply_db_error(struct reply *rp, PGconn *c, const PGresult *r, const char *what)
{
	db_log_error(what, c, r);
	reply_db_status(rp, db_http_status(c, r), what);
}

void reply_db_status(struct reply *rp, int status, const char *what)
{
	if (status == 503)
		reply_unavailable(rp);
	else if (status == 409)
		reply_error(rp, 409, "conflict", NULL, "%s conflicts with stored data", what);
	else if (status == 400)
		reply_error(rp, 400, "invalid", NULL, "%s: a value is out of range", what);
	else
		reply_error(rp, 500, "internal", NULL, "%s failed; see the server log", what);
}
