/*
 * hostile.h - machinery of the hostile-request suites (test_hostile*.c):
 * one request sent exactly as written (raw target, any method, any header)
 * with libcurl, the check of one answer against a table row, and snapshots
 * of the row counts of every table a request could write.
 */
#ifndef KPERF_HOSTILE_H
#define KPERF_HOSTILE_H

#include <libpq-fe.h>
#include <stddef.h>

#include "tests/integration/harness.h"

/* One request. The target goes on the request line as is (no normalising,
 * no escaping): CURLOPT_REQUEST_TARGET with CURLOPT_PATH_AS_IS. */
struct hreq {
	const char *method;
	const char *target;
	const char *auth;           /* Authorization value ("Bearer x"); NULL: none */
	const char *content_type;   /* NULL: no Content-Type header at all */
	const char *const *headers; /* more "Name: value" lines, NULL-terminated; or NULL */
	const char *body;           /* NULL: no body */
	size_t len;                 /* body bytes (0: strlen(body)) */
	int chunked;                /* send the body with Transfer-Encoding: chunked */
};

/* What a row accepts. status lists the acceptable statuses (0 ends the list;
 * a 0 as the first entry never matches). code is the JSON "error" expected
 * ("a|b" accepts either); NULL when the answer need not be a kperf error
 * (libmicrohttpd answers 414/431 in HTML, a 200 carries data). field is the
 * expected "field": "" for null, NULL for "not checked". */
struct hexpect {
	int status[4];
	const char *code;
	const char *field;
};

/* Send q to k; r gets status (0 when no answer came), body and content type.
 * Never asserts: a refused or reset connection is an answer too. */
void hostile_send(const struct kperfd *k, const struct hreq *q, struct resp *r);

/* Check r against e, and what holds for every answer: a JSON answer parses
 * as JSON (UTF-8), no answer carries /etc/passwd, a token or SQL error text.
 * Every assertion message starts with name. Returns 1 when all held. */
int hostile_check(const char *name, const struct resp *r, const struct hexpect *e);

/* Expect GET /healthz to answer 200; when says at which point. */
void hostile_expect_healthy(const struct kperfd *k, const char *when);

/* "Bearer <token>" for the two test tokens. */
#define AUTH_COLLECTOR "Bearer " TOKEN_COLLECTOR
#define AUTH_ADMIN "Bearer " TOKEN_ADMIN
#define JSON_CT "application/json"

/* Row counts of the tables a request could write; a failing query (a table
 * dropped) fails the test. */
enum {
	CNT_RUN,
	CNT_RUN_VALID,
	CNT_SAMPLE,
	CNT_COMMITS,
	CNT_MACHINE,
	CNT_TEST,
	CNT_VARIANT,
	CNT_METRIC,
	CNT_SUBSCRIPTION,
	CNT_SUBSCRIPTION_ACTIVE,
	CNT_TOKEN,
	CNT_TOKEN_ACTIVE,
	CNT_DECISION_EVENT,
	CNT_SECRET,
	CNT_N
};

struct counts {
	long v[CNT_N];
};

/* Take a snapshot over c (a connection to the kperfd's database). */
void counts_take(PGconn *c, struct counts *out);

/* A delta that is not checked. */
#define ANY_DELTA (-999999)

/* Expect after - before == delta[i] for each table (ANY_DELTA: unchecked);
 * delta NULL means nothing may change. Returns 1 when all held. */
int counts_expect(const char *name, const struct counts *before, const struct counts *after,
                  const long *delta);

/* SQL-looking strings, each an attack on SQL built by pasting text: quote
 * and comment, tautology, a placeholder, UNION, quotes without spaces,
 * dollar quoting, backslash escapes, JSON-in-SQL, LIKE wildcards, a look-alike
 * apostrophe, NUL and invalid UTF-8. in_body: it can travel in JSON (invalid
 * UTF-8 cannot); in_query: used as a query value (%00 has its own rows). */
struct injection {
	const char *name; /* printable, for messages */
	const char *text;
	size_t len; /* bytes of text: one holds a NUL */
	int in_body, in_query;
};

extern const struct injection hostile_injections[];
extern const size_t hostile_ninjections;

/* 1 when the n bytes of s are all printable ASCII without space. */
int hostile_printable(const char *s, size_t n);
/* 1 when s (n bytes) is 1..max of A-Za-z0-9 and the characters in extra. */
int hostile_name(const char *s, size_t n, size_t max, const char *extra);

/* URL-escape s (every byte but A-Za-z0-9-._~); malloc'd. */
char *hostile_escape(const char *s);

#endif
