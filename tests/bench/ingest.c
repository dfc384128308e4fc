/*
 * ingest.c - the ingest benchmark of `make bench`: realistic runs (60
 * metrics x 5 iterations) posted by 1, 4 and 16 concurrent clients over
 * keep-alive, in samples/s, against PostgreSQL's own COPY of the same rows
 * into a table of the same shape, measured in the same run.
 * Usage: ingest URL TOKEN CONNINFO [RUNS_PER_SETTING]
 */
#include <curl/curl.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

#define METRICS 60
#define ITERATIONS 5

static const char *url, *token, *tag = "a";
static int runs_per_setting = 400;

struct client {
	int id, n, setting, ok;
};

static void run_body(char *b, size_t cap, int setting, int client, int i)
{
	size_t len = 0;
	len += (size_t)snprintf(b + len, cap - len,
				"{\"run_id\":\"bench-%s-s%d-c%d-r%d\",\"machine\":{\"name\":\"bench-%d\"},"
				"\"kernel\":{\"release\":\"6.1.0-bench\"},\"test\":{\"suite\":"
				"\"will-it-scale\",\"params\":{\"nr_task\":\"%d\"}},\"metrics\":{",
				tag, setting, client, i, client % 4, i % 8);
	for (int m = 0; m < METRICS; m++) {
		len += (size_t)snprintf(b + len, cap - len, "%s\"monitor.metric%02d\":[", m ? "," : "",
					m);
		for (int it = 0; it < ITERATIONS; it++)
			len += (size_t)snprintf(b + len, cap - len, "%s%.3f", it ? "," : "",
						1000.0 + m * 10 + it + (i % 7) * 0.25);
		len += (size_t)snprintf(b + len, cap - len, "]");
	}
	snprintf(b + len, cap - len, "}}");
}

static void *client_main(void *arg)
{
	struct client *cl = arg;
	CURL *h = curl_easy_init();
	struct curl_slist *hdr = NULL;
	char target[256], auth[256];
	char *body = malloc(64 * 1024);

	snprintf(target, sizeof(target), "%s/api/v1/runs", url);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
	hdr = curl_slist_append(hdr, "Content-Type: application/json");
	hdr = curl_slist_append(hdr, auth);
	hdr = curl_slist_append(hdr, "Expect:");
	curl_easy_setopt(h, CURLOPT_URL, target);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
	for (int i = 0; i < cl->n; i++) {
		long status = 0;
		run_body(body, 64 * 1024, cl->setting, cl->id, i);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		if (curl_easy_perform(h) == CURLE_OK)
			curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
		cl->ok += status == 201;
	}
	free(body);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
	return NULL;
}

/* samples/s of ingest with n clients */
static double ingest(int setting, int nclients, int *ok)
{
	pthread_t th[64];
	struct client cl[64];
	double t0 = now_s();

	*ok = 0;
	for (int i = 0; i < nclients; i++) {
		cl[i] = (struct client){i, runs_per_setting / nclients, setting, 0};
		pthread_create(&th[i], NULL, client_main, &cl[i]);
	}
	for (int i = 0; i < nclients; i++) {
		pthread_join(th[i], NULL);
		*ok += cl[i].ok;
	}
	return (double)*ok * METRICS * ITERATIONS / (now_s() - t0);
}

/* rows/s of COPY of the same rows into kperf's own sample table (this
 * month's partition, its primary key and key-group index), under run ids no
 * run has (negative), spread over 32 key groups as the clients' runs are (4
 * machines x 8 nr_task), deleted afterwards */
static double copy_rate(const char *conninfo)
{
	PGconn *c = PQconnectdb(conninfo);
	PGresult *r;
	char line[128], at[32];
	double t0;
	long rows = 0;

	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "bench: %s", PQerrorMessage(c));
		exit(1);
	}
	r = PQexec(c, "SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')");
	snprintf(at, sizeof(at), "%s", PQgetvalue(r, 0, 0));
	PQclear(r);
	t0 = now_s();
	r = PQexec(c, "COPY sample (at, run_id, metric_id, iteration, value, key_group_id)"
		      " FROM STDIN");
	if (PQresultStatus(r) != PGRES_COPY_IN) {
		fprintf(stderr, "bench: COPY: %s", PQerrorMessage(c));
		exit(1);
	}
	PQclear(r);
	for (int run = 0; run < runs_per_setting; run++)
		for (int m = 0; m < METRICS; m++)
			for (int it = 0; it < ITERATIONS; it++) {
				int n = snprintf(line, sizeof(line),
						 "%s.%06d+00\t%d\t%d\t%d\t%.17g\t%d\n", at, run,
						 -(run + 1), m + 1, it, 1000.0 + m * 10 + it,
						 1 + run % 32);
				PQputCopyData(c, line, n);
				rows++;
			}
	PQputCopyEnd(c, NULL);
	r = PQgetResult(c);
	if (PQresultStatus(r) != PGRES_COMMAND_OK) {
		fprintf(stderr, "bench: COPY: %s", PQerrorMessage(c));
		exit(1);
	}
	PQclear(r);
	t0 = now_s() - t0;
	PQclear(PQexec(c, "DELETE FROM sample WHERE run_id < 0"));
	PQfinish(c);
	return (double)rows / t0;
}

int main(int argc, char **argv)
{
	static const int all[] = {1, 4, 16};
	const int *clients = all;
	int nsettings = 3, chosen[8];
	double copy;

	if (argc < 4) {
		fprintf(stderr, "usage: ingest URL TOKEN CONNINFO [RUNS_PER_SETTING [CLIENTS...]]\n"
				"  (BENCH_TAG=x makes the run_ids differ between invocations)\n");
		return 2;
	}
	url = argv[1];
	token = argv[2];
	if (getenv("BENCH_TAG"))
		tag = getenv("BENCH_TAG");
	if (argc > 4)
		runs_per_setting = (int)strtol(argv[4], NULL, 10);
	if (argc > 5) {
		nsettings = 0;
		for (int i = 5; i < argc && nsettings < 8; i++)
			chosen[nsettings++] = (int)strtol(argv[i], NULL, 10);
		clients = chosen;
	}
	curl_global_init(CURL_GLOBAL_ALL);
	copy = copy_rate(argv[3]);
	printf("ingest: %d runs per setting, %d metrics x %d iterations each\n", runs_per_setting,
	       METRICS, ITERATIONS);
	printf("%-44s %12s %12s\n", "what", "samples/s", "x COPY");
	printf("%-44s %12.0f %12s\n", "PostgreSQL COPY of the same rows (baseline)", copy, "1.00");
	for (int i = 0; i < nsettings; i++) {
		int ok;
		double rate = ingest(i, clients[i], &ok);
		char what[64];
		snprintf(what, sizeof(what), "POST /api/v1/runs, %d client%s (%d x 201)", clients[i],
			 clients[i] > 1 ? "s" : "", ok);
		printf("%-44s %12.0f %12.2f\n", what, rate, rate / copy);
	}
	return 0;
}
