/*
 * ingest_decode.h - the ingest contract's decoder and validator: request
 * body bytes in, validated runs (or commits) out, or the exact error the
 * client gets. Pure: no database, no HTTP; fuzzed and unit-tested alone.
 */
#ifndef KPERF_INGEST_DECODE_H
#define KPERF_INGEST_DECODE_H

#include <jansson.h>
#include <stddef.h>

#define DECODE_FIELD_MAX 1100
#define DECODE_IGNORED_MAX 100

struct decode_error {
	int status;                   /* HTTP status: 400 */
	const char *code;             /* "malformed" or "invalid" */
	char field[DECODE_FIELD_MAX]; /* "" stands for a null field */
	char message[512];
};

/* One validated run; every pointer lives until ingest_release. */
struct run_in {
	const char *run_id;
	char *doc;     /* the run as stored: compact JSON, unknown keys removed */
	char *machine; /* machine object JSON */
	char *commit;  /* commit description JSON: sha, parent, subject, ... release */
	char *params;  /* canonical test params: object of strings */
	char *variant; /* canonical variant: object of strings */
	const char *suite;
	int has_sha;     /* commit carries a sha (else only a release) */
	size_t nvalues; /* samples in the run */
	json_t *json;   /* the run object (borrowed from struct ingest's root) */
};

struct ingest {
	json_t *root;
	int batch;          /* body was {"runs": [...]} */
	size_t nruns;
	struct run_in *runs;
	size_t ncommits;    /* POST /api/v1/commits: commit description JSONs */
	char **commits;
	json_t *ignored;    /* array of field paths that were ignored */
};

/*
 * Decode a POST /api/v1/runs body of len bytes (need not be NUL-terminated).
 * Returns 0 and fills *in (release it with ingest_release), or -1 and fills
 * *err; *in is then empty and needs no release (releasing it is harmless).
 */
int ingest_decode_runs(const char *body, size_t len, struct ingest *in,
		       struct decode_error *err);

/* The same for POST /api/v1/commits: [{sha,...}, ...] or {"commits": [...]}. */
int ingest_decode_commits(const char *body, size_t len, struct ingest *in,
			  struct decode_error *err);

void ingest_release(struct ingest *in);

/* Validate an ISO 8601 date-time (2020-06-16T10:00:00Z, offsets, fractions). 0 or -1. */
int iso8601_check(const char *s);

#endif
