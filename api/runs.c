/*
 * runs.c - /api/v1/runs: ingest of one run or a batch (all or nothing, one
 * transaction, acknowledged only after COMMIT), the run as posted, and the
 * newest-first list.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/counters.h"
#include "server/db/db.h"
#include "lib/jsonw.h"
#include "lib/kperf_limits.h"
#include "server/db/token.h"
#include "lib/util.h"
#include "api/api.h"
#include "api/jobs.h"
#include "api/group_commit.h"
#include "api/decode_gate.h"
#include "lib/ingest_decode.h"
#include "api/store.h"

static void answer_run(struct buf *b, const struct run_in *run, long id)
{
	buf_puts(b, "{\"run_id\":");
	jsonw_string(b, run->run_id, strlen(run->run_id));
	buf_printf(b, ",\"id\":%ld}", id);
}

void api_runs_post(struct request *rq, struct reply *rp)
{
	struct decode_error err;
	struct ingest in;
	size_t gate;
	struct store_item *items;
	PGresult *failed = NULL;
	PGconn *c = NULL;
	long rc;
	int created = 0;

	gate = decode_gate_enter(rq->body.len);
	if (ingest_decode_runs(rq->body.data ? rq->body.data : "", rq->body.len, &in, &err)) {
		decode_gate_leave(gate);
		reply_error(rp, err.status, err.code, err.field, "%s", err.message);
		return;
	}
	buf_release(&rq->body); /* the decoded tree holds what is needed */
	for (size_t i = 0; i < in.nruns; i++) {
		const char *name = json_string_value(
			json_object_get(json_object_get(in.runs[i].json, "machine"), "name"));
		if (!token_allows_machine(rq->machines, name)) {
			char field[64];
			snprintf(field, sizeof(field), in.batch ? "runs[%zu].machine.name" : "machine.name",
				 i);
			reply_error(rp, 403, "forbidden", field,
				    "this token may not post results of machine \"%s\"", name);
			ingest_release(&in);
			decode_gate_leave(gate);
			return;
		}
	}
	items = xcalloc(in.nruns, sizeof(*items));
	for (size_t i = 0; i < in.nruns; i++) {
		items[i].run = &in.runs[i];
		items[i].token_id = rq->token_id;
		items[i].bulk = in.nruns > STORE_BULK_RUNS;
	}
	rc = group_store(items, in.nruns, &c, &failed);
	if (rc == -3) {
		reply_unavailable(rp);
	} else if (rc == -2) {
		reply_db_error(rp, c, failed, "storing the run");
	} else if (rc >= 0) {
		char field[64];
		snprintf(field, sizeof(field), in.batch ? "runs[%ld].run_id" : "run_id", rc);
		reply_error(rp, 409, "conflict", field,
			    "run_id \"%s\" is stored already with other content", in.runs[rc].run_id);
	} else {
		struct buf *b = &rp->body;
		int jobs = 0;
		for (size_t i = 0; i < in.nruns; i++)
			jobs |= in.runs[i].job_id != 0;
		/* runs naming a job count toward it once committed (see jobs.h) */
		if (jobs && (c = db_get()))
			jobs_count_runs(c, items, in.nruns);
		for (size_t i = 0; i < in.nruns; i++) {
			if (items[i].result == STORE_CREATED) {
				created = 1;
				counters.runs_created++;
				counters.samples_created += in.runs[i].nvalues;
			} else {
				counters.runs_repeated++;
			}
		}
		rp->status = created ? 201 : 200;
		rp->content_type = "application/json";
		if (in.batch) {
			buf_puts(b, "{\"runs\":[");
			for (size_t i = 0; i < in.nruns; i++) {
				if (i)
					buf_putc(b, ',');
				answer_run(b, &in.runs[i], items[i].id);
			}
			buf_putc(b, ']');
		} else {
			answer_run(b, &in.runs[0], items[0].id);
			b->len--; /* reopen the object for "ignored" */
		}
		if (json_array_size(in.ignored)) {
			buf_puts(b, ",\"ignored\":");
			jsonw_value(b, in.ignored, 0);
		}
		buf_putc(b, '}');
	}
	PQclear(failed);
	free(items);
	ingest_release(&in);
	decode_gate_leave(gate);
}

void api_run_get(struct request *rq, struct reply *rp)
{
	const char *params[1] = {rq->arg};
	PGconn *c = db_get();
	PGresult *r;

	if (!c) {
		reply_unavailable(rp);
		return;
	}
	r = db_exec(c,
		    "SELECT CASE WHEN valid THEN doc ELSE doc || jsonb_build_object('valid', false,"
		    " 'invalidated_at', invalidated_at) END::text FROM run WHERE run_id = $1",
		    1, params);
	if (!db_ok(r))
		reply_db_error(rp, c, r, "reading the run");
	else if (PQntuples(r) == 0)
		reply_error(rp, 404, "not_found", "run_id", "no run \"%s\"", rq->arg);
	else
		reply_json(rp, 200, PQgetvalue(r, 0, 0));
	PQclear(r);
}

static const char SQL_RUNS[] =
	"WITH f AS (SELECT r.id, r.run_id, m.name AS machine, c.sha AS commit, r.release,"
	"  t.suite, t.params, v.knobs AS variant, r.started_at, r.received_at, r.duration_s,"
	"  r.exit_status, r.valid,"
	"  (SELECT count(*) FROM jsonb_object_keys(r.doc->'metrics')) AS metrics"
	" FROM run r JOIN machine m ON m.id = r.machine_id JOIN commits c ON c.id = r.commit_id"
	" JOIN test t ON t.id = r.test_id JOIN variant v ON v.id = r.variant_id"
	" WHERE ($1::text IS NULL OR m.name = $1)"
	"  AND ($2::text IS NULL OR starts_with(c.sha, lower($2)) OR r.release = $2"
	"       OR c.release = $2)"
	"  AND ($3::text IS NULL OR t.suite = $3))"
	" SELECT (SELECT count(*) FROM f),"
	" coalesce((SELECT json_agg(p) FROM (SELECT * FROM f"
	"  ORDER BY coalesce(started_at, received_at) DESC, id DESC"
	"  LIMIT $4 OFFSET $5) p), '[]')";

void api_runs_list(struct request *rq, struct reply *rp)
{
	const char *filters[3] = {http_query(rq, "machine"), http_query(rq, "commit"),
				  http_query(rq, "suite")};

	api_list(rq, rp, SQL_RUNS, 3, filters);
}
