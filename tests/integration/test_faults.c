/*
 * test_faults.c - concurrency and faults: many clients at once, and
 * PostgreSQL stopped and restarted under a stream of posts.
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define CLIENTS 8
#define RUNS_PER_CLIENT 200

struct client {
	const struct kperfd *k;
	int id;
	int n;
	int created, failed;
	long statuses[600];
	int n503, n503_retry_after;
	atomic_int *stop;
};

static size_t discard(char *d, size_t s, size_t n, void *a)
{
	(void)d;
	(void)a;
	return s * n;
}

static size_t retry_after(char *d, size_t s, size_t n, void *a)
{
	int *seen = a;
	if (s * n > 12 && !strncasecmp(d, "Retry-After:", 12))
		*seen = 1;
	return s * n;
}

static void run_body(char *buf, size_t cap, int client, int i)
{
	snprintf(buf, cap,
		 "{\"run_id\":\"c%d-r%d\",\"machine\":{\"name\":\"m%d\",\"nr_cpus\":2},"
		 "\"kernel\":{\"commit\":\"1431d4d11abb265e79cd44bed2f5ea93f1bcc57b\"},"
		 "\"variant\":{\"lru_gen\":\"%s\"},"
		 "\"test\":{\"suite\":\"will-it-scale\",\"params\":{\"nr_task\":\"%d\"}},"
		 "\"metrics\":{\"will-it-scale.per_process_ops\":[%d,%d,%d],"
		 "\"proc-vmstat.pgscan_kswapd\":%d}}",
		 client, i, client % 2, i % 2 ? "on" : "off", i % 4, i, i + 1, i + 2, client);
}

/* Post runs until n are done (or *stop is set); keep-alive on one handle. */
static void *client_main(void *arg)
{
	struct client *cl = arg;
	CURL *h = curl_easy_init();
	struct curl_slist *hdr = NULL;
	char url[128], body[1024];
	int seen_retry;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/runs", cl->k->port);
	hdr = curl_slist_append(hdr, "Content-Type: application/json");
	hdr = curl_slist_append(hdr, "Authorization: Bearer " TOKEN_COLLECTOR);
	hdr = curl_slist_append(hdr, "Expect:");
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, retry_after);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &seen_retry);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
	for (int i = 0; i < cl->n && !(cl->stop && atomic_load(cl->stop)); i++) {
		long status = 0;
		seen_retry = 0;
		run_body(body, sizeof(body), cl->id, i);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		if (curl_easy_perform(h) == CURLE_OK)
			curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
		cl->statuses[i] = status;
		if (status == 201)
			cl->created++;
		else if (status == 503) {
			cl->n503++;
			cl->n503_retry_after += seen_retry;
		} else
			cl->failed++;
		if (cl->stop)
			usleep(5000);
	}
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
	return NULL;
}

Test(faults, eight_clients_two_hundred_runs_each, .timeout = 300)
{
	struct kperfd k;
	struct client cl[CLIENTS];
	pthread_t th[CLIENTS];
	struct resp r;
	json_t *j;

	curl_global_init(CURL_GLOBAL_ALL);
	kperfd_start(&k, NULL);
	for (int i = 0; i < CLIENTS; i++) {
		memset(&cl[i], 0, sizeof(cl[i]));
		cl[i].k = &k;
		cl[i].id = i;
		cl[i].n = RUNS_PER_CLIENT;
		pthread_create(&th[i], NULL, client_main, &cl[i]);
	}
	for (int i = 0; i < CLIENTS; i++) {
		pthread_join(th[i], NULL);
		cr_expect_eq(cl[i].created, RUNS_PER_CLIENT, "client %d: %d created, %d failed",
			     i, cl[i].created, cl[i].failed + cl[i].n503);
	}
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM run"), CLIENTS * RUNS_PER_CLIENT);
	cr_expect_eq(harness_count(&k, "SELECT count(DISTINCT run_id) FROM run"),
		     CLIENTS * RUNS_PER_CLIENT);
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM sample"), CLIENTS * RUNS_PER_CLIENT * 4);
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM machine"), 2);
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM metric"), 2);
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM variant"), 2);
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM test"), 4);
	http_get(&k, "/api/v1/runs?limit=1", &r);
	j = resp_json(&r);
	cr_expect_eq(json_number_value(json_object_get(j, "total")), CLIENTS * RUNS_PER_CLIENT);
	json_decref(j);
	resp_release(&r);
	kperfd_stop(&k);
}

