/*
 * test_readcache.c - trend and compare answered again from memory while the
 * database is unchanged, and never after a change: a run posted through
 * kperfd, a run invalidated behind kperfd's back (psql, or another kperfd
 * on the same database) and a transaction left open across the reads.
 * ETag revalidation answers 304; KPERF_READ_CACHE_BYTES=0 turns it all off.
 * Eight keep-alive readers on a cache too small for their six answers
 * (constant eviction while responses are still being sent) each get exactly
 * the answer of their key, run under ASan as well.
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/integration/harness.h"

static struct kperfd K;

TestSuite(readcache, .timeout = 120);

/*
 * Hit assertions run on a cluster of their own: snapshots are cluster-wide,
 * so the writes of tests running in parallel on the shared cluster would
 * turn them into misses. Autovacuum is off for the same reason.
 */
#define OWN_CLUSTER_OPTIONS "-c autovacuum=off -c fsync=off -c synchronous_commit=off"

#define SHA1 "cccccccccccccccccccccccccccccccccccccc01"
#define SHA2 "cccccccccccccccccccccccccccccccccccccc02"
#define TREND "/api/v1/trend?machine=rc-box&suite=rcbench&metric=rc.ops"

static void post_run(const char *run_id, const char *sha, int v0, int v1, int v2)
{
	char release[32];

	snprintf(release, sizeof(release), "6.1.0-%s", sha + 38);
	struct run_doc d = {
		.run_id = run_id,
		.machine = "rc-box",
		.commit = sha,
		.release = release,
		.suite = "rcbench",
		.metrics = json_pack("{s:[i,i,i]}", "rc.ops", v0, v1, v2),
	};

	harness_store_run(&K, &d);
}

/* kperf_read_cache_<name> from /metrics */
static long cache_counter(const char *name)
{
	char key[64];

	snprintf(key, sizeof(key), "kperf_read_cache_%s", name);
	return harness_metric(&K, key);
}

static void get(const char *path, struct resp *r)
{
	http_get(&K, path, r);
	cr_assert_eq(r->status, 200, "%s: %ld %s", path, r->status, r->body);
}

