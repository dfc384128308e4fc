/*
 * ref.c - REF parsing and resolution. Each resolution step is one
 * parameterised statement; the first step that matches decides.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "server/db/db.h"
#include "lib/util.h"
#include "api/query.h"
#include "api/ref.h"

int ref_parse(const char *text, struct ref *r, struct reply *rp, const char *field)
{
	const char *colon = strchr(text, ':');

	memset(r, 0, sizeof(*r));
	r->text = xstrdup(text);
	r->kernel = colon ? xstrndup(text, (size_t)(colon - text)) : xstrdup(text);
	r->qual = colon ? query_pairs(colon + 1) : json_object();
	if (!*r->kernel || strlen(r->kernel) > 256) {
		reply_error(rp, 400, "invalid", field, "a kernel ref must be 1-256 characters");
		return -1;
	}
	if (!r->qual) {
		reply_error(rp, 400, "invalid", field,
			    "qualifiers must read REF:key=value,key=value (keys A-Za-z0-9._-)");
		return -1;
	}
	return 0;
}

static int all_hex(const char *s, size_t min, size_t max)
{
	size_t n = strlen(s);
	if (n < min || n > max)
		return 0;
	for (; *s; s++)
		if (!isxdigit((unsigned char)*s))
			return 0;
	return 1;
}

static const char SQL_SHA[] = "SELECT id, sha, subject FROM commits WHERE sha = lower($1)";

static const char SQL_ABBREV[] =
	"SELECT id, sha, subject FROM commits WHERE starts_with(sha, lower($1))"
	" ORDER BY sha LIMIT 11";

static const char SQL_RELEASE[] =
	"SELECT c.id, coalesce(c.sha, c.release), c.subject FROM commits c"
	" WHERE c.release = $1 OR c.id IN (SELECT commit_id FROM run WHERE release = $1)"
	" ORDER BY c.sha IS NULL, c.id";

/* A tag as git describe names it (v6.4-rc4): the commit described so. */
static const char SQL_DESCRIBE[] =
	"SELECT c.id, coalesce(c.sha, c.release), c.subject FROM commits c WHERE c.describe = $1"
	" ORDER BY c.sha IS NULL, c.id LIMIT 1";

/* A series: its last patch, the one no other patch of it names as parent. */
static const char SQL_SERIES[] =
	"WITH s AS (SELECT * FROM commits WHERE series = $1 OR (series_name = $1 AND"
	"  series_version = (SELECT max(series_version) FROM commits WHERE series_name = $1)))"
	" SELECT id, coalesce(sha, release), subject FROM s"
	" WHERE NOT EXISTS (SELECT 1 FROM s s2 WHERE s2.parent_sha = s.sha)"
	" ORDER BY committed_at DESC NULLS LAST, id DESC LIMIT 1";

/* Run one step: -1 on a database error (answered), else the rows in *res. */
static int step(PGconn *c, const char *sql, const char *arg, PGresult **res, struct reply *rp)
{
	const char *params[1] = {arg};
	*res = db_exec(c, sql, 1, params);
	if (!db_ok(*res)) {
		reply_db_error(rp, c, *res, "resolving a ref");
		PQclear(*res);
		*res = NULL;
		return -1;
	}
	return 0;
}

static void take(struct ref *r, PGresult *res)
{
	struct buf ids = BUF_INIT;

	buf_putc(&ids, '{');
	for (int i = 0; i < PQntuples(res); i++)
		buf_printf(&ids, "%s%s", i ? "," : "", PQgetvalue(res, i, 0));
	buf_putc(&ids, '}');
	r->commit_ids = buf_detach(&ids, NULL);
	r->ncommits = PQntuples(res);
	r->sha = xstrdup(PQgetvalue(res, 0, 1));
	r->subject = PQgetisnull(res, 0, 2) ? NULL : xstrdup(PQgetvalue(res, 0, 2));
}

int ref_resolve(PGconn *c, struct ref *r, struct reply *rp, const char *field)
{
	static const char *const steps[] = {SQL_RELEASE, SQL_DESCRIBE, SQL_SERIES};
	PGresult *res = NULL;

	if (all_hex(r->kernel, 40, 40)) {
		if (step(c, SQL_SHA, r->kernel, &res, rp))
			return -1;
		if (PQntuples(res) == 1)
			goto found;
		PQclear(res);
	} else if (all_hex(r->kernel, 7, 39)) {
		if (step(c, SQL_ABBREV, r->kernel, &res, rp))
			return -1;
		if (PQntuples(res) == 1)
			goto found;
		if (PQntuples(res) > 1) {
			struct buf list = BUF_INIT;
			for (int i = 0; i < PQntuples(res) && i < 10; i++)
				buf_printf(&list, "%s%s", i ? ", " : "", PQgetvalue(res, i, 1));
			reply_error(rp, 400, "invalid", field,
				    "\"%s\" is ambiguous; candidates: %s%s", r->kernel,
				    buf_str(&list), PQntuples(res) > 10 ? ", ..." : "");
			buf_release(&list);
			PQclear(res);
			return -1;
		}
		PQclear(res);
	}
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (step(c, steps[i], r->kernel, &res, rp))
			return -1;
		if (PQntuples(res) >= 1)
			goto found;
		PQclear(res);
	}
	if (all_hex(r->kernel, 1, 6))
		reply_error(rp, 400, "invalid", field,
			    "\"%s\" is too short for a sha: an abbreviation needs 7 or more hex"
			    " digits",
			    r->kernel);
	else
		reply_error(rp, 404, "not_found", field,
			    "no commit, release, tag or series matches \"%s\"", r->kernel);
	return -1;
found:
	take(r, res);
	PQclear(res);
	return 0;
}

void ref_release(struct ref *r)
{
	free(r->text);
	free(r->kernel);
	json_decref(r->qual);
	free(r->commit_ids);
	free(r->sha);
	free(r->subject);
	memset(r, 0, sizeof(*r));
}
