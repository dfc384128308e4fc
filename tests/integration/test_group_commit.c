/*
 * test_group_commit.c - ingest under concurrency, where requests share
 * transactions (group commit): every request gets its own answer (201, 200
 * for an identical re-post, 409 for a conflicting run_id) and nothing of a
 * refused request is stored; samples land in the month's partition; and
 * migration 005 moves samples stored by an older kperfd into partitions.
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/db/migrate.h"
#include "tests/integration/harness.h"

#define THREADS 16
#define POSTS 30

struct poster {
	const struct kperfd *k;
	int id;
	int created, same, conflict, other;
};

static void body_of(char *b, size_t cap, const char *run_id, int machine, double v)
{
	snprintf(b, cap,
		 "{\"run_id\":\"%s\",\"machine\":{\"name\":\"gc-%d\"},"
		 "\"kernel\":{\"commit\":\"1431d4d11abb265e79cd44bed2f5ea93f1bcc57b\"},"
		 "\"test\":{\"suite\":\"will-it-scale\",\"params\":{\"nr_task\":\"%d\"}},"
		 "\"metrics\":{\"gc.ops\":[%.1f,%.1f,%.1f],\"gc.new_%d\":%.1f}}",
		 run_id, machine % 3, machine % 2, v, v + 1, v + 2, machine, v);
}

struct answer {
	char body[512];
	size_t len;
};

static size_t keep(char *d, size_t s, size_t n, void *a)
{
	struct answer *ans = a;
	size_t k = s * n;
	if (k > sizeof(ans->body) - 1 - ans->len)
		k = sizeof(ans->body) - 1 - ans->len;
	memcpy(ans->body + ans->len, d, k);
	ans->len += k;
	ans->body[ans->len] = '\0';
	return s * n;
}

/* Each poster keeps its connection, as kperf-collect and a lab's scripts do. */
static void *post_many(void *arg)
{
	struct poster *p = arg;
	char body[1024], id[64];
	struct curl_slist *hdr;
	CURL *h = harness_runs_handle(p->k, 60L, &hdr);

	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, keep);
	for (int i = 0; i < POSTS; i++) {
		struct answer ans = {{0}, 0};
		struct {
			long status;
			const char *body;
		} r = {0, ans.body};
		if (i % 10 == 9) { /* the taken run_id with other content: 409 */
			body_of(body, sizeof(body), "gc-taken", p->id, 1000 + p->id);
		} else if (i % 7 == 6) { /* the previous run again, identical: 200 */
			snprintf(id, sizeof(id), "gc-%d-%d", p->id, i - 1);
			body_of(body, sizeof(body), id, p->id, (double)(p->id * 100 + i - 1));
		} else {
			snprintf(id, sizeof(id), "gc-%d-%d", p->id, i);
			body_of(body, sizeof(body), id, p->id, (double)(p->id * 100 + i));
		}
		curl_easy_setopt(h, CURLOPT_WRITEDATA, &ans);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		if (curl_easy_perform(h) == CURLE_OK)
			curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
		if (r.status == 201)
			p->created++;
		else if (r.status == 200)
			p->same++;
		else if (r.status == 409 && strstr(r.body, "\"field\":\"run_id\""))
			p->conflict++;
		else
			p->other++;
	}
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
	return NULL;
}

Test(group_commit, concurrent_requests_each_get_their_own_answer, .timeout = 180)
{
	struct kperfd k;
	struct poster p[THREADS];
	pthread_t th[THREADS];
	char body[1024];
	struct resp r;
	int created = 0, same = 0, conflict = 0, other = 0;
	long commits, grouped;
	PGconn *hold;
	static const char *const env[] = {"KPERF_THREADS=8", NULL}; /* the default on 2 cores */

	kperfd_env(env);
	kperfd_start(&k, NULL);
	kperfd_env(NULL);
	body_of(body, sizeof(body), "gc-taken", 99, 7.0);
	http_post_json(&k, "/api/v1/runs", TOKEN_COLLECTOR, body, &r);
	cr_assert_eq(r.status, 201, "%ld %s", r.status, r.body);
	resp_release(&r);

	/* Hold the decision queue for a second: the first transactions wait on
	 * it, the requests arriving meanwhile queue up behind them, and the next
	 * leader must commit those together. */
	hold = harness_db(&k);
	PQclear(PQexec(hold, "BEGIN"));
	PQclear(PQexec(hold, "LOCK TABLE decision_queue IN SHARE ROW EXCLUSIVE MODE"));
	for (int i = 0; i < THREADS; i++) {
		p[i] = (struct poster){&k, i, 0, 0, 0, 0};
		pthread_create(&th[i], NULL, post_many, &p[i]);
	}
	sleep(1);
	PQclear(PQexec(hold, "COMMIT"));
	PQfinish(hold);
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		created += p[i].created;
		same += p[i].same;
		conflict += p[i].conflict;
		other += p[i].other;
	}
	/* per thread: posts 9, 19, 29 conflict; 6, 13, 27 repeat posts 5, 12, 26;
	 * post 20 "repeats" 19, which was never stored, so it creates it: 24 new */
	cr_expect_eq(other, 0);
	cr_expect_eq(conflict, THREADS * 3);
	cr_expect_eq(same, THREADS * 3);
	cr_expect_eq(created, THREADS * 24);
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM run"), 1 + THREADS * 24);
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM sample"), (1 + THREADS * 24) * 4);
	/* the taken run kept its content; no sample of a refused post was stored */
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM sample s JOIN run r ON r.id = s.run_id"
				       " WHERE r.run_id = 'gc-taken' AND s.value >= 1000"),
		     0);
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM metric WHERE name LIKE 'gc.new_%'"),
		     THREADS + 1);
	/* every metric id a sample names exists (samples carry no foreign keys) */
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM sample s"
				       " WHERE NOT EXISTS (SELECT 1 FROM metric m WHERE m.id = s.metric_id)"
				       " OR NOT EXISTS (SELECT 1 FROM run r WHERE r.id = s.run_id"
				       " AND r.received_at = s.at)"),
		     0);
	commits = harness_metric(&k, "kperf_ingest_commits_total");
	grouped = harness_metric(&k, "kperf_ingest_grouped_requests_total");
	cr_expect_gt(grouped, 0, "no request shared a transaction");
	cr_expect_lt(commits, 1 + THREADS * 27, "commits %ld", commits);
	kperfd_stop(&k);
}

