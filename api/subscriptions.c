/*
 * subscriptions.c - /api/v1/subscriptions (admin): who gets alert mail for
 * what; GET /api/v1/unsubscribe: the signed link in every mail, no login;
 * GET /api/v1/alerts (admin): the outbox, with failures and SMTP replies.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/db/db.h"
#include "lib/jsonw.h"
#include "lib/kperf_limits.h"
#include "lib/util.h"
#include "api/api.h"
#include "api/query.h"

#define SUB_FILES_MAX 100

static int in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return 1;
	return 0;
}

static int email_ok(const char *s)
{
	const char *at = strchr(s, '@');
	size_t n = strlen(s);
	if (n < 3 || n > 254 || !at || at == s || !at[1] || strchr(at + 1, '@'))
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == '<' || *s == '>' || *s == ',' || *s == '"' ||
		    (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

/* An optional string field: 0 (absent or null), 1 (*out set), -1 (answered 400). */
static int opt_string(json_t *body, const char *key, size_t max, const char **out,
		      struct reply *rp)
{
	json_t *v = json_object_get(body, key);
	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v) || json_string_length(v) < 1 || json_string_length(v) > max) {
		reply_error(rp, 400, "invalid", key, "%s must be a string of 1-%zu bytes", key, max);
		return -1;
	}
	*out = json_string_value(v);
	return 1;
}

/*
 * A subscription is stored unless the address (in any case) already has an
 * active one with the same filters (globs and verdicts as sets): then that
 * one is answered (200), so a repeated POST never doubles a reader's mail.
 * The address's lock makes two identical POSTs at once store one.
 */
static const char SQL_ADDRESS_LOCK[] =
	"SELECT pg_advisory_xact_lock(hashtext('kperf.subscription:' || lower($1)))";
static const char SQL_INSERT[] =
	"WITH n AS (SELECT $1::text AS email, $2::text AS focus, $3::text AS series,"
	"  $4::text AS suite, $5::text AS metric, $6::text AS metric_like, $7::text AS machine,"
	"  CASE WHEN $8::jsonb IS NULL THEN NULL"
	"   ELSE ARRAY(SELECT jsonb_array_elements_text($8::jsonb)) END AS files,"
	"  CASE WHEN $9::jsonb IS NULL THEN NULL"
	"   ELSE ARRAY(SELECT jsonb_array_elements_text($9::jsonb)) END AS files_like,"
	"  $10::float8 AS min_change_pct,"
	"  ARRAY(SELECT jsonb_array_elements_text($11::jsonb)) AS verdicts, $12::text AS delivery),"
	" old AS (SELECT s.id FROM subscription s, n WHERE s.unsubscribed_at IS NULL"
	"  AND lower(s.email) = lower(n.email) AND s.focus IS NOT DISTINCT FROM n.focus"
	"  AND s.series IS NOT DISTINCT FROM n.series AND s.suite IS NOT DISTINCT FROM n.suite"
	"  AND s.metric IS NOT DISTINCT FROM n.metric AND s.machine IS NOT DISTINCT FROM n.machine"
	"  AND s.min_change_pct IS NOT DISTINCT FROM n.min_change_pct AND s.delivery = n.delivery"
	"  AND (SELECT array_agg(DISTINCT x ORDER BY x) FROM unnest(s.files) x)"
	"   IS NOT DISTINCT FROM (SELECT array_agg(DISTINCT x ORDER BY x) FROM unnest(n.files) x)"
	"  AND (SELECT array_agg(DISTINCT x ORDER BY x) FROM unnest(s.verdicts) x)"
	"   = (SELECT array_agg(DISTINCT x ORDER BY x) FROM unnest(n.verdicts) x)"
	"  ORDER BY s.id LIMIT 1),"
	" ins AS (INSERT INTO subscription (email, focus, series, suite, metric, metric_like,"
	"  machine, files, files_like, min_change_pct, verdicts, delivery)"
	"  SELECT email, focus, series, suite, metric, metric_like, machine, files, files_like,"
	"  min_change_pct, verdicts, delivery FROM n WHERE NOT EXISTS (SELECT 1 FROM old)"
	"  RETURNING id)"
	" SELECT id, true FROM ins UNION ALL SELECT id, false FROM old";

#define SUB_JSON                                                                               \
	"jsonb_build_object('id', s.id, 'email', s.email, 'focus', s.focus, 'series', s.series," \
	" 'suite', s.suite, 'metric', s.metric, 'machine', s.machine, 'files', s.files,"         \
	" 'min_change_pct', s.min_change_pct, 'verdicts', s.verdicts, 'delivery', s.delivery,"   \
	" 'created_at', s.created_at, 'unsubscribed_at', s.unsubscribed_at)"

