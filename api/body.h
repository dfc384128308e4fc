/*
 * body.h - checking a JSON request body field by field, for the handlers
 * that take an object: each helper answers a 400 naming the field and
 * returns -1 when the value is not what the field takes.
 */
#ifndef KPERF_API_BODY_H
#define KPERF_API_BODY_H

#include <jansson.h>
#include <stddef.h>

#include "server/http/http.h"

/* The body as an object, with no key outside known (NULL-ended); NULL answered. */
json_t *body_object(struct request *rq, struct reply *rp, const char *const *known,
		    const char *what);
/* An optional string of 1-max bytes: 0 absent or null, 1 set, -1 answered. */
int body_string(json_t *o, const char *key, size_t max, const char **out, struct reply *rp);
/* An optional whole number in [min, max]: 0 absent, 1 set, -1 answered. */
int body_long(json_t *o, const char *key, long min, long max, long *out, struct reply *rp);
/* An optional boolean: 0 absent, 1 set, -1 answered. */
int body_bool(json_t *o, const char *key, int *out, struct reply *rp);
/* An optional array of at most max strings of 1-len bytes: as a Postgres
 * text[] literal in *out (malloc'd, "{}" when absent). 0, or -1 answered. */
int body_strings(json_t *o, const char *key, size_t max, size_t len, char **out,
		 struct reply *rp);
/* A whole list (fn writes a JSON array's text): answered with
 * body_reply_items, or 503 saying what failed. */
void body_reply_list(struct reply *rp, int (*fn)(PGconn *c, struct buf *out), const char *what);

/* Answer 200 {"items": items, "total": its length, "limit", "offset": 0}
 * for a list given whole (items: a JSON array's text). */
void body_reply_items(struct reply *rp, const char *items);

/* An address like a@b.org, with no space, comma, quote or angle bracket. */
int body_email_ok(const char *s);

#endif