Test(group_commit, samples_land_in_the_partition_of_their_month)
{
	struct kperfd k;
	char body[1024];
	struct resp r;

	kperfd_start(&k, NULL);
	body_of(body, sizeof(body), "gc-month", 1, 5.0);
	http_post_json(&k, "/api/v1/runs", TOKEN_COLLECTOR, body, &r);
	cr_assert_eq(r.status, 201, "%ld %s", r.status, r.body);
	resp_release(&r);
	/* the month the run was received in (UTC), as stored */
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM sample WHERE tableoid::regclass::text"
				       " = (SELECT 'sample_' || to_char(received_at AT TIME ZONE"
				       " 'UTC', 'YYYYMM') FROM run WHERE run_id = 'gc-month')"),
		     4);
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM ONLY sample_default"), 0);
	/* the month kperfd set the database up in (migration 005, which makes
	 * the partitions, recorded in its transaction) and the next two exist
	 * before any row needs them */
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM generate_series(0, 2) i,"
				       " schema_migrations m WHERE m.version = 5"
				       " AND to_regclass('sample_' || to_char(date_trunc('month',"
				       " m.applied_at AT TIME ZONE 'UTC') + i * interval '1 month',"
				       " 'YYYYMM')) IS NOT NULL"),
		     3);
	kperfd_stop(&k);
}

static void exec_ok(PGconn *c, const char *sql)
{
	PGresult *r = PQexec(c, sql);
	ExecStatusType st = PQresultStatus(r);
	cr_assert(st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK, "%s: %s", sql,
		  PQresultErrorMessage(r));
	PQclear(r);
}