/* files: an array of globs, as given (*files) and as LIKE patterns
 * (*files_like), both JSON text to free; absent, NULL. 0, or -1 answered. */
static int read_files(json_t *body, char **files, char **files_like, struct reply *rp)
{
	json_t *v = json_object_get(body, "files");
	size_t i;
	json_t *f, *likes;

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v) || json_array_size(v) > SUB_FILES_MAX) {
		reply_error(rp, 400, "invalid", "files",
			    "files must be an array of at most %d globs", SUB_FILES_MAX);
		return -1;
	}
	likes = json_array();
	json_array_foreach(v, i, f) {
		struct buf b = BUF_INIT;
		if (!json_is_string(f) || !json_string_length(f) || json_string_length(f) > 4096) {
			char field[32];
			snprintf(field, sizeof(field), "files[%zu]", i);
			reply_error(rp, 400, "invalid", field, "a file glob must be a string");
			json_decref(likes);
			return -1;
		}
		query_glob_like(&b, json_string_value(f));
		json_array_append_new(likes, json_string(buf_str(&b)));
		buf_release(&b);
	}
	*files = jsonw_dump(v, 0);
	*files_like = jsonw_dump(likes, 0);
	json_decref(likes);
	return 0;
}

/* verdicts: a non-empty array of verdict names, as JSON text to free into
 * *vlist; absent, NULL. 0, or -1 answered. */
static int read_verdicts(json_t *body, char **vlist, struct reply *rp)
{
	static const char *const verdicts[] = {"regression", "improvement", "changed", NULL};
	json_t *v = json_object_get(body, "verdicts"), *x;
	size_t i;

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v) || !json_array_size(v)) {
		reply_error(rp, 400, "invalid", "verdicts", "verdicts must be a non-empty array");
		return -1;
	}
	json_array_foreach(v, i, x) {
		if (!json_is_string(x) || !in_list(json_string_value(x), verdicts)) {
			char field[32];
			snprintf(field, sizeof(field), "verdicts[%zu]", i);
			reply_error(rp, 400, "invalid", field,
				    "a verdict is regression, improvement or changed");
			return -1;
		}
	}
	*vlist = jsonw_dump(v, 0);
	return 0;
}

/* Store the subscription of SQL_INSERT's 12 params (or find its equal) and
 * answer it, 201 or 200, with a warning when catch_all (no filter). */
static void store(PGconn *c, const char *const *params, int catch_all, struct reply *rp)
{
	const struct db_stmt st[4] = {{"BEGIN", 0, NULL, 0, NULL, NULL},
				      {SQL_ADDRESS_LOCK, 1, params, 0, NULL, NULL},
				      {SQL_INSERT, 12, params, 0, NULL, NULL},
				      {"COMMIT", 0, NULL, 0, NULL, NULL}};
	PGresult *r = db_exec_batch(c, 4, st, 2);

	if (!db_ok(r) || PQntuples(r) != 1) {
		reply_db_error(rp, c, r, "storing the subscription");
	} else {
		const char *p1[1] = {PQgetvalue(r, 0, 0)};
		PGresult *one = db_exec(c, "SELECT " SUB_JSON "::text FROM subscription s WHERE id = $1",
					1, p1);
		if (db_ok(one) && PQntuples(one) == 1) {
			rp->status = strcmp(PQgetvalue(r, 0, 1), "t") ? 200 : 201;
			rp->content_type = "application/json";
			buf_puts(&rp->body, PQgetvalue(one, 0, 0));
			if (catch_all) {
				rp->body.len--;
				buf_puts(&rp->body, ",\"warning\":\"no filter: this subscription is a"
						    " catch-all, mailed every KPI and event change of"
						    " every machine and suite\"}");
			}
		} else {
			reply_db_error(rp, c, one, "reading the subscription");
		}
		PQclear(one);
	}
	PQclear(r);
}

