/*
 * health.c - GET /healthz (is the database answering) and GET /metrics
 * (Prometheus text: request counts, ingest counts, database outages, the
 * decision queue).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/counters.h"
#include "server/db/db.h"
#include "server/mail/mailer.h"
#include "server/reads/readcache.h"
#include "server/decide/regress.h"
#include "server/http/route.h"
#include "server/robot/inbox.h"
#include "lib/jsonw.h"
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

/* ,"KEY":{"host","port","switches","since"} of a pool's server, once known. */
static void put_node(struct buf *b, const char *key, int reads)
{
	struct db_node n;
	time_t t;
	struct tm tm;
	char since[32];

	if (!db_node(reads, &n))
		return;
	t = (time_t)n.since;
	gmtime_r(&t, &tm);
	strftime(since, sizeof(since), "%Y-%m-%dT%H:%M:%SZ", &tm);
	buf_printf(b, ",\"%s\":{\"host\":", key);
	jsonw_str(b, n.host);
	buf_puts(b, ",\"port\":");
	jsonw_str(b, n.port);
	buf_printf(b, ",\"switches\":%ld,\"since\":\"%s\"}", n.switches, since);
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
	put_node(b, "writes_to", 0);
	if (db_has_standby())
		put_node(b, "reads_from", 1);
	if (up) { /* inboxes whose last poll failed, with what went wrong */
		struct buf failing = BUF_INIT;
		if (!inbox_health(c, &failing) && failing.len) {
			buf_puts(b, ",\"inboxes\":{\"status\":\"failing\",\"failing\":");
			jsonw_str(b, failing.data);
			buf_putc(b, '}');
		}
		buf_release(&failing);
	}
	buf_putc(b, '}');
	/* reads go on from a standby, writes do not: a balancer routing writes
	 * looks at "database" */
}

/* A metric's "# HELP" and "# TYPE" lines. */
static void put_head(struct buf *b, const char *name, const char *type, const char *help)
{
	buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A metric of one value, with its HELP and TYPE lines. */
struct metric_line {
	const char *name, *type, *help;
	unsigned long value;
};

static void put_lines(struct buf *b, const struct metric_line *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		put_head(b, l[i].name, l[i].type, l[i].help);
		buf_printf(b, "%s %lu\n", l[i].name, l[i].value);
	}
}

#define NLINES(a) (sizeof(a) / sizeof((a)[0]))

/* Requests by status class, their time, and what ingest stored. */
static void put_requests(struct buf *b)
{
	const struct metric_line ingest[] = {
		{"kperf_runs_created_total", "counter", "Runs stored.", counters.runs_created},
		{"kperf_runs_repeated_total", "counter", "Identical re-posts answered 200.",
		 counters.runs_repeated},
		{"kperf_samples_created_total", "counter", "Samples stored.",
		 counters.samples_created},
		{"kperf_db_unavailable_total", "counter",
		 "Requests answered 503 for want of the database.", counters.db_unavailable},
		{"kperf_ingest_commits_total", "counter", "Ingest transactions committed.",
		 counters.ingest_commits},
		{"kperf_ingest_grouped_requests_total", "counter",
		 "Ingest requests committed in a transaction shared with others (group commit).",
		 counters.ingest_grouped_requests},
	};

	put_head(b, "kperf_http_requests_total", "counter",
		 "HTTP requests answered, by status class.");
	for (int i = 1; i < 6; i++)
		buf_printf(b, "kperf_http_requests_total{class=\"%dxx\"} %lu\n", i,
			   (unsigned long)counters.requests_by_class[i]);
	put_head(b, "kperf_http_request_seconds_total", "counter", "Time spent answering requests.");
	buf_printf(b, "kperf_http_request_seconds_total %.6f\n",
		   (double)counters.request_us_total / 1e6);
	put_lines(b, ingest, NLINES(ingest));
}

static void put_read_cache(struct buf *b)
{
	size_t entries, bytes;
	unsigned long hits, misses;

	readcache_stats(&entries, &bytes, &hits, &misses);
	{
		const struct metric_line l[] = {
			{"kperf_read_cache_hits_total", "counter",
			 "Trend and compare reads answered from memory (the database unchanged since).",
			 hits},
			{"kperf_read_cache_misses_total", "counter",
			 "Trend and compare reads that went to the database.", misses},
			{"kperf_read_cache_bytes", "gauge", "Bytes of answers the read cache holds.",
			 (unsigned long)bytes},
			{"kperf_read_cache_entries", "gauge", "Answers the read cache holds.",
			 (unsigned long)entries},
		};
		put_lines(b, l, NLINES(l));
	}
}

/* Requests by route and class, then the latency histogram. */
static void put_routes(struct buf *b)
{
	unsigned long cum = 0;

	put_head(b, "kperf_route_requests_total", "counter", "Requests by route and status class.");
	for (int r = 0; routes[r].method && r < COUNTERS_ROUTES; r++)
		for (int k = 1; k < 6; k++)
			if (counters.route_requests[r][k])
				buf_printf(b,
					   "kperf_route_requests_total{method=\"%s\",route=\"%s\","
					   "class=\"%dxx\"} %lu\n",
					   routes[r].method, routes[r].path, k,
					   (unsigned long)counters.route_requests[r][k]);
	put_head(b, "kperf_http_request_duration_seconds", "histogram", "Request latency.");
	for (int i = 0; i < COUNTERS_BUCKETS; i++) {
		cum += counters.latency_bucket[i];
		if (counters_bucket_us[i] < 0)
			buf_printf(b, "kperf_http_request_duration_seconds_bucket{le=\"+Inf\"} %lu\n",
				   cum);
		else
			buf_printf(b, "kperf_http_request_duration_seconds_bucket{le=\"%g\"} %lu\n",
				   counters_bucket_us[i] / 1e6, cum);
	}
	buf_printf(b, "kperf_http_request_duration_seconds_sum %.6f\n"
		      "kperf_http_request_duration_seconds_count %lu\n",
		   (double)counters.request_us_total / 1e6, cum);
}

