/*
 * ref.h - kernel references in the read API: a full or abbreviated sha, a
 * release, or a series (its last patch), optionally qualified with
 * `:key=value,...` naming variant knobs or test params.
 */
#ifndef KPERF_REF_H
#define KPERF_REF_H

#include <jansson.h>
#include <libpq-fe.h>

#include "server/http/http.h"

struct ref {
	char *text;       /* as given */
	char *kernel;     /* the part before ':' */
	json_t *qual;     /* qualifiers: object of strings (empty when none) */
	/* resolved by ref_resolve */
	char *commit_ids; /* bigint[] literal "{3,7}" */
	char *sha;        /* full sha of the (first) commit, or the release */
	char *subject;    /* NULL when unknown */
	int ncommits;
};

/*
 * Split text into kernel and qualifiers. Returns 0, or -1 after answering
 * 400 naming field (e.g. "base", "target[1]").
 */
int ref_parse(const char *text, struct ref *r, struct reply *rp, const char *field);

/*
 * Resolve r->kernel in the order of the read contract: full sha, unique
 * abbreviation of >= 7 hex digits, exact release, exact series name (its
 * last patch). Returns 0, or -1 after answering 404 (no match), 400 (an
 * ambiguous abbreviation, listing the candidates) or 503.
 */
int ref_resolve(PGconn *c, struct ref *r, struct reply *rp, const char *field);

void ref_release(struct ref *r);

#endif