Test(group_commit, migration_005_moves_older_samples_into_their_months, .timeout = 120)
{
	static const char *const files[] = {"001_init", "002_decisions", "003_alerts",
					    "004_triage_history"};
	struct kperfd k;
	struct resp r;
	PGconn *c;

	kperfd_prepare(&k, NULL);
	c = harness_db(&k);
	for (int i = 0; i < 4; i++) { /* the schema an older kperfd left */
		char path[64];
		char *sql;
		snprintf(path, sizeof(path), "migrations/%s.sql", files[i]);
		sql = harness_slurp(path, NULL);
		exec_ok(c, "BEGIN");
		exec_ok(c, sql);
		if (i == 0)
			exec_ok(c, "CREATE TABLE schema_migrations (version integer PRIMARY KEY,"
				   " name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())");
		{
			char version[16];
			const char *params[2] = {version, files[i] + 4};
			PGresult *res;
			snprintf(version, sizeof(version), "%d", i + 1);
			res = PQexecParams(c, "INSERT INTO schema_migrations (version, name)"
					      " VALUES ($1, $2)", 2, NULL, params, NULL, NULL, 0);
			cr_assert_eq(PQresultStatus(res), PGRES_COMMAND_OK, "%s",
				     PQresultErrorMessage(res));
			PQclear(res);
		}
		exec_ok(c, "COMMIT");
		free(sql);
	}
	/* two runs, received in March 2024 and now, with 3 and 2 samples */
	exec_ok(c, "INSERT INTO machine (name) VALUES ('old-m');"
		   " INSERT INTO commits (sha) VALUES ('1431d4d11abb265e79cd44bed2f5ea93f1bcc57b');"
		   " INSERT INTO test (suite) VALUES ('will-it-scale');"
		   " INSERT INTO variant (knobs) VALUES ('{}');"
		   " INSERT INTO metric (name) VALUES ('old.ops');"
		   " INSERT INTO run (run_id, machine_id, commit_id, test_id, variant_id, received_at,"
		   "  doc) SELECT x.rid, 1, 1, 1, 1, x.at, jsonb_build_object('run_id', x.rid)"
		   "  FROM (VALUES ('old-1', timestamptz '2024-03-15 12:00Z'), ('old-2', now())) x(rid, at);"
		   " INSERT INTO sample (run_id, metric_id, iteration, value)"
		   "  VALUES (1, 1, 0, 10.5), (1, 1, 1, 11.5), (1, 1, 2, 12.5), (2, 1, 0, 20), (2, 1, 1, 21)");
	PQfinish(c);

	kperfd_restart(&k);
	cr_expect_eq(harness_count(&k, "SELECT max(version) FROM schema_migrations"),
		     migrate_latest(), "every migration since 004 applied");
	/* 006: the queue's touched_at; 007: new run documents compressed with lz4 */
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM information_schema.columns"
				       " WHERE table_name = 'decision_queue' AND column_name = 'touched_at'"),
		     1);
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM pg_attribute WHERE attrelid = 'run'::regclass"
				       " AND attname = 'doc' AND attcompression = 'l'"),
		     1);
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM sample_202403"), 3);
	/* old-2's month (received at the INSERT's now()), as stored */
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM sample WHERE tableoid::regclass::text"
				       " = (SELECT 'sample_' || to_char(received_at AT TIME ZONE"
				       " 'UTC', 'YYYYMM') FROM run WHERE run_id = 'old-2')"),
		     2);
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM ONLY sample_default"), 0);
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM sample s JOIN run r ON r.id = s.run_id"
				       " AND r.received_at = s.at"),
		     5);
	cr_expect_eq(harness_count(&k, "SELECT round(sum(value) * 10) FROM sample"), 755);
	/* 008: the runs' key group, and every sample in it */
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM key_group WHERE machine_id = 1"
				       " AND test_id = 1 AND variant_id = 1"),
		     1);
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM sample s JOIN key_group g"
				       " ON g.id = s.key_group_id AND g.machine_id = 1"),
		     5);
	/* 009: the commit epoch moves with a shown field (subject), not with others */
	cr_expect_eq(harness_count(&k, "SELECT n FROM commit_epoch"), 0);
	c = harness_db(&k);
	exec_ok(c, "UPDATE commits SET author = 'A U Thor' WHERE id = 1");
	cr_expect_eq(harness_count(&k, "SELECT n FROM commit_epoch"), 0);
	exec_ok(c, "UPDATE commits SET subject = 'mm: old' WHERE id = 1");
	cr_expect_eq(harness_count(&k, "SELECT n FROM commit_epoch"), 1);
	PQfinish(c);
	/* and reads find them: the trend of old.ops has one point with 5 samples */
	http_get(&k, "/api/v1/trend?machine=old-m&suite=will-it-scale&metric=old.ops", &r);
	cr_expect_eq(r.status, 200, "%ld %s", r.status, r.body);
	cr_expect(strstr(r.body, "\"samples\":[10.5,11.5,12.5,20,21]") != NULL, "%s", r.body);
	resp_release(&r);
	/* a new run's document (over 2 kB, so compressed) is lz4 and reads back whole */
	{
		char body[8192];
		size_t n = (size_t)snprintf(body, sizeof(body),
					    "{\"run_id\":\"lz4-1\",\"machine\":{\"name\":\"old-m\"},"
					    "\"kernel\":{\"release\":\"6.1.0\"},\"test\":{\"suite\":"
					    "\"will-it-scale\"},\"metrics\":{");
		for (int m = 0; m < 100; m++)
			n += (size_t)snprintf(body + n, sizeof(body) - n, "%s\"lz4.metric%03d\":[%d.5]",
					      m ? "," : "", m, m);
		snprintf(body + n, sizeof(body) - n, "}}");
		http_post_json(&k, "/api/v1/runs", TOKEN_COLLECTOR, body, &r);
		cr_expect_eq(r.status, 201, "%ld %s", r.status, r.body);
		resp_release(&r);
		cr_expect_eq(harness_count(&k, "SELECT count(*) FROM run WHERE run_id = 'lz4-1'"
					       " AND pg_column_compression(doc) = 'lz4'"),
			     1);
		http_get(&k, "/api/v1/runs/lz4-1", &r);
		cr_expect_eq(r.status, 200, "%ld %s", r.status, r.body);
		cr_expect(strstr(r.body, "\"lz4.metric099\": [99.5]") != NULL, "%s", r.body);
		resp_release(&r);
		/* its samples join the group the migration made */
		cr_expect_eq(harness_count(&k, "SELECT count(DISTINCT key_group_id) FROM sample"), 1);
		cr_expect_eq(harness_count(&k, "SELECT count(*) FROM key_group"), 1);
		http_get(&k, "/api/v1/trend?machine=old-m&suite=will-it-scale&metric=lz4.metric007",
			 &r);
		cr_expect_eq(r.status, 200, "%ld %s", r.status, r.body);
		cr_expect(strstr(r.body, "\"samples\":[7.5],\"runs\":[\"lz4-1\"]") != NULL, "%s",
			  r.body);
		resp_release(&r);
	}
	kperfd_stop(&k);
}
