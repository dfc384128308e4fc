/*
 * token.c - token storage. Secrets carry 256 random bits, so a plain
 * SHA-256 (computed by PostgreSQL) is enough: there is nothing to brute-force.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "server/db/db.h"
#include "server/db/token.h"
#include "lib/util.h"

int token_well_formed(const char *s)
{
	size_t n = strlen(s);
	if (n < 16 || n > TOKEN_MAX)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
			return 0;
	return 1;
}

static const char SQL_VERIFY[] =
	"SELECT id, role, coalesce(array_to_string(machines, ','), '') FROM api_token"
	" WHERE hash = sha256(convert_to($1, 'UTF8')) AND revoked_at IS NULL";

int token_allows_machine(const char *machines, const char *machine)
{
	const char *p = machines;

	if (!machines || !*machines)
		return 1;
	while (*p) {
		char glob[TOKEN_MACHINES_MAX];
		size_t len = strcspn(p, ",");
		snprintf(glob, sizeof(glob), "%.*s", (int)len, p);
		if (!fnmatch(glob, machine, 0))
			return 1;
		p += len;
		p += *p == ',';
	}
	return 0;
}

/* "lkp-*,bdw-2s": globs of 1-64 of A-Za-z0-9._- and *?[]!, at most 32. */
static int machines_ok(const char *machines, char *err, size_t errlen)
{
	const char *p = machines;
	int n = 0;

	for (;;) {
		size_t len = strcspn(p, ",");
		if (!len || len > 64 || ++n > 32 || strspn(p, "abcdefghijklmnopqrstuvwxyz"
						       "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-*?[]!") < len) {
			snprintf(err, errlen,
				 "--machines must be up to 32 comma-separated globs of 1-64 of"
				 " A-Za-z0-9._-*?[]!, not \"%s\"", machines);
			return -1;
		}
		p += len;
		if (!*p)
			return 0;
		p++;
	}
}

int token_verify(PGconn *c, const char *token, long *id, char *role, char *machines,
		 PGresult **failed)
{
	const char *params[1] = {token};
	PGresult *r;
	int64_t v;

	*failed = NULL;
	if (!token_well_formed(token))
		return 1;
	r = db_exec(c, SQL_VERIFY, 1, params);
	if (!db_ok(r)) {
		*failed = r;
		return -1;
	}
	if (PQntuples(r) != 1 || parse_int64(PQgetvalue(r, 0, 0), 1, INT64_MAX, &v)) {
		PQclear(r);
		return 1;
	}
	*id = (long)v;
	snprintf(role, 16, "%s", PQgetvalue(r, 0, 1));
	snprintf(machines, TOKEN_MACHINES_MAX, "%s", PQgetvalue(r, 0, 2));
	PQclear(r);
	return 0;
}

static int check_name_role(const char *name, const char *role, char *err, size_t errlen)
{
	if (strcmp(role, "collector") && strcmp(role, "admin")) {
		snprintf(err, errlen, "role must be collector or admin, not \"%s\"", role);
		return -1;
	}
	if (!*name || strlen(name) > 64) {
		snprintf(err, errlen, "token name must be 1-64 characters");
		return -1;
	}
	return 0;
}

static int store(PGconn *c, const char *sql, const char *name, const char *role,
		 const char *secret, const char *machines, char *err, size_t errlen)
{
	const char *params[4] = {name, role, secret, machines};
	PGresult *r = db_exec(c, sql, 4, params);
	int rc = 0;

	if (!db_ok(r)) {
		const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
		if (state && !strcmp(state, "23505"))
			snprintf(err, errlen, "a token named \"%s\" exists already", name);
		else
			snprintf(err, errlen, "storing token \"%s\": %s", name,
				 PQresultErrorMessage(r));
		rc = -1;
	}
	PQclear(r);
	return rc;
}

int token_create(PGconn *c, const char *name, const char *role, const char *machines,
		 char *out, char *err, size_t errlen)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[32];
	size_t n = 0;

	if (check_name_role(name, role, err, errlen))
		return -1;
	if (machines && !*machines)
		machines = NULL;
	if (machines && machines_ok(machines, err, errlen))
		return -1;
	if (random_bytes(raw, sizeof(raw))) {
		snprintf(err, errlen, "no random bytes from the kernel");
		return -1;
	}
	n = (size_t)snprintf(out, TOKEN_MAX + 1, "kperf_");
	for (size_t i = 0; i < sizeof(raw); i++) {
		out[n++] = hex[raw[i] >> 4];
		out[n++] = hex[raw[i] & 15];
	}
	out[n] = '\0';
	return store(c,
		     "INSERT INTO api_token (name, role, hash, machines)"
		     " VALUES ($1, $2, sha256(convert_to($3, 'UTF8')), string_to_array($4, ','))",
		     name, role, out, machines, err, errlen);
}

int token_ensure(PGconn *c, const char *name, const char *role, const char *secret, char *err,
		 size_t errlen)
{
	if (check_name_role(name, role, err, errlen))
		return -1;
	if (!token_well_formed(secret)) {
		snprintf(err, errlen,
			 "token for \"%s\" must be 16-128 of A-Za-z0-9_- characters", name);
		return -1;
	}
	return store(c,
		     "INSERT INTO api_token (name, role, hash)"
		     " VALUES ($1, $2, sha256(convert_to($3, 'UTF8')))"
		     " ON CONFLICT (name) DO UPDATE SET role = EXCLUDED.role,"
		     " hash = EXCLUDED.hash, revoked_at = NULL, machines = $4::text[]",
		     name, role, secret, NULL, err, errlen);
}

int token_revoke(PGconn *c, const char *name, char *err, size_t errlen)
{
	const char *params[1] = {name};
	PGresult *r = db_exec(c,
			      "UPDATE api_token SET revoked_at = now()"
			      " WHERE name = $1 AND revoked_at IS NULL",
			      1, params);
	int rc;

	if (!db_ok(r)) {
		snprintf(err, errlen, "revoking \"%s\": %s", name, PQresultErrorMessage(r));
		PQclear(r);
		return -1;
	}
	rc = strcmp(PQcmdTuples(r), "0") ? 0 : 1;
	PQclear(r);
	return rc;
}

int token_list(PGconn *c, char *err, size_t errlen)
{
	PGresult *r = db_exec(c,
			      "SELECT name, role, coalesce(array_to_string(machines, ','), '*'),"
			      " to_char(created_at AT TIME ZONE 'UTC',"
			      " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
			      " coalesce(to_char(revoked_at AT TIME ZONE 'UTC',"
			      " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), '-')"
			      " FROM api_token ORDER BY name",
			      0, NULL);
	if (!db_ok(r)) {
		snprintf(err, errlen, "listing tokens: %s", PQresultErrorMessage(r));
		PQclear(r);
		return -1;
	}
	printf("%-32s %-10s %-21s %-21s %s\n", "NAME", "ROLE", "CREATED", "REVOKED", "MACHINES");
	for (int i = 0; i < PQntuples(r); i++)
		printf("%-32s %-10s %-21s %-21s %s\n", PQgetvalue(r, i, 0), PQgetvalue(r, i, 1),
		       PQgetvalue(r, i, 3), PQgetvalue(r, i, 4), PQgetvalue(r, i, 2));
	PQclear(r);
	return 0;
}
