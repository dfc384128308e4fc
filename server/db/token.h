/*
 * token.h - API tokens: random secrets handed out once, stored only as
 * SHA-256 hashes, each with a role (collector may write results, admin may
 * also manage). Used by the request path and by the `kperfd token` CLI.
 */
#ifndef KPERF_TOKEN_H
#define KPERF_TOKEN_H

#include <libpq-fe.h>
#include <stddef.h>

#define TOKEN_MAX 128
#define TOKEN_MACHINES_MAX 1024 /* the machine globs of a token, comma-joined */

/* 1 when s has the shape of a token ([A-Za-z0-9_-], 16 to TOKEN_MAX). */
int token_well_formed(const char *s);

/*
 * Look a presented token up. Returns 0 and fills *id, role (16 bytes) and
 * machines (TOKEN_MACHINES_MAX bytes: the globs it is bound to, comma-joined,
 * "" for any machine), 1 when it is unknown or revoked, -1 on a database
 * error (*r is then the failed result for the caller to report and PQclear;
 * NULL otherwise).
 */
int token_verify(PGconn *c, const char *token, long *id, char *role, char *machines,
		 PGresult **r);

/* 1 when machine is one the globs (token_verify's machines) allow. */
int token_allows_machine(const char *machines, const char *machine);

/* Create token NAME with role, bound to the machines globs ("lkp-*,bdw-2s";
 * NULL or "" for any machine); prints nothing. out gets the secret
 * (TOKEN_MAX + 1 bytes). Returns 0, or -1 with err set. */
int token_create(PGconn *c, const char *name, const char *role, const char *machines,
		 char *out, char *err, size_t errlen);

/* Ensure a token with this exact secret exists under name with role. 0 or -1. */
int token_ensure(PGconn *c, const char *name, const char *role, const char *secret, char *err,
		 size_t errlen);

/* Revoke by name: 0, 1 when no active token has that name, -1 on error. */
int token_revoke(PGconn *c, const char *name, char *err, size_t errlen);

/* Print name, role, machines, created, revoked of every token to stdout. 0 or -1. */
int token_list(PGconn *c, char *err, size_t errlen);

#endif
