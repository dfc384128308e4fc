/*
 * ingest.c - the ingest benchmark of `make bench`: realistic runs (60
 * metrics x 5 iterations) posted by 1, 4 and 16 concurrent clients over
 * keep-alive, in samples/s, against PostgreSQL's own COPY of the same rows
 * into a table of the same shape, measured in the same run. Each setting
 * runs in rounds (BENCH_INGEST_ROUNDS, 5): a COPY of the round's rows, then
 * the round's posts, so a baseline and the posts compared with it are
 * measured seconds apart, not minutes (this machine's speed drifts by 20-30%
 * over a minute); the ratio printed is the median of the rounds' ratios,
 * with their range.
 * Usage: ingest URL TOKEN CONNINFO [RUNS_PER_SETTING [CLIENTS...]]
 */
#include <curl/curl.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/bench/bench.h"

#define METRICS 60
#define ITERATIONS 5

static const char *url, *token, *tag = "a";
static int runs_per_setting = 400, rounds = 5;

struct client {
	int id, first, n, setting, ok;
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
	for (int i = cl->first; i < cl->first + cl->n; i++) {
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

/* samples/s of ingest with n clients, each posting runs [first, first + n) of
 * its own */
static double ingest(int setting, int nclients, int first, int n, int *ok)
{
	pthread_t th[64];
	struct client cl[64];
	double t0 = now_s();

	*ok = 0;
	for (int i = 0; i < nclients; i++) {
		cl[i] = (struct client){i, first, n, setting, 0};
		pthread_create(&th[i], NULL, client_main, &cl[i]);
	}
	for (int i = 0; i < nclients; i++) {
		pthread_join(th[i], NULL);
		*ok += cl[i].ok;
	}
	return (double)*ok * METRICS * ITERATIONS / (now_s() - t0);
}

static int copied; /* runs copied so far: each COPY has run ids of its own */

static PGconn *connect_db(const char *conninfo)
{
	PGconn *c = PQconnectdb(conninfo);

	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "bench: %s", PQerrorMessage(c));
		exit(1);
	}
	return c;
}

/* rows/s of COPY of the same rows into kperf's own sample table (this
 * month's partition, its primary key and key-group index), under run ids no
 * run has (negative, new in every COPY: a COPY among the dead entries of an
 * earlier one slows down), spread over 32 key groups as the clients' runs
 * are (4 machines x 8 nr_task); copy_cleanup deletes them */
static double copy_rate(const char *conninfo, int runs)
{
	PGconn *c = connect_db(conninfo);
	PGresult *r;
	char line[128], at[32];
	double t0;
	long rows = 0;

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
	for (int run = 0; run < runs; run++)
		for (int m = 0; m < METRICS; m++)
			for (int it = 0; it < ITERATIONS; it++) {
				int n = snprintf(line, sizeof(line),
						 "%s.%06d+00\t%d\t%d\t%d\t%.17g\t%d\n", at, run,
						 -(copied + run + 1), m + 1, it, 1000.0 + m * 10 + it,
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
	copied += runs;
	PQfinish(c);
	return (double)rows / t0;
}

/* Delete the copied rows, and vacuum the partitions they were in, so the
 * benchmarks after this one find no dead rows of it. */
static void copy_cleanup(const char *conninfo)
{
	PGconn *c = connect_db(conninfo);
	PGresult *r = PQexec(c, "SELECT DISTINCT tableoid::regclass::text FROM sample"
				" WHERE run_id < 0");

	PQclear(PQexec(c, "DELETE FROM sample WHERE run_id < 0"));
	for (int i = 0; i < PQntuples(r); i++) {
		char sql[128];
		snprintf(sql, sizeof(sql), "VACUUM %s", PQgetvalue(r, i, 0));
		PQclear(PQexec(c, sql));
	}
	PQclear(r);
	PQfinish(c);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	static const int all[] = {1, 4, 16};
	const int *clients = all;
	int nsettings = 3, chosen[8];
	double copy_rows = 0, copy_time = 0;
	struct {
		double rows, time, ratio[16];
		int ok;
	} set[8] = {{0}};

	if (argc < 4) {
		fprintf(stderr, "usage: ingest URL TOKEN CONNINFO [RUNS_PER_SETTING [CLIENTS...]]\n"
				"  (BENCH_TAG=x makes the run_ids differ between invocations,\n"
				"   BENCH_INGEST_ROUNDS=n splits each setting into n rounds, 1-16)\n");
		return 2;
	}
	url = argv[1];
	token = argv[2];
	if (getenv("BENCH_TAG"))
		tag = getenv("BENCH_TAG");
	if (getenv("BENCH_INGEST_ROUNDS"))
		rounds = (int)strtol(getenv("BENCH_INGEST_ROUNDS"), NULL, 10);
	if (rounds < 1 || rounds > 16)
		rounds = 5;
	if (argc > 4)
		runs_per_setting = (int)strtol(argv[4], NULL, 10);
	if (argc > 5) {
		nsettings = 0;
		for (int i = 5; i < argc && nsettings < 8; i++)
			chosen[nsettings++] = (int)strtol(argv[i], NULL, 10);
		clients = chosen;
	}
	curl_global_init(CURL_GLOBAL_ALL);
	for (int i = 0; i < nsettings; i++) {
		int per = runs_per_setting / rounds / clients[i]; /* runs per client and round */
		for (int k = 0; k < rounds; k++) {
			int ok;
			double c = copy_rate(argv[3], per * clients[i]), rate;
			copy_rows += (double)per * clients[i] * METRICS * ITERATIONS;
			copy_time += (double)per * clients[i] * METRICS * ITERATIONS / c;
			rate = ingest(i, clients[i], k * per, per, &ok);
			set[i].ok += ok;
			set[i].rows += (double)ok * METRICS * ITERATIONS;
			set[i].time += (double)ok * METRICS * ITERATIONS / rate;
			set[i].ratio[k] = rate / c;
		}
	}
	printf("ingest: %d runs per setting in %d rounds (a COPY of the round's rows, then its"
	       " posts), %d metrics x %d iterations each\n",
	       runs_per_setting, rounds, METRICS, ITERATIONS);
	printf("%-44s %12s %12s %12s\n", "what", "samples/s", "x COPY", "rounds");
	printf("%-44s %12.0f %12s %12s\n", "PostgreSQL COPY of the same rows (baseline)",
	       copy_rows / copy_time, "1.00", "-");
	for (int i = 0; i < nsettings; i++) {
		char what[64], range[32];
		qsort(set[i].ratio, (size_t)rounds, sizeof(double), cmp_double);
		snprintf(what, sizeof(what), "POST /api/v1/runs, %d client%s (%d x 201)", clients[i],
			 clients[i] > 1 ? "s" : "", set[i].ok);
		snprintf(range, sizeof(range), "%.2f-%.2f", set[i].ratio[0], set[i].ratio[rounds - 1]);
		/* the median of the rounds' ratios (of the middle two when even) */
		printf("%-44s %12.0f %12.2f %12s\n", what, set[i].rows / set[i].time,
		       (set[i].ratio[(rounds - 1) / 2] + set[i].ratio[rounds / 2]) / 2, range);
	}
	copy_cleanup(argv[3]);
	return 0;
}