Test(readcache, repeated_reads_come_from_memory_until_anything_changes)
{
	struct resp a, b, c;
	long hits, misses;
	PGconn *db;
	PGresult *res;
	char inm[128];

	/* no decision worker: its writes would change the snapshot between reads */
	static const char *const env[] = {"KPERF_WORKER=0", NULL};
	struct pg_cluster cl;

	pg_cluster_start(&cl, "rc-hits", OWN_CLUSTER_OPTIONS);
	kperfd_env(env);
	kperfd_start(&K, cl.pg);
	kperfd_env(NULL);
	post_run("rc-1", SHA1, 100, 101, 102);
	post_run("rc-2", SHA2, 110, 111, 112);

	get(TREND, &a);
	cr_assert_str_neq(a.etag, "", "a cached read carries an ETag");
	hits = cache_counter("hits_total");
	misses = cache_counter("misses_total");
	get(TREND, &b);
	cr_assert_eq(cache_counter("hits_total"), hits + 1, "the same read again is a hit");
	cr_assert_eq(cache_counter("misses_total"), misses);
	cr_assert_eq(b.len, a.len);
	cr_assert_str_eq(b.body, a.body);
	cr_assert_str_eq(b.etag, a.etag);
	cr_assert_str_eq(b.content_type, "application/json");
	resp_release(&b);

	/* revalidation: the same ETag answers 304 without a body */
	snprintf(inm, sizeof(inm), "If-None-Match: %s", a.etag);
	http_get_with(&K, TREND, inm, &b);
	cr_assert_eq(b.status, 304);
	cr_assert_eq(b.len, 0);
	resp_release(&b);

	/* another query is another answer */
	http_get(&K, TREND "&variant=none=1", &b);
	cr_assert_eq(b.status, 404, "%ld %s", b.status, b.body);
	resp_release(&b);

	/* a run posted through kperfd shows at once */
	post_run("rc-3", SHA2, 140, 141, 142);
	get(TREND, &b);
	cr_assert(strstr(b.body, "\"rc-3\""), "%s", b.body);
	cr_assert_str_neq(b.etag, a.etag);
	http_get_with(&K, TREND, inm, &c);
	cr_assert_eq(c.status, 200, "an old ETag after a change gets the new answer");
	cr_assert_str_eq(c.body, b.body);
	resp_release(&c);
	resp_release(&b);

	/* a write behind kperfd's back (psql, another kperfd) shows at once too */
	get(TREND, &b);
	resp_release(&b);
	db = harness_db(&K);
	res = PQexec(db, "UPDATE run SET valid = false WHERE run_id = 'rc-3'");
	cr_assert_eq(PQresultStatus(res), PGRES_COMMAND_OK, "%s", PQerrorMessage(db));
	PQclear(res);
	get(TREND, &b);
	cr_assert_null(strstr(b.body, "\"rc-3\""), "%s", b.body);
	cr_assert_str_eq(b.body, a.body, "back to the first answer");
	resp_release(&b);

	/* a transaction open across two reads, then committed: the read after sees it */
	res = PQexec(db, "BEGIN");
	PQclear(res);
	res = PQexec(db, "UPDATE run SET valid = true WHERE run_id = 'rc-3'");
	cr_assert_eq(PQresultStatus(res), PGRES_COMMAND_OK, "%s", PQerrorMessage(db));
	PQclear(res);
	get(TREND, &b);
	cr_assert_null(strstr(b.body, "\"rc-3\""), "not committed yet");
	resp_release(&b);
	get(TREND, &b);
	cr_assert_null(strstr(b.body, "\"rc-3\""));
	resp_release(&b);
	res = PQexec(db, "COMMIT");
	cr_assert_eq(PQresultStatus(res), PGRES_COMMAND_OK, "%s", PQerrorMessage(db));
	PQclear(res);
	get(TREND, &b);
	cr_assert(strstr(b.body, "\"rc-3\""), "committed: %s", b.body);
	resp_release(&b);
	PQfinish(db);

	/* compare: JSON and LKP text are two answers with their own types */
	get("/api/v1/compare?base=" SHA1 "&target=" SHA2, &b);
	get("/api/v1/compare?base=" SHA1 "&target=" SHA2 "&format=lkp", &c);
	cr_assert_str_eq(b.content_type, "application/json");
	cr_assert(!strncmp(c.content_type, "text/plain", 10), "%s", c.content_type);
	cr_assert(strstr(b.body, "\"rc.ops\""), "%s", b.body);
	resp_release(&b);
	hits = cache_counter("hits_total");
	get("/api/v1/compare?base=" SHA1 "&target=" SHA2 "&format=lkp", &b);
	cr_assert(!strncmp(b.content_type, "text/plain", 10), "%s", b.content_type);
	cr_assert_str_eq(b.body, c.body);
	cr_assert_eq(cache_counter("hits_total"), hits + 1);
	resp_release(&b);
	resp_release(&c);
	cr_assert_geq(cache_counter("entries"), 3);
	cr_assert_gt(cache_counter("bytes"), (long)a.len);
	resp_release(&a);
	kperfd_stop(&K);
	pg_cluster_ctl(&cl, "stop");
}

Test(readcache, off_when_its_size_is_zero)
{
	static const char *const env[] = {"KPERF_READ_CACHE_BYTES=0", NULL};
	struct resp a;

	kperfd_env(env);
	kperfd_start(&K, NULL);
	kperfd_env(NULL);
	post_run("rc-1", SHA1, 100, 101, 102);
	for (int i = 0; i < 3; i++) {
		get(TREND, &a);
		cr_assert_str_eq(a.etag, "");
		cr_assert(strstr(a.body, "\"rc-1\""));
		resp_release(&a);
	}
	cr_assert_eq(cache_counter("hits_total"), 0);
	cr_assert_eq(cache_counter("entries"), 0);
	kperfd_stop(&K);
}

#define READERS 8
#define READS 150
#define KEYS 6

struct reader {
	int port, id;
	const char *const *want; /* the answer of each key */
	int ok, wrong;
};

struct body {
	char *data;
	size_t len;
};