void api_subscriptions_post(struct request *rq, struct reply *rp)
{
	static const char *const focuses[] = {"lru_lock", "mglru", NULL};
	static const char *const deliveries[] = {"immediate", "daily", NULL};
	static const char *const known[] = {"email",   "focus",	  "series",	    "suite",
					    "metric",  "machine", "files",	    "min_change_pct",
					    "verdicts", "delivery", NULL};
	const char *email, *focus, *series, *suite, *metric, *machine, *delivery;
	char *files = NULL, *files_like = NULL, *vlist = NULL;
	struct buf like = BUF_INIT;
	json_error_t err;
	json_t *body, *v;
	const char *key, *params[12];
	char minpct[40];
	PGconn *c;

	body = json_loadb(rq->body.data ? rq->body.data : "", rq->body.len,
			  JSON_REJECT_DUPLICATES, &err);
	if (!body || !json_is_object(body)) {
		reply_error(rp, 400, body ? "invalid" : "malformed", NULL,
			    body ? "the body must be a JSON object" : "line %d, column %d: %s",
			    err.line, err.column, err.text);
		goto out;
	}
	json_object_foreach(body, key, v) {
		if (!in_list(key, known)) {
			reply_error(rp, 400, "invalid", key,
				    "unknown key \"%.64s\": a subscription takes email, focus, series,"
				    " suite, metric, machine, files, min_change_pct, verdicts and"
				    " delivery",
				    key);
			goto out;
		}
	}
	if (opt_string(body, "email", 254, &email, rp) < 0)
		goto out;
	if (!email || !email_ok(email)) {
		reply_error(rp, 400, "invalid", "email", "email must be an address like a@b.org");
		goto out;
	}
	if (opt_string(body, "focus", 16, &focus, rp) < 0 ||
	    opt_string(body, "series", LIMIT_TEXT, &series, rp) < 0 ||
	    opt_string(body, "suite", LIMIT_SUITE_NAME, &suite, rp) < 0 ||
	    opt_string(body, "metric", LIMIT_METRIC_NAME, &metric, rp) < 0 ||
	    opt_string(body, "machine", LIMIT_MACHINE_NAME, &machine, rp) < 0 ||
	    opt_string(body, "delivery", 16, &delivery, rp) < 0)
		goto out;
	if (focus && !in_list(focus, focuses)) {
		reply_error(rp, 400, "invalid", "focus", "focus must be lru_lock or mglru");
		goto out;
	}
	if (delivery && !in_list(delivery, deliveries)) {
		reply_error(rp, 400, "invalid", "delivery", "delivery must be immediate or daily");
		goto out;
	}
	v = json_object_get(body, "min_change_pct");
	minpct[0] = '\0';
	if (v && !json_is_null(v)) {
		if (!json_is_number(v) || json_number_value(v) < 0 || json_number_value(v) > 1e6) {
			reply_error(rp, 400, "invalid", "min_change_pct",
				    "min_change_pct must be a number >= 0");
			goto out;
		}
		snprintf(minpct, sizeof(minpct), "%.17g", json_number_value(v));
	}
	if (read_files(body, &files, &files_like, rp) || read_verdicts(body, &vlist, rp))
		goto out;
	if (metric)
		query_glob_like(&like, metric);
	params[0] = email;
	params[1] = focus;
	params[2] = series;
	params[3] = suite;
	params[4] = metric;
	params[5] = metric ? buf_str(&like) : NULL;
	params[6] = machine;
	params[7] = files;
	params[8] = files_like;
	params[9] = minpct[0] ? minpct : NULL;
	params[10] = vlist ? vlist : "[\"regression\"]";
	params[11] = delivery ? delivery : "immediate";
	if (!(c = db_get())) {
		reply_unavailable(rp);
		goto out;
	}
	store(c, params, !focus && !series && !suite && !metric && !machine && !files && !minpct[0],
	      rp);
out:
	json_decref(body);
	buf_release(&like);
	free(files);
	free(files_like);
	free(vlist);
}

static const char SQL_LIST[] =
	"WITH f AS (SELECT s.id, " SUB_JSON " AS j FROM subscription s"
	" WHERE ($1::text IS NULL OR s.email = $1) AND s.unsubscribed_at IS NULL)"
	" SELECT (SELECT count(*) FROM f), coalesce((SELECT jsonb_agg(j ORDER BY id)"
	"  FROM (SELECT * FROM f ORDER BY id LIMIT $2 OFFSET $3) p), '[]')";

void api_subscriptions_list(struct request *rq, struct reply *rp)
{
	const char *filters[1] = {http_query(rq, "email")};

	api_list(rq, rp, SQL_LIST, 1, filters);
}