/* Decisions, mail, connections and compare reads. */
/* Which server each pool reaches, and how often that changed. */
static void put_nodes(struct buf *b)
{
	static const char *const pools[2] = {"write", "read"};
	struct db_node n;

	put_head(b, "kperf_db_node_switches_total", "counter",
		 "Times the server a pool's connections reach changed (failover, switchover).");
	for (int i = 0; i < 2; i++)
		if (db_node(i, &n))
			buf_printf(b, "kperf_db_node_switches_total{pool=\"%s\"} %ld\n", pools[i],
				   n.switches);
	put_head(b, "kperf_db_node_info", "gauge",
		 "The server a pool's connections reach (1), with since as epoch seconds.");
	for (int i = 0; i < 2; i++)
		if (db_node(i, &n)) {
			buf_printf(b, "kperf_db_node_info{pool=\"%s\",host=\"", pools[i]);
			for (const char *p = n.host; *p; p++) /* a label value's escapes */
				buf_printf(b, "%s%c", *p == '"' || *p == '\\' ? "\\" : "", *p);
			buf_printf(b, "\",port=\"%s\",since=\"%.0f\"} 1\n", n.port, n.since);
		}
}

static void put_workers(struct buf *b)
{
	const struct metric_line work[] = {
		{"kperf_decisions_total", "counter", "Per-commit decisions made (or redone).",
		 counters.decisions_made},
		{"kperf_alerts_sent_total", "counter", "Alert mails accepted by the SMTP server.",
		 counters.alerts_sent},
		{"kperf_alerts_failed_total", "counter", "Alert deliveries that failed (retried).",
		 counters.alerts_failed},
		{"kperf_db_connects_total", "counter", "Database connections opened (reconnects).",
		 counters.db_connects},
		{"kperf_inbox_polls_total", "counter", "Inbox polls that ended, either way.",
		 counters.inbox_polls},
		{"kperf_inbox_poll_failures_total", "counter",
		 "Inbox polls that failed (retried with backoff).", counters.inbox_poll_failures},
		{"kperf_series_found_total", "counter", "Series versions stored from inboxes.",
		 counters.series_found},
	};
	const struct metric_line passes[] = {
		{"kperf_decision_passes_total", "counter",
		 "Key groups decided at one commit by this kperfd (every metric of the group: one"
		 " pass).",
		 regress_passes()},
	};

	put_lines(b, work, NLINES(work));
	put_head(b, "kperf_compare_target_reads_total", "counter",
		 "Compares whose targets were read on a helper's connection beside the base, or"
		 " after it on the request's own.");
	buf_printf(b,
		   "kperf_compare_target_reads_total{on=\"helper\"} %lu\n"
		   "kperf_compare_target_reads_total{on=\"request\"} %lu\n",
		   (unsigned long)counters.compare_reads_helper,
		   (unsigned long)counters.compare_reads_request);
	put_lines(b, passes, NLINES(passes));
	put_nodes(b);
}

static void put_standby(struct buf *b)
{
	double lag = 0, behind = -1;
	int ok = standby_lag(&lag, &behind) == 0;

	put_head(b, "kperf_standby_up", "gauge",
		 "The read standby answers (KPERF_READ_DATABASE_URL).");
	buf_printf(b, "kperf_standby_up %d\n", ok);
	put_head(b, "kperf_standby_replay_lag_seconds", "gauge",
		 "Since the last transaction the standby replayed, 0 when it has replayed all it"
		 " received.");
	buf_printf(b, "kperf_standby_replay_lag_seconds %.3f\n", ok ? lag : 0.0);
	put_head(b, "kperf_standby_fallbacks_total", "counter",
		 "Reads the standby could not answer (down, or behind a client's own write): read"
		 " from the primary.");
	buf_printf(b, "kperf_standby_fallbacks_total %lu\n",
		   (unsigned long)counters.standby_fallbacks);
	if (ok && behind >= 0) {
		put_head(b, "kperf_standby_replay_behind_bytes", "gauge",
			 "Primary WAL not yet replayed.");
		buf_printf(b, "kperf_standby_replay_behind_bytes %.0f\n", behind);
	}
}

/* Queue depths live in the database, shared by every kperfd. */
static void put_queues(struct buf *b)
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

	put_head(b, "kperf_queue_depth", "gauge", "Outbox messages by state, queued decisions.");
	for (int i = 0; i < n; i++) {
		if (!strcmp(PQgetvalue(r, i, 0), "decision_groups"))
			groups = PQgetvalue(r, i, 2);
		else
			buf_printf(b, "kperf_queue_depth{queue=\"%s\",state=\"%s\"} %s\n",
				   PQgetvalue(r, i, 0), PQgetvalue(r, i, 1), PQgetvalue(r, i, 2));
	}
	if (groups) {
		put_head(b, "kperf_decision_pending_groups", "gauge",
			 "Key groups (machine, test, variant) with decisions waiting to be made, in"
			 " the database.");
		buf_printf(b, "kperf_decision_pending_groups %s\n", groups);
	}
	PQclear(r);
}

void api_prometheus(struct request *rq, struct reply *rp)
{
	struct buf *b = &rp->body;

	(void)rq;
	rp->status = 200;
	rp->content_type = "text/plain; version=0.0.4";
	put_requests(b);
	put_read_cache(b);
	put_routes(b);
	put_workers(b);
	if (db_has_standby())
		put_standby(b);
	put_queues(b);
}
