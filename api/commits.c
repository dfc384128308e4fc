/*
 * commits.c - /api/v1/commits: kernel commits described ahead of results
 * (sha, parent, subject, series, files...), and the list with parents.
 */
#include <stdio.h>
#include <stdlib.h>

#include "server/db/db.h"
#include "lib/kperf_limits.h"
#include "api/api.h"
#include "api/decode_gate.h"
#include "lib/ingest_decode.h"
#include "api/store.h"

void api_commits_post(struct request *rq, struct reply *rp)
{
	struct decode_error err;
	struct ingest in;
	size_t gate;
	PGresult *failed = NULL;
	PGconn *c = NULL;
	int ok = 0;

	gate = decode_gate_enter(rq->body.len);
	if (ingest_decode_commits(rq->body.data ? rq->body.data : "", rq->body.len, &in, &err)) {
		decode_gate_leave(gate);
		reply_error(rp, err.status, err.code, err.field, "%s", err.message);
		return;
	}
	buf_release(&rq->body); /* the decoded tree holds what is needed */
	for (int attempt = 0; attempt < LIMIT_TX_RETRIES && !ok; attempt++) {
		PQclear(failed);
		failed = NULL;
		if (!(c = db_get()))
			break;
		failed = db_exec(c, "BEGIN", 0, NULL);
		if (!db_ok(failed))
			goto retry;
		PQclear(failed);
		failed = NULL;
		for (size_t i = 0; i < in.ncommits; i++)
			if (!store_commit(c, in.commits[i], 1, &failed))
				goto retry;
		failed = db_exec(c, "COMMIT", 0, NULL);
		if (!db_ok(failed))
			goto retry;
		ok = 1;
		break;
retry:
		if (PQstatus(c) == CONNECTION_OK)
			PQclear(PQexec(c, "ROLLBACK"));
		if (!db_retryable(c, failed))
			break;
	}
	if (!c) {
		reply_unavailable(rp);
	} else if (!ok) {
		reply_db_error(rp, c, failed, "storing commits");
	} else {
		rp->status = 201;
		rp->content_type = "application/json";
		buf_printf(&rp->body, "{\"stored\":%zu", in.ncommits);
		if (json_array_size(in.ignored)) {
			char *s = json_dumps(in.ignored, JSON_COMPACT);
			buf_printf(&rp->body, ",\"ignored\":%s", s);
			free(s);
		}
		buf_putc(&rp->body, '}');
	}
	PQclear(failed);
	ingest_release(&in);
	decode_gate_leave(gate);
}

static const char SQL_COMMITS[] =
	"WITH f AS (SELECT c.id, c.sha, c.parent_sha AS parent, c.subject, c.author,"
	"  c.committed_at AS date, c.branch, c.release, c.describe, c.series, c.series_name,"
	"  c.series_version, c.message_id, c.files,"
	"  (SELECT count(*) FROM run r WHERE r.commit_id = c.id) AS runs"
	" FROM commits c"
	" WHERE ($1::text IS NULL OR c.series = $1 OR c.series_name = $1)"
	"  AND ($2::text IS NULL OR c.branch = $2))"
	" SELECT (SELECT count(*) FROM f),"
	" coalesce((SELECT json_agg(p) FROM (SELECT * FROM f"
	"  ORDER BY date DESC NULLS LAST, id DESC LIMIT $3 OFFSET $4) p), '[]')";

void api_commits_list(struct request *rq, struct reply *rp)
{
	const char *filters[2] = {http_query(rq, "series"), http_query(rq, "branch")};

	api_list(rq, rp, SQL_COMMITS, 2, filters);
}
