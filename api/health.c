/*
 * health.c - GET /healthz (is the database answering) and GET /metrics
 * (Prometheus text: request counts, ingest counts, database outages, the
 * decision queue).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/counters.h"
#include "server/db/db.h"
#include "server/mail/mailer.h"
#include "server/reads/readcache.h"
#include "server/decide/regress.h"
#include "server/http/route.h"
#include "api/api.h"

/*
 * The standby's replay: 0 and *lag_s (seconds since the last transaction it
 * replayed, 0 when it has replayed all it received), *behind (bytes of the
 * primary's WAL not replayed yet, -1 when the primary is away); -1 when no
 * standby answers. Leaves the thread reading the primary.
 */
static int standby_lag(double *lag_s, double *behind)
{
	PGconn *c;
	PGresult *r;
	int rc = -1;

	*behind = -1;
	db_reading(1, NULL);
	c = db_get();
	if (c && db_reading_now()) {
		r = db_exec(c,
			    "SELECT CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0"
			    " ELSE coalesce(extract(epoch FROM now() - pg_last_xact_replay_timestamp()),"
			    " 0) END, pg_last_wal_replay_lsn()::text FROM (SELECT pg_is_in_recovery()) x",
			    0, NULL);
		if (db_ok(r) && PQntuples(r) == 1 && !PQgetisnull(r, 0, 1)) {
			const char *p[1] = {PQgetvalue(r, 0, 1)};
			PGconn *pc;
			PGresult *d;
			*lag_s = strtod(PQgetvalue(r, 0, 0), NULL);
			rc = 0;
			db_reading(0, NULL);
			pc = db_get();
			d = pc ? db_exec(pc, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)",
					 1, p)
			       : NULL;
			if (d && db_ok(d))
				*behind = strtod(PQgetvalue(d, 0, 0), NULL);
			PQclear(d);
		}
		PQclear(r);
	}
	db_reading(0, NULL);
	return rc;
}

void api_healthz(struct request *rq, struct reply *rp)
{
	PGconn *c;
	PGresult *r;
	struct buf *b = &rp->body;
	double lag = 0, behind = -1;
	int standby = db_has_standby() ? standby_lag(&lag, &behind) : 1, up;

	(void)rq;
	db_reading(0, NULL); /* the primary's health */
	c = db_get();
	r = c ? db_exec(c, "SELECT 1", 0, NULL) : NULL;
	up = r && db_ok(r);
	PQclear(r);
	if (!up && standby != 0) { /* nothing answers: 503 with Retry-After */
		reply_unavailable(rp);
		return;
	}
	rp->status = 200;
	rp->content_type = "application/json";
	buf_printf(b, "{\"status\":\"%s\",\"database\":\"%s\",\"mail\":\"%s\"",
		   up ? "ok" : "degraded", up ? "ok" : "unavailable",
		   mailer_configured() ? "configured" : "not configured");
	if (standby == 0) {
		buf_printf(b, ",\"standby\":{\"status\":\"ok\",\"replay_lag_s\":%.3f", lag);
		if (behind >= 0)
			buf_printf(b, ",\"replay_behind_bytes\":%.0f", behind);
		buf_putc(b, '}');
	} else if (standby < 0) {
		buf_puts(b, ",\"standby\":{\"status\":\"unavailable\"}");
	}
	buf_putc(b, '}');
	/* reads go on from a standby, writes do not: a balancer routing writes
	 * looks at "database" */
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
		   "# HELP kperf_compare_target_reads_total Compares whose targets were read on a"
		   " helper's connection beside the base, or after it on the request's own.\n"
		   "# TYPE kperf_compare_target_reads_total counter\n"
		   "kperf_compare_target_reads_total{on=\"helper\"} %lu\n"
		   "kperf_compare_target_reads_total{on=\"request\"} %lu\n",
		   (unsigned long)counters.compare_reads_helper,
		   (unsigned long)counters.compare_reads_request);
	buf_printf(b,
		   "# HELP kperf_decision_passes_total Key groups decided at one commit by this"
		   " kperfd (every metric of the group: one pass).\n"
		   "# TYPE kperf_decision_passes_total counter\nkperf_decision_passes_total %lu\n",
		   regress_passes());
	if (db_has_standby()) {
		double lag = 0, behind = -1;
		int ok = standby_lag(&lag, &behind) == 0;
		buf_printf(b,
			   "# HELP kperf_standby_up The read standby answers (KPERF_READ_DATABASE_URL).\n"
			   "# TYPE kperf_standby_up gauge\nkperf_standby_up %d\n"
			   "# HELP kperf_standby_replay_lag_seconds Since the last transaction the standby"
			   " replayed, 0 when it has replayed all it received.\n"
			   "# TYPE kperf_standby_replay_lag_seconds gauge\n"
			   "kperf_standby_replay_lag_seconds %.3f\n"
			   "# HELP kperf_standby_fallbacks_total Reads the standby could not answer (down,"
			   " or behind a client's own write): read from the primary.\n"
			   "# TYPE kperf_standby_fallbacks_total counter\n"
			   "kperf_standby_fallbacks_total %lu\n",
			   ok, ok ? lag : 0.0, (unsigned long)counters.standby_fallbacks);
		if (ok && behind >= 0)
			buf_printf(b,
				   "# HELP kperf_standby_replay_behind_bytes Primary WAL not yet replayed.\n"
				   "# TYPE kperf_standby_replay_behind_bytes gauge\n"
				   "kperf_standby_replay_behind_bytes %.0f\n",
				   behind);
	}
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
