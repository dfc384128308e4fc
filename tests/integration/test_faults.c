/*
 * test_faults.c - concurrency and faults: many clients at once, and
 * PostgreSQL stopped and restarted under a stream of posts.
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/integration/harness.h"

#define CLIENTS 8
#define RUNS_PER_CLIENT 200

/*
 * A posting client. statuses has room for n answers (attempt i posts run
 * c<id>-r<i>); with stop it posts until *stop is set, and says the main
 * thread how far it is: done attempts made (statuses[0..done) written
 * before), streak the 201s in a row last.
 */
struct client {
	const struct kperfd *k;
	int id;
	int n;
	int created, failed;
	long *statuses;
	int n503, n503_retry_after;
	atomic_int *stop;
	atomic_int done, streak;
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
	struct curl_slist *hdr;
	CURL *h = harness_runs_handle(cl->k, 30L, &hdr);
	char body[1024];
	int seen_retry;

	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, retry_after);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &seen_retry);
	for (int i = 0; i < cl->n && !(cl->stop && atomic_load(cl->stop)); i++) {
		long status = 0;
		seen_retry = 0;
		run_body(body, sizeof(body), cl->id, i);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		if (curl_easy_perform(h) == CURLE_OK)
			curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
		cl->statuses[i] = status;
		atomic_store(&cl->streak, status == 201 ? atomic_load(&cl->streak) + 1 : 0);
		atomic_store(&cl->done, i + 1);
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
		cl[i].statuses = calloc(RUNS_PER_CLIENT, sizeof(long));
		pthread_create(&th[i], NULL, client_main, &cl[i]);
	}
	for (int i = 0; i < CLIENTS; i++) {
		pthread_join(th[i], NULL);
		cr_expect_eq(cl[i].created, RUNS_PER_CLIENT, "client %d: %d created, %d failed",
			     i, cl[i].created, cl[i].failed + cl[i].n503);
		free(cl[i].statuses);
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

#define TREND_M0                                                                        \
	"/api/v1/trend?machine=m0&suite=will-it-scale&params=nr_task=0"                 \
	"&metric=will-it-scale.per_process_ops"

/* The trend of m0 into r once it answers other than 503 (the database away
 * or a pooled connection not reopened yet), at most 60 s. */
static void trend_until_not_503(const struct kperfd *k, struct resp *r)
{
	double end = harness_now() + 60;

	for (;;) {
		http_get(k, TREND_M0, r);
		if (r->status != 503 || harness_now() >= end)
			return;
		resp_release(r);
		usleep(100000);
	}
}

/* Room for the stream's attempts: one every 5 ms or more for the test's
 * waits, 60 s at most each. */
#define STREAM_MAX 100000

Test(faults, postgres_restart_mid_stream, .timeout = 300)
{
	struct pg_cluster pgc;
	atomic_int stop = 0;
	struct client cl;
	pthread_t th;
	struct resp r;
	struct kperfd k;
	int n201 = 0, n503 = 0, restarted;
	double end;

	curl_global_init(CURL_GLOBAL_ALL);
	pg_cluster_start(&pgc, "pgr", NULL);
	kperfd_start(&k, pgc.pg);

	memset(&cl, 0, sizeof(cl));
	cl.k = &k;
	cl.id = 0;
	cl.n = STREAM_MAX;
	cl.statuses = calloc(STREAM_MAX, sizeof(long));
	cl.stop = &stop;
	pthread_create(&th, NULL, client_main, &cl);
	/* the stream's first run (m0, nr_task=0) stored: the trend answers */
	end = harness_now() + 60;
	for (;;) {
		http_get(&k, TREND_M0, &r); /* its statements prepared on a connection */
		if (r.status == 200 || harness_now() >= end)
			break;
		resp_release(&r);
		usleep(50000);
	}
	cr_assert_eq(r.status, 200, "trend before the restart: %ld %s", r.status, r.body);
	resp_release(&r);
	cr_assert_eq(pg_cluster_ctl(&pgc, "stop"), 0);
	http_get(&k, "/healthz", &r);
	cr_expect_eq(r.status, 503, "healthz with the database down: %ld", r.status);
	cr_expect_str_eq(r.retry_after, "5");
	resp_release(&r);
	http_get(&k, TREND_M0, &r);
	cr_expect_eq(r.status, 503, "trend with the database down: %ld", r.status);
	resp_release(&r);
	usleep(700000);
	cr_assert_eq(pg_cluster_ctl(&pgc, "start"), 0);
	restarted = atomic_load(&cl.done);
	/* after the restart: a fresh connection, prepared anew (503 until kperfd
	 * has reopened it; anything else is an error) */
	trend_until_not_503(&k, &r);
	cr_expect_eq(r.status, 200, "trend after the restart: %ld %s", r.status, r.body);
	cr_expect(r.body && strstr(r.body, "\"points\":[{"), "%s", r.body);
	resp_release(&r);
	/* ingest works again: the stream's answers are 201 again, several in a row */
	end = harness_now() + 60;
	while (atomic_load(&cl.done) - restarted < 5 || atomic_load(&cl.streak) < 5) {
		cr_assert_lt(harness_now(), end,
			     "the stream got no 5 answers 201 in a row within 60 s of the restart");
		cr_assert_lt(atomic_load(&cl.done), STREAM_MAX, "the stream ran out of room");
		usleep(50000);
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	cl.n = atomic_load(&cl.done); /* the attempts made */

	for (int i = 0; i < cl.n; i++) {
		n201 += cl.statuses[i] == 201;
		n503 += cl.statuses[i] == 503;
	}
	cr_expect_gt(n503, 0, "no 503 while PostgreSQL was down");
	cr_expect_eq(cl.n503_retry_after, cl.n503, "a 503 without Retry-After");
	cr_expect_eq(cl.failed, 0, "answers other than 201/503");
	/* ingest works again after the restart: the last answer is 201 */
	cr_assert_gt(cl.n, 0);
	cr_expect_eq(cl.statuses[cl.n - 1], 201, "last answer %ld", cl.statuses[cl.n - 1]);
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
	free(cl.statuses);
	kperfd_stop(&k);
	pg_cluster_ctl(&pgc, "stop");
}

/* A socket from 127.0.0.<host> to kperfd that sends one byte of a request. */
static int slow_socket(int port, int host)
{
	struct sockaddr_in src, dst;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&src, 0, sizeof(src));
	src.sin_family = AF_INET;
	src.sin_addr.s_addr = htonl(0x7f000000u | (unsigned)host);
	memset(&dst, 0, sizeof(dst));
	dst.sin_family = AF_INET;
	dst.sin_port = htons((uint16_t)port);
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&src, sizeof(src)) ||
	    connect(fd, (struct sockaddr *)&dst, sizeof(dst))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (write(fd, "P", 1) != 1) {
		close(fd);
		return -1;
	}
	return fd;
}