static size_t grow(char *d, size_t s, size_t n, void *arg)
{
	struct body *b = arg;
	b->data = realloc(b->data, b->len + s * n + 1);
	memcpy(b->data + b->len, d, s * n);
	b->len += s * n;
	b->data[b->len] = '\0';
	return s * n;
}

static void *read_many(void *arg)
{
	struct reader *rd = arg;
	CURL *h = curl_easy_init();
	char url[256];
	unsigned seed = (unsigned)rd->id * 7919u + 1;

	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, grow);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
	for (int i = 0; i < READS; i++) {
		int key = (int)(rand_r(&seed) % KEYS);
		struct body b = {NULL, 0};
		long status = 0;

		snprintf(url, sizeof(url),
			 "http://127.0.0.1:%d/api/v1/trend?machine=rc-box&suite=rcbench&metric=rc.m%d",
			 rd->port, key);
		curl_easy_setopt(h, CURLOPT_URL, url);
		curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
		if (curl_easy_perform(h) == CURLE_OK)
			curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
		if (status == 200 && b.data && !strcmp(b.data, rd->want[key]))
			rd->ok++;
		else
			rd->wrong++;
		free(b.data);
	}
	curl_easy_cleanup(h);
	return NULL;
}

Test(readcache, concurrent_readers_on_a_cache_that_keeps_evicting)
{
	/* six answers of ~1.2 kB (with their keys) against 6 kB: at most four kept at a time */
	static const char *const env[] = {"KPERF_READ_CACHE_BYTES=6000", "KPERF_WORKER=0", NULL};
	const char *want[KEYS];
	struct resp r[KEYS];
	struct reader rd[READERS];
	pthread_t th[READERS];
	long misses;
	struct pg_cluster cl;

	pg_cluster_start(&cl, "rc-evict", OWN_CLUSTER_OPTIONS);
	kperfd_env(env);
	kperfd_start(&K, cl.pg);
	kperfd_env(NULL);
	for (int c = 0; c < 5; c++) {
		char body[1024], id[16], sha[64];
		struct resp p;

		snprintf(id, sizeof(id), "rcc-%d", c);
		snprintf(sha, sizeof(sha), "%038d%02d", 0, c + 10);
		snprintf(body, sizeof(body),
			 "{\"run_id\":\"%s\",\"machine\":{\"name\":\"rc-box\"},"
			 "\"kernel\":{\"commit\":\"%s\"},\"test\":{\"suite\":\"rcbench\"},"
			 "\"metrics\":{\"rc.m0\":[%d,1],\"rc.m1\":[%d,2],\"rc.m2\":[%d,3],"
			 "\"rc.m3\":[%d,4],\"rc.m4\":[%d,5],\"rc.m5\":[%d,6]}}",
			 id, sha, c, c, c, c, c, c);
		http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR, body, &p);
		cr_assert_eq(p.status, 201, "%ld %s", p.status, p.body);
		resp_release(&p);
	}
	for (int k = 0; k < KEYS; k++) {
		char path[128];
		snprintf(path, sizeof(path),
			 "/api/v1/trend?machine=rc-box&suite=rcbench&metric=rc.m%d", k);
		get(path, &r[k]);
		cr_assert(r[k].len > 1000 && r[k].len <= 1200, "answer %d is %zu bytes", k, r[k].len);
		want[k] = r[k].body;
	}
	misses = cache_counter("misses_total");
	for (int i = 0; i < READERS; i++) {
		rd[i] = (struct reader){K.port, i, want, 0, 0};
		pthread_create(&th[i], NULL, read_many, &rd[i]);
	}
	for (int i = 0; i < READERS; i++) {
		pthread_join(th[i], NULL);
		cr_expect_eq(rd[i].wrong, 0, "reader %d: %d wrong answers", i, rd[i].wrong);
		cr_expect_eq(rd[i].ok, READS);
	}
	cr_assert_leq(cache_counter("entries"), 4);
	cr_assert_gt(cache_counter("hits_total"), 0);
	cr_assert_gt(cache_counter("misses_total"), misses + KEYS, "answers were evicted and read again");
	for (int k = 0; k < KEYS; k++)
		resp_release(&r[k]);
	kperfd_stop(&K);
	pg_cluster_ctl(&cl, "stop");
}
