/*
 * health.c - GET /healthz (is the database answering) and GET /metrics
 * (Prometheus text: request counts, ingest counts, database outages, the
 * decision queue).
 */
#include <stdio.h>
#include <string.h>

#include "../server/counters.h"
#include "../server/db.h"
#include "../server/mailer.h"
#include "../server/readcache.h"
#include "../server/regress.h"
#include "../server/route.h"
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
		   "kperf_db_unavailable_total %lu\n"
		   "# HELP kperf_ingest_commits_total Ingest transactions committed.\n"
		   "# TYPE kperf_ingest_commits_total counter\n"
		   "kperf_ingest_commits_total %lu\n"
		   "# HELP kperf_ingest_grouped_requests_total Ingest requests committed in a"
		   " transaction shared with others (group commit).\n"
		   "# TYPE kperf_ingest_grouped_requests_total counter\n"
		   "kperf_ingest_grouped_requests_total %lu\n",
		   (double)counters.request_us_total / 1e6, (unsigned long)counters.runs_created,
		   (unsigned long)counters.runs_repeated, (unsigned long)counters.samples_created,
		   (unsigned long)counters.db_unavailable, (unsigned long)counters.ingest_commits,
		   (unsigned long)counters.ingest_grouped_requests);
	{
		size_t entries, bytes;
		unsigned long hits, misses;
		readcache_stats(&entries, &bytes, &hits, &misses);
		buf_printf(b,
			   "# HELP kperf_read_cache_hits_total Trend and compare reads answered"
			   " from memory (the database unchanged since).\n"
			   "# TYPE kperf_read_cache_hits_total counter\n"
			   "kperf_read_cache_hits_total %lu\n"
			   "# HELP kperf_read_cache_misses_total Trend and compare reads that"
			   " went to the database.\n"
			   "# TYPE kperf_read_cache_misses_total counter\n"
			   "kperf_read_cache_misses_total %lu\n"
			   "# HELP kperf_read_cache_bytes Bytes of answers the read cache holds.\n"
			   "# TYPE kperf_read_cache_bytes gauge\n"
			   "kperf_read_cache_bytes %zu\n"
			   "# HELP kperf_read_cache_entries Answers the read cache holds.\n"
			   "# TYPE kperf_read_cache_entries gauge\n"
			   "kperf_read_cache_entries %zu\n",
			   hits, misses, bytes, entries);
	}
	buf_puts(b, "# HELP kperf_route_requests_total Requests by route and status class.\n"
		    "# TYPE kperf_route_requests_total counter\n");
	for (int r = 0; routes[r].method && r < COUNTERS_ROUTES; r++)
		for (int k = 1; k < 6; k++)
			if (counters.route_requests[r][k])
				buf_printf(b,
					   "kperf_route_requests_total{method=\"%s\",route=\"%s\","
					   "class=\"%dxx\"} %lu\n",
					   routes[r].method, routes[r].path, k,
					   (unsigned long)counters.route_requests[r][k]);
	buf_puts(b, "# HELP kperf_http_request_duration_seconds Request latency.\n"
		    "# TYPE kperf_http_request_duration_seconds histogram\n");
	{
		unsigned long cum = 0;
		for (int i = 0; i < COUNTERS_BUCKETS; i++) {
			cum += counters.latency_bucket[i];
			if (counters_bucket_us[i] < 0)
				buf_printf(b, "kperf_http_request_duration_seconds_bucket{le=\"+Inf\"} %lu\n",
					   cum);
			else
				buf_printf(b,
					   "kperf_http_request_duration_seconds_bucket{le=\"%g\"} %lu\n",
					   counters_bucket_us[i] / 1e6, cum);
		}
		buf_printf(b, "kperf_http_request_duration_seconds_sum %.6f\n"
			      "kperf_http_request_duration_seconds_count %lu\n",
			   (double)counters.request_us_total / 1e6, cum);
	}
	buf_printf(b,
		   "# HELP kperf_decisions_total Per-commit decisions made (or redone).\n"
		   "# TYPE kperf_decisions_total counter\nkperf_decisions_total %lu\n"
		   "# HELP kperf_alerts_sent_total Alert mails accepted by the SMTP server.\n"
		   "# TYPE kperf_alerts_sent_total counter\nkperf_alerts_sent_total %lu\n"
		   "# HELP kperf_alerts_failed_total Alert deliveries that failed (retried).\n"
		   "# TYPE kperf_alerts_failed_total counter\nkperf_alerts_failed_total %lu\n"
		   "# HELP kperf_db_connects_total Database connections opened (reconnects).\n"
		   "# TYPE kperf_db_connects_total counter\nkperf_db_connects_total %lu\n",
		   (unsigned long)counters.decisions_made, (unsigned long)counters.alerts_sent,
		   (unsigned long)counters.alerts_failed, (unsigned long)counters.db_connects);
	buf_printf(b,
		   "# HELP kperf_decision_passes_total Key groups decided at one commit by this"
		   " kperfd (every metric of the group: one pass).\n"
		   "# TYPE kperf_decision_passes_total counter\nkperf_decision_passes_total %lu\n",
		   regress_passes());
	/* queue depths live in the database, shared by every kperfd */
	{
		PGconn *c = db_get();
		PGresult *r = c ? db_exec(c,
					  "SELECT 'outbox', state, count(*) FROM alert GROUP BY state"
					  " UNION ALL SELECT 'decisions', 'queued', count(*)"
					  " FROM decision_queue"
					  " UNION ALL SELECT 'decision_groups', 'queued', count(*) FROM"
					  " (SELECT DISTINCT machine_id, test_id, variant_id"
					  "  FROM decision_queue) g",
					  0, NULL)
				: NULL;
		int n = r && db_ok(r) ? PQntuples(r) : 0;
		const char *groups = NULL;

		buf_puts(b, "# HELP kperf_queue_depth Outbox messages by state, queued decisions.\n"
			    "# TYPE kperf_queue_depth gauge\n");
		for (int i = 0; i < n; i++) {
			if (!strcmp(PQgetvalue(r, i, 0), "decision_groups"))
				groups = PQgetvalue(r, i, 2);
			else
				buf_printf(b, "kperf_queue_depth{queue=\"%s\",state=\"%s\"} %s\n",
					   PQgetvalue(r, i, 0), PQgetvalue(r, i, 1),
					   PQgetvalue(r, i, 2));
		}
		if (groups)
			buf_printf(b,
				   "# HELP kperf_decision_pending_groups Key groups (machine, test,"
				   " variant) with decisions waiting to be made, in the database.\n"
				   "# TYPE kperf_decision_pending_groups gauge\n"
				   "kperf_decision_pending_groups %s\n",
				   groups);
		PQclear(r);
	}
}
