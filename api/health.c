/*
 * health.c - GET /healthz (is the database answering) and GET /metrics
 * (Prometheus text: request counts, ingest counts, database outages).
 */
#include <stdio.h>

#include "../server/counters.h"
#include "../server/db.h"
#include "../server/mailer.h"
#include "api.h"

void api_healthz(struct request *rq, struct reply *rp)
{
	PGconn *c = db_get();
	PGresult *r;

	(void)rq;
	if (!c) {
		reply_unavailable(rp);
		return;
	}
	r = db_exec(c, "SELECT 1", 0, NULL);
	if (db_ok(r))
		reply_json(rp, 200, mailer_configured()
					    ? "{\"status\":\"ok\",\"database\":\"ok\",\"mail\":\"configured\"}"
					    : "{\"status\":\"ok\",\"database\":\"ok\","
					      "\"mail\":\"not configured\"}");
	else
		reply_db_error(rp, c, r, "health check");
	PQclear(r);
}

void api_prometheus(struct request *rq, struct reply *rp)
{
	struct buf *b = &rp->body;

	(void)rq;
	rp->status = 200;
	rp->content_type = "text/plain; version=0.0.4";
	buf_puts(b, "# HELP kperf_http_requests_total HTTP requests answered, by status class.\n"
		    "# TYPE kperf_http_requests_total counter\n");
	for (int i = 1; i < 6; i++)
		buf_printf(b, "kperf_http_requests_total{class=\"%dxx\"} %lu\n", i,
			   (unsigned long)counters.requests_by_class[i]);
	buf_printf(b,
		   "# HELP kperf_http_request_seconds_total Time spent answering requests.\n"
		   "# TYPE kperf_http_request_seconds_total counter\n"
		   "kperf_http_request_seconds_total %.6f\n"
		   "# HELP kperf_runs_created_total Runs stored.\n"
		   "# TYPE kperf_runs_created_total counter\n"
		   "kperf_runs_created_total %lu\n"
		   "# HELP kperf_runs_repeated_total Identical re-posts answered 200.\n"
		   "# TYPE kperf_runs_repeated_total counter\n"
		   "kperf_runs_repeated_total %lu\n"
		   "# HELP kperf_samples_created_total Samples stored.\n"
		   "# TYPE kperf_samples_created_total counter\n"
		   "kperf_samples_created_total %lu\n"
		   "# HELP kperf_db_unavailable_total Requests answered 503 for want of the database.\n"
		   "# TYPE kperf_db_unavailable_total counter\n"
		   "kperf_db_unavailable_total %lu\n",
		   (double)counters.request_us_total / 1e6, (unsigned long)counters.runs_created,
		   (unsigned long)counters.runs_repeated, (unsigned long)counters.samples_created,
		   (unsigned long)counters.db_unavailable);
}