Test(faults, slow_clients_do_not_lock_out_a_collector, .timeout = 120)
{
	struct kperfd k;
	struct resp r;
	int fds[200], open_fds = 0;
	char body[1024];

	kperfd_start(&k, NULL);
	for (int i = 0; i < 200; i++) {
		fds[i] = slow_socket(k.port, 2 + i);
		open_fds += fds[i] >= 0;
	}
	cr_expect_eq(open_fds, 200, "slow connections opened: %d", open_fds);
	/* one more byte a second from each, while a collector posts */
	for (int s = 0; s < 3; s++) {
		for (int i = 0; i < 200; i++)
			if (fds[i] >= 0 && write(fds[i], "O", 1) != 1) {
				close(fds[i]);
				fds[i] = -1;
			}
		run_body(body, sizeof(body), 99, s);
		http_post_json(&k, "/api/v1/runs", TOKEN_COLLECTOR, body, &r);
		cr_expect_eq(r.status, 201, "post %d during slow clients: %ld", s, r.status);
		resp_release(&r);
		sleep(1);
	}
	/* one address cannot take every connection either */
	{
		int mine[40], got = 0;
		for (int i = 0; i < 40; i++) {
			mine[i] = slow_socket(k.port, 250);
			got += mine[i] >= 0;
		}
		usleep(300000);
		http_get(&k, "/healthz", &r);
		cr_expect_eq(r.status, 200);
		resp_release(&r);
		for (int i = 0; i < 40; i++)
			if (mine[i] >= 0)
				close(mine[i]);
		cr_expect_gt(got, 0);
	}
	for (int i = 0; i < 200; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM run"), 3);
	kperfd_stop(&k);
}

/* Post n runs, retrying each (same run_id) until the server acknowledges it. */
struct retrier {
	const struct kperfd *k;
	int id, n;
	int acked, retries;
	atomic_int *stop;
};

static void *retrier_main(void *arg)
{
	struct retrier *rt = arg;
	CURL *h = curl_easy_init();
	struct curl_slist *hdr = NULL;
	char url[128], body[1024];

	hdr = curl_slist_append(hdr, "Content-Type: application/json");
	hdr = curl_slist_append(hdr, "Authorization: Bearer " TOKEN_COLLECTOR);
	hdr = curl_slist_append(hdr, "Expect:");
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 10L);
	for (int i = 0; i < rt->n; i++) {
		run_body(body, sizeof(body), 100 + rt->id, i);
		for (int attempt = 0; attempt < 600; attempt++) {
			long status = 0;
			/* the port file tells where kperfd listens now */
			snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/runs", rt->k->port);
			curl_easy_setopt(h, CURLOPT_URL, url);
			curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
			if (curl_easy_perform(h) == CURLE_OK)
				curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
			if (status == 201 || status == 200) {
				rt->acked++;
				break;
			}
			rt->retries++;
			usleep(100000);
		}
	}
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
	return NULL;
}

Test(faults, kill_9_under_load_then_restart, .timeout = 300)
{
	struct kperfd k;
	struct retrier rt[16];
	pthread_t th[16];
	int total = 0;

	curl_global_init(CURL_GLOBAL_ALL);
	kperfd_start(&k, NULL);
	for (int i = 0; i < 16; i++) {
		memset(&rt[i], 0, sizeof(rt[i]));
		rt[i].k = &k;
		rt[i].id = i;
		rt[i].n = 40;
		pthread_create(&th[i], NULL, retrier_main, &rt[i]);
	}
	usleep(700000);
	kill(k.pid, SIGKILL);
	waitpid(k.pid, NULL, 0);
	k.pid = 0;
	usleep(500000);
	kperfd_restart(&k);
	for (int i = 0; i < 16; i++) {
		pthread_join(th[i], NULL);
		cr_expect_eq(rt[i].acked, 40, "client %d: %d of 40 acknowledged", i, rt[i].acked);
		total += rt[i].acked;
	}
	/* every acknowledged run present, none twice, samples not doubled */
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM run WHERE run_id LIKE 'c1__-r%'"), total);
	cr_expect_eq(harness_count(&k, "SELECT count(DISTINCT run_id) FROM run"),
		     harness_count(&k, "SELECT count(*) FROM run"));
	cr_expect_eq(harness_count(&k, "SELECT count(*) FROM sample"),
		     4 * harness_count(&k, "SELECT count(*) FROM run"));
	kperfd_stop(&k);
}
