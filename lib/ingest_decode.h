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
	long job_id;     /* "job": {"id": N}, else 0 */
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

/*
 * A test named outside a run (a job, an agent's claim): {"suite", "params"}
 * and, with want_variant, "variant", checked by the rules of a run's test
 * and variant. Returns 0 with the canonical params (and variant) JSON
 * (malloc'd), or -1 with err naming the field under the path field
 * ("tests[2].params.x"). Unknown keys are not allowed to matter: ignored.
 */
int ingest_decode_test(json_t *obj, const char *field, int want_variant, char **params,
		       char **variant, struct decode_error *err);

/* The contract's name rule: 1-max of A-Za-z0-9 and the characters of extra
 * (suites, machines, run ids); 0 or -1. kperf-collect checks its flags by it. */
int ingest_check_pattern(const char *s, size_t max, const char *extra);
/* A full commit sha: 40 hex digits; 0 or -1. */
int ingest_check_hex40(const char *s);

/* Validate an ISO 8601 date-time (2020-06-16T10:00:00Z, offsets, fractions). 0 or -1. */
int iso8601_check(const char *s);

#endif
