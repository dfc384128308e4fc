/*
 * body.c - field checks of a JSON request body (see body.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/body.h"
#include "lib/buf.h"
#include "lib/kperf_limits.h"
#include "server/db/db.h"

json_t *body_object(struct request *rq, struct reply *rp, const char *const *known,
		    const char *what)
{
	json_error_t err;
	json_t *o = json_loadb(rq->body.data ? rq->body.data : "", rq->body.len,
			       JSON_REJECT_DUPLICATES, &err);
	const char *key;
	json_t *v;

	if (!o) {
		reply_error(rp, 400, "malformed", NULL, "line %d, column %d: %s", err.line,
			    err.column, err.text);
		return NULL;
	}
	if (!json_is_object(o)) {
		reply_error(rp, 400, "invalid", NULL, "the body must be a JSON object");
		json_decref(o);
		return NULL;
	}
	json_object_foreach(o, key, v) {
		int ok = 0;
		for (const char *const *k = known; *k && !ok; k++)
			ok = !strcmp(*k, key);
		if (!ok) {
			struct buf names = BUF_INIT;
			for (const char *const *k = known; *k; k++)
				buf_printf(&names, "%s%s", k == known ? "" : ", ", *k);
			reply_error(rp, 400, "invalid", key, "unknown key \"%.64s\": %s takes %s", key,
				    what, names.data);
			buf_release(&names);
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

int body_string(json_t *o, const char *key, size_t max, const char **out, struct reply *rp)
{
	json_t *v = json_object_get(o, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v) || json_string_length(v) < 1 || json_string_length(v) > max ||
	    strlen(json_string_value(v)) != json_string_length(v)) {
		reply_error(rp, 400, "invalid", key, "%s must be a string of 1-%zu bytes", key, max);
		return -1;
	}
	*out = json_string_value(v);
	return 1;
}

int body_long(json_t *o, const char *key, long min, long max, long *out, struct reply *rp)
{
	json_t *v = json_object_get(o, key);

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max) {
		reply_error(rp, 400, "invalid", key, "%s must be a whole number from %ld to %ld",
			    key, min, max);
		return -1;
	}
	*out = (long)json_integer_value(v);
	return 1;
}

int body_bool(json_t *o, const char *key, int *out, struct reply *rp)
{
	json_t *v = json_object_get(o, key);

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_boolean(v)) {
		reply_error(rp, 400, "invalid", key, "%s must be true or false", key);
		return -1;
	}
	*out = json_is_true(v);
	return 1;
}

int body_strings(json_t *o, const char *key, size_t max, size_t len, char **out,
		 struct reply *rp)
{
	json_t *v = json_object_get(o, key), *s;
	struct buf b = BUF_INIT;
	size_t i;

	*out = NULL;
	buf_puts(&b, "{");
	if (v && !json_is_null(v)) {
		if (!json_is_array(v) || json_array_size(v) > max) {
			reply_error(rp, 400, "invalid", key, "%s must be an array of at most %zu strings",
				    key, max);
			buf_release(&b);
			return -1;
		}
		json_array_foreach(v, i, s) {
			const char *t = json_string_value(s);
			if (!t || !*t || strlen(t) > len || strlen(t) != json_string_length(s)) {
				reply_error(rp, 400, "invalid", key,
					    "%s[%zu] must be a string of 1-%zu bytes", key, i, len);
				buf_release(&b);
				return -1;
			}
			buf_puts(&b, i ? ",\"" : "\"");
			for (; *t; t++) {
				if (*t == '"' || *t == '\\')
					buf_putc(&b, '\\');
				buf_putc(&b, *t);
			}
			buf_putc(&b, '"');
		}
	}
	buf_putc(&b, '}');
	*out = buf_detach(&b, NULL);
	return 0;
}

int body_email_ok(const char *s)
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

void body_reply_items(struct reply *rp, const char *items)
{
	json_t *a = json_loads(items, 0, NULL);
	struct buf out = BUF_INIT;

	buf_printf(&out, "{\"items\":%s,\"total\":%zu,\"limit\":%d,\"offset\":0}", items,
		   json_array_size(a), LIMIT_LIST_MAX);
	reply_json(rp, 200, out.data);
	json_decref(a);
	buf_release(&out);
}

void body_reply_list(struct reply *rp, int (*fn)(PGconn *c, struct buf *out), const char *what)
{
	struct buf items = BUF_INIT;
	PGconn *c = db_get();

	if (!c)
		reply_unavailable(rp);
	else if (fn(c, &items))
		reply_db_status(rp, 503, what);
	else
		body_reply_items(rp, items.data);
	buf_release(&items);
}
