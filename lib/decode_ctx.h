/*
 * decode_ctx.h - the machinery of the ingest contract's decoder (private to
 * api/ingest_decode*.c): the path of the value being checked, errors that
 * name it, the depth pre-scan before jansson, and the typed getters and
 * object and map walks the field rules are written with.
 */
#ifndef KPERF_DECODE_CTX_H
#define KPERF_DECODE_CTX_H

#include <jansson.h>
#include <stddef.h>

#include "lib/ingest_decode.h"

struct path {
	char s[DECODE_FIELD_MAX];
	size_t len;
};

struct ctx {
	struct path path;
	struct decode_error *err;
	json_t *ignored;
	size_t nvalues;
};

typedef int (*field_fn)(struct ctx *c, json_t *v);

struct field {
	const char *key;
	field_fn check;
};

size_t dc_push_key(struct path *p, const char *key);
size_t dc_push_index(struct path *p, size_t i);
void dc_pop(struct path *p, size_t old);
/* Fail at the current path: err gets 400 "invalid", the path, the message; -1. */
int dc_fail(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The depth pre-scan, then jansson (duplicate keys refused); NULL with err set. */
json_t *dc_parse(const char *body, size_t len, struct decode_error *err);
int dc_check_printable(const char *s, size_t min, size_t max);
int dc_want_string(struct ctx *c, json_t *v, size_t min, size_t max, const char **out);
int dc_want_integer(struct ctx *c, json_t *v, double min, double max);
/* Walk an object's keys: known ones checked, unknown ones removed and listed
 * in ignored; keys in required must be there. */
int dc_check_object(struct ctx *c, json_t *obj, const struct field *fields,
		    const char *const *required);
/* A map of name -> scalar, names by pattern (extra: the allowed punctuation). */
int dc_check_map(struct ctx *c, json_t *v, size_t keymax, const char *extra, int strings_only);
/* A canonical copy of a map: every value as a string, for trend keys. */
char *dc_canonical_map(json_t *v);

#endif