void api_subscription_delete(struct request *rq, struct reply *rp)
{
	const char *params[1] = {rq->arg};
	int64_t id;
	PGconn *c;
	PGresult *r;

	if (parse_int64(rq->arg, 1, INT64_MAX, &id)) {
		reply_error(rp, 404, "not_found", "id", "no subscription \"%s\"", rq->arg);
		return;
	}
	if (!(c = db_get())) {
		reply_unavailable(rp);
		return;
	}
	r = db_exec(c,
		    "UPDATE subscription SET unsubscribed_at = now() WHERE id = $1"
		    " AND unsubscribed_at IS NULL",
		    1, params);
	if (!db_ok(r))
		reply_db_error(rp, c, r, "deleting the subscription");
	else if (!strcmp(PQcmdTuples(r), "0"))
		reply_error(rp, 404, "not_found", "id", "no subscription %s", rq->arg);
	else
		reply_json(rp, 200, "{\"deleted\":true}");
	PQclear(r);
}

/* The link's token must equal the one computed with the database's secret
 * over its list of subscription ids ("7", or "3,7" for a message that served
 * several subscriptions of one address). */
static const char SQL_UNSUBSCRIBE[] =
	"UPDATE subscription s SET unsubscribed_at = coalesce(s.unsubscribed_at, now())"
	" FROM kperf_secret k WHERE s.id = ANY (string_to_array($1, ',')::bigint[])"
	" AND k.name = 'unsubscribe'"
	" AND left(encode(sha256(k.value || sha256(k.value || convert_to('unsubscribe:' || $1,"
	" 'UTF8'))), 'hex'), 32) = $2 RETURNING s.id";

/* "7" or "3,7": at most 64 positive ids, comma-separated. */
static int id_list_ok(const char *s)
{
	int n = 0;

	for (;;) {
		size_t len = strspn(s, "0123456789");
		char id[24];
		int64_t v;
		if (!len || len >= sizeof(id) || ++n > 64)
			return 0;
		snprintf(id, sizeof(id), "%.*s", (int)len, s);
		if (parse_int64(id, 1, INT64_MAX, &v))
			return 0;
		s += len;
		if (!*s)
			return 1;
		if (*s++ != ',')
			return 0;
	}
}

void api_unsubscribe(struct request *rq, struct reply *rp)
{
	const char *s = http_query(rq, "s"), *t = http_query(rq, "t");
	const char *params[2] = {s, t};
	PGconn *c;
	PGresult *r;

	if (!s || !t || !id_list_ok(s) || strlen(t) != 32) {
		reply_error(rp, 400, "invalid", "t", "this unsubscribe link is not valid");
		return;
	}
	if (!(c = db_get())) {
		reply_unavailable(rp);
		return;
	}
	r = db_exec(c, SQL_UNSUBSCRIBE, 2, params);
	if (!db_ok(r)) {
		reply_db_error(rp, c, r, "unsubscribing");
	} else if (PQntuples(r) == 0) {
		reply_error(rp, 403, "forbidden", "t", "this unsubscribe link is not valid");
	} else {
		rp->status = 200;
		rp->content_type = "text/html; charset=utf-8";
		buf_puts(&rp->body, "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
				    "<title>kperf: unsubscribed</title></head><body>"
				    "<p>You will get no more mail from the kperf subscriptions"
				    " of this link.</p>"
				    "</body></html>\n");
	}
	PQclear(r);
}

static const char SQL_ALERTS[] =
	"WITH f AS (SELECT a.id, jsonb_build_object('id', a.id, 'email', s.email,"
	"  'subscription', a.subscription_id,"
	"  'subscriptions', coalesce(a.subscription_ids, ARRAY[a.subscription_id]),"
	"  'merged_into', a.merged_into, 'commit', c.sha, 'kind', a.kind, 'state', a.state,"
	"  'due_at', a.due_at, 'attempts', a.attempts, 'last_error', a.last_error,"
	"  'subject', a.subject, 'message_id', a.message_id, 'sent_at', a.sent_at)"
	"  || CASE WHEN a.kind = 'robot' THEN jsonb_build_object('rcpt', a.rcpt, 'in_reply_to',"
	"   a.in_reply_to, 'plan_target', a.plan_target_id, 'robot_kind', a.robot_kind,"
	"   'released_at', a.released_at) ELSE '{}' END AS j"
	" FROM alert a LEFT JOIN subscription s ON s.id = a.subscription_id"
	" LEFT JOIN commits c ON c.id = a.commit_id WHERE ($1::text IS NULL OR a.state = $1))"
	" SELECT (SELECT count(*) FROM f), coalesce((SELECT jsonb_agg(j ORDER BY id DESC)"
	"  FROM (SELECT * FROM f ORDER BY id DESC LIMIT $2 OFFSET $3) p), '[]')";

void api_alerts_list(struct request *rq, struct reply *rp)
{
	const char *filters[1] = {http_query(rq, "state")};

	api_list(rq, rp, SQL_ALERTS, 1, filters);
}