static int pg_ctl(const char *verb, const char *dir, int port)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "scripts/pg.sh %s %s %d >/dev/null 2>&1", verb, dir, port);
	return system(cmd);
}

Test(faults, postgres_restart_mid_stream, .timeout = 300)
{
	const char *tmp = getenv("KPERF_TEST_TMP") ? getenv("KPERF_TEST_TMP") : "/tmp";
	char dir[512], pg[700];
	int port = 56000 + getpid() % 1000;
	atomic_int stop = 0;
	struct client cl;
	pthread_t th;
	struct resp r;
	struct kperfd k;
	int n201 = 0, n503 = 0;

	curl_global_init(CURL_GLOBAL_ALL);
	snprintf(dir, sizeof(dir), "%s/pgr-%d", tmp, (int)getpid());
	cr_assert_eq(pg_ctl("start", dir, port), 0, "cannot start a second cluster in %s", dir);
	snprintf(pg, sizeof(pg), "host=%s/sock port=%d user=kperf", dir, port);
	kperfd_start(&k, pg);

	memset(&cl, 0, sizeof(cl));
	cl.k = &k;
	cl.id = 0;
	cl.n = 600;
	cl.stop = &stop;
	pthread_create(&th, NULL, client_main, &cl);
	usleep(500000);
	cr_assert_eq(pg_ctl("stop", dir, port), 0);
	http_get(&k, "/healthz", &r);
	cr_expect_eq(r.status, 503, "healthz with the database down: %ld", r.status);
	cr_expect_str_eq(r.retry_after, "5");
	resp_release(&r);
	usleep(700000);
	cr_assert_eq(pg_ctl("start", dir, port), 0);
	usleep(1500000);
	atomic_store(&stop, 1);
	pthread_join(th, NULL);

	for (int i = 0; i < cl.n; i++) {
		n201 += cl.statuses[i] == 201;
		n503 += cl.statuses[i] == 503;
	}
	cr_expect_gt(n503, 0, "no 503 while PostgreSQL was down");
	cr_expect_eq(cl.n503_retry_after, cl.n503, "a 503 without Retry-After");
	cr_expect_eq(cl.failed, 0, "answers other than 201/503");
	/* ingest works again after the restart: the last answers are 201 */
	{
		int last = 0;
		while (last < cl.n - 1 && cl.statuses[last + 1])
			last++;
		cr_expect_eq(cl.statuses[last], 201, "last answer %ld", cl.statuses[last]);
	}
	/* every 201 is stored, once; nothing is stored twice */
	{
		PGconn *c = harness_db(&k);
		for (int i = 0; i < cl.n; i++) {
			char id[32];
			const char *params[1] = {id};
			PGresult *res;
			if (cl.statuses[i] != 201)
				continue;
			snprintf(id, sizeof(id), "c0-r%d", i);
			res = PQexecParams(c, "SELECT count(*) FROM run WHERE run_id = $1", 1, NULL,
					   params, NULL, NULL, 0);
			cr_expect_str_eq(PQgetvalue(res, 0, 0), "1", "run %s acknowledged but not stored",
					 id);
			PQclear(res);
		}
		PQfinish(c);
	}
	cr_expect_geq(harness_count(&k, "SELECT count(*) FROM run"), n201);
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM sample"),
		     4 * harness_count(&k, "SELECT count(*) FROM run"));
	/* the client retries what got 503: each is stored now, exactly once */
	for (int i = 0; i < cl.n; i++) {
		char body[1024];
		if (cl.statuses[i] != 503)
			continue;
		run_body(body, sizeof(body), 0, i);
		http_post_json(&k, "/api/v1/runs", TOKEN_COLLECTOR, body, &r);
		cr_expect(r.status == 201 || r.status == 200, "retry of r%d: %ld", i, r.status);
		resp_release(&r);
	}
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM run"), n201 + n503);
	kperfd_stop(&k);
	pg_ctl("stop", dir, port);
}
