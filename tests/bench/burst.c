/*
 * burst.c - the decision benchmark of `make bench`: a bulk import of
 * single-metric runs (GROUPS key groups x COMMITS commits in a chain, 3-5
 * runs each) posted in batches by a few clients, then the time from its last
 * POST to its last decision against the time its ingest took (goal: at most
 * 2x), and, while the import is posted and decided, the time from POST to
 * stored decision of fresh commits on another key group, posted alone in a
 * small request each, one a second (goal: under 2 s).
 * Usage: burst URL TOKEN CONNINFO [GROUPS [COMMITS]]   (600 x 9 by default;
 * BENCH_TAG=x makes run ids, machines and commits differ between runs;
 * BENCH_BURST_CLIENTS=n posts with n clients; BENCH_BURST_INGEST_ONLY=1
 * stops after the import, for a kperfd started without its worker)
 */
#include <curl/curl.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/bench/bench.h"

#define TESTS 50        /* key groups: machines x TESTS params */
#define CLIENTS 4       /* posting the import at once (BENCH_BURST_CLIENTS) */
#define BATCH_RUNS 200  /* runs per POST of the import */
#define FRESH_MAX 256   /* fresh commits posted while the import is posted and decided */
#define TIMEOUT_S 600.0 /* give up waiting for the decisions */
#define METRIC "will-it-scale.per_process_ops"

static const char *url, *token, *tag = "a";
static int groups = 600, commits = 9, clients = CLIENTS;
static unsigned tag_hash;

struct run {
	int group, commit, rep;
};
static struct run *runs;
static size_t nruns;
static atomic_size_t next_run; /* the clients take batches in order */
static atomic_int failed_posts, clients_left;

/* A deterministic number in [0, 1) for (a, b, c). */
static double unit(unsigned a, unsigned b, unsigned c)
{
	uint64_t x = (uint64_t)a * 0x9E3779B97F4A7C15u ^ (uint64_t)b * 0xC2B2AE3D27D4EB4Fu ^
		     (uint64_t)c * 0x165667B19E3779F9u ^ tag_hash;
	x ^= x >> 31;
	x *= 0xBF58476D1CE4E5B9u;
	x ^= x >> 29;
	return (double)(x >> 11) / 9007199254740992.0;
}

static void sha_of(char out[41], const char *line, int k)
{
	snprintf(out, 41, "%08x%s%027d", tag_hash, line, k); /* 8 + 5 + 27 hex digits */
}

/* Runs per (group, commit): 3 to 5. */
static int reps_of(int g, int k)
{
	return 3 + (int)(unit((unsigned)g, (unsigned)k, 1) * 3);
}

/*
 * The level of a group at a commit: every 20th group from group 3 loses 10%
 * at commit 5 and keeps it (a regression); every 20th from group 7 loses 10%
 * at commit 4 and gets it back at commit 7 (a regression and its recovery).
 */
static double level_of(int g, int k)
{
	double base = 1000.0 + 37.0 * g;
	if (g % 20 == 3 && k >= 5)
		return base * 0.9;
	if (g % 20 == 7 && k >= 4 && k < 7)
		return base * 0.9;
	return base;
}

static size_t run_json(char *b, size_t cap, const struct run *r)
{
	char sha[41], parent[41], pl[64] = "";
	double v = level_of(r->group, r->commit) *
		   (1 + (unit((unsigned)r->group, (unsigned)r->commit, (unsigned)r->rep + 7) - 0.5) *
				0.02);

	sha_of(sha, "b0b0b", r->commit);
	if (r->commit) {
		sha_of(parent, "b0b0b", r->commit - 1);
		snprintf(pl, sizeof(pl), ",\"parent\":\"%s\"", parent);
	}
	return (size_t)snprintf(b, cap,
				"{\"run_id\":\"burst-%s-g%d-c%d-r%d\",\"machine\":{\"name\":"
				"\"burst-%s-m%02d\"},\"kernel\":{\"commit\":\"%s\"%s},\"test\":"
				"{\"suite\":\"will-it-scale\",\"params\":{\"test\":\"t%02d\"}},"
				"\"metrics\":{\"" METRIC "\":[%.3f]}}",
				tag, r->group, r->commit, r->rep, tag, r->group / TESTS, sha, pl,
				r->group % TESTS, v);
}

static CURL *client_new(struct curl_slist **hdr)
{
	CURL *h = curl_easy_init();
	static char target[256], auth[256];

	snprintf(target, sizeof(target), "%s/api/v1/runs", url);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
	*hdr = curl_slist_append(NULL, "Content-Type: application/json");
	*hdr = curl_slist_append(*hdr, auth);
	*hdr = curl_slist_append(*hdr, "Expect:");
	curl_easy_setopt(h, CURLOPT_URL, target);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, *hdr);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
	return h;
}

static long post(CURL *h, const char *body)
{
	long status = 0;

	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	if (curl_easy_perform(h) == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	return status;
}

static void *client_main(void *arg)
{
	struct curl_slist *hdr;
	CURL *h = client_new(&hdr);
	size_t cap = BATCH_RUNS * 512 + 64;
	char *body = malloc(cap);

	(void)arg;
	for (;;) {
		size_t first = atomic_fetch_add(&next_run, BATCH_RUNS), len;
		if (first >= nruns)
			break;
		len = (size_t)snprintf(body, cap, "{\"runs\":[");
		for (size_t i = first; i < nruns && i < first + BATCH_RUNS; i++) {
			if (i > first)
				body[len++] = ',';
			len += run_json(body + len, cap - len, &runs[i]);
		}
		snprintf(body + len, cap - len, "]}");
		if (post(h, body) != 201)
			atomic_fetch_add(&failed_posts, 1);
	}
	free(body);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
	atomic_fetch_sub(&clients_left, 1);
	return NULL;
}

/* A fresh commit k on its own key group: 3 runs in one request; commit 1
 * is 11.5% slower than commit 0, the others keep its level. */
static long post_fresh(CURL *h, int k)
{
	char body[4096], sha[41], parent[41], pl[64] = "";
	size_t len = (size_t)snprintf(body, sizeof(body), "{\"runs\":[");

	sha_of(sha, "f0f0f", k);
	if (k) {
		sha_of(parent, "f0f0f", k - 1);
		snprintf(pl, sizeof(pl), ",\"parent\":\"%s\"", parent);
	}
	for (int i = 0; i < 3; i++)
		len += (size_t)snprintf(body + len, sizeof(body) - len,
					"%s{\"run_id\":\"fresh-%s-c%d-r%d\",\"machine\":{\"name\":"
					"\"fresh-%s\"},\"kernel\":{\"commit\":\"%s\"%s},\"test\":"
					"{\"suite\":\"vm-scalability\",\"params\":{\"test\":"
					"\"lru-file-mmap-read\"}},\"metrics\":{\"vm-scalability."
					"throughput\":[%.0f]}}",
					i ? "," : "", tag, k, i, tag, sha, pl,
					(k ? 18336098.0 : 20717269.0) * (1 + (i - 1) * 0.002));
	snprintf(body + len, sizeof(body) - len, "]}");
	return post(h, body);
}

static PGconn *connect_db(const char *conninfo)
{
	PGconn *c = PQconnectdb(conninfo);

	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "burst: %s", PQerrorMessage(c));
		exit(1);
	}
	return c;
}

static long count(PGconn *c, const char *sql, const char *param)
{
	const char *params[1] = {param};
	PGresult *r = PQexecParams(c, sql, param ? 1 : 0, NULL, params, NULL, NULL, 0);
	long n = -1;

	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
		n = strtol(PQgetvalue(r, 0, 0), NULL, 10);
	else
		fprintf(stderr, "burst: %s", PQerrorMessage(c));
	PQclear(r);
	return n;
}

static const char SQL_DECIDED_SHA[] =
	"SELECT count(*) FROM decision d JOIN commits c ON c.id = d.commit_id WHERE c.sha = $1";
static const char SQL_BURST_DECISIONS[] =
	"SELECT count(*) FROM decision d JOIN machine m ON m.id = d.machine_id"
	" WHERE m.name LIKE $1";
static const char SQL_QUEUED[] = "SELECT count(*) FROM decision_queue";

/* The arguments and BENCH_* variables into the globals; 0, or 2 (usage). */
static int parse_args(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: burst URL TOKEN CONNINFO [GROUPS [COMMITS]]\n");
		return 2;
	}
	url = argv[1];
	token = argv[2];
	if (getenv("BENCH_TAG"))
		tag = getenv("BENCH_TAG");
	for (const char *p = tag; *p; p++)
		tag_hash = tag_hash * 31 + (unsigned char)*p;
	if (getenv("BENCH_BURST_CLIENTS"))
		clients = (int)strtol(getenv("BENCH_BURST_CLIENTS"), NULL, 10);
	if (clients < 1 || clients > 64)
		clients = CLIENTS;
	if (argc > 4)
		groups = (int)strtol(argv[4], NULL, 10);
	if (argc > 5)
		commits = (int)strtol(argv[5], NULL, 10);
	if (groups < 1 || groups > 100000 || commits < 2 || commits > 1000) {
		fprintf(stderr, "burst: GROUPS 1-100000, COMMITS 2-1000\n");
		return 2;
	}
	return 0;
}

/* The burst's figures; t_done runs from the import's last answer to the last
 * decision. */
static void print_report(PGconn *db, const char *like, double t_ingest, double t_done,
			 double worst, int nfresh, const double *fresh_lat,
			 const int *fresh_during)
{
	printf("decisions: a burst of %zu single-metric runs (%d key groups x %d commits, 3-5 runs"
	       " each), %d clients posting %d runs a request\n",
	       nruns, groups, commits, clients, BATCH_RUNS);
	printf("%-60s %10s\n", "what", "seconds");
	printf("%-60s %10.2f\n", "ingest of the burst (first POST to last answer)", t_ingest);
	printf("%-60s %10.2f  %.2f x ingest (goal <= 2)\n",
	       "last POST to last decision", t_done, t_done / t_ingest);
	printf("%-60s %10.2f  of %d, each (goal < 2 s; * during the import):\n  ",
	       "fresh commit, POST to stored decision (max)", worst, nfresh);
	for (int i = 0; i < nfresh; i++)
		printf(" %.2f%s", fresh_lat[i], fresh_during[i] ? "*" : "");
	printf("\n");
	printf("decisions stored: %ld (%ld regressions, %ld of them recovered; planted: %d, %d)\n",
	       count(db, SQL_BURST_DECISIONS, like),
	       count(db,
		     "SELECT count(*) FROM decision d JOIN machine m ON m.id = d.machine_id"
		     " WHERE m.name LIKE $1 AND d.verdict = 'regression'",
		     like),
	       count(db,
		     "SELECT count(*) FROM decision d JOIN machine m ON m.id = d.machine_id"
		     " WHERE m.name LIKE $1 AND d.recovered_by IS NOT NULL",
		     like),
	       (groups + 16) / 20 + (groups + 12) / 20, (groups + 12) / 20);
}

int main(int argc, char **argv)
{
	pthread_t th[64];
	struct curl_slist *hdr;
	CURL *h;
	PGconn *db;
	char like[64], sha[41];
	double t0, t_ingest = 0, t_done = 0, fresh_post[FRESH_MAX], fresh_lat[FRESH_MAX];
	double worst = 0, next_fresh;
	long want, have = 0;
	int nfresh = 0, fresh_done = 0, fresh_during[FRESH_MAX];

	if (parse_args(argc, argv))
		return 2;
	curl_global_init(CURL_GLOBAL_ALL);
	db = connect_db(argv[3]);
	h = client_new(&hdr);
	snprintf(like, sizeof(like), "burst-%s-m%%", tag);

	/* the fresh key group's first commit, decided before the import */
	if (post_fresh(h, 0) != 201) {
		fprintf(stderr, "burst: posting the fresh group's first commit failed\n");
		return 1;
	}

	/* the import, commit by commit as a lab's history would come */
	runs = calloc((size_t)groups * (size_t)commits * 5, sizeof(*runs));
	for (int k = 0; k < commits; k++)
		for (int g = 0; g < groups; g++)
			for (int r = 0; r < reps_of(g, k); r++)
				runs[nruns++] = (struct run){g, k, r};
	atomic_store(&clients_left, clients);
	t0 = now_s();
	for (int i = 0; i < clients; i++)
		pthread_create(&th[i], NULL, client_main, NULL);
	if (getenv("BENCH_BURST_INGEST_ONLY")) { /* for a kperfd without its worker */
		for (int i = 0; i < clients; i++)
			pthread_join(th[i], NULL);
		printf("ingest of %zu runs: %.2f s (%d posts failed)\n", nruns, now_s() - t0,
		       (int)failed_posts);
		return failed_posts != 0;
	}

	/*
	 * Until every group is decided: a fresh commit every second from half
	 * a second into the import, and one right after its last POST, each
	 * timed from its POST to its stored decision.
	 */
	want = (long)groups * (commits - 1);
	next_fresh = t0 + 0.5;
	for (;;) {
		double now = now_s();
		if (!t_ingest && !atomic_load(&clients_left)) {
			for (int i = 0; i < clients; i++)
				pthread_join(th[i], NULL);
			t_ingest = now - t0;
			if (failed_posts) {
				fprintf(stderr, "burst: %d posts of the import failed\n",
					(int)failed_posts);
				return 1;
			}
			next_fresh = now;
		}
		if (!t_done && nfresh < FRESH_MAX && now >= next_fresh) {
			fresh_post[nfresh] = now;
			fresh_during[nfresh] = !t_ingest;
			if (post_fresh(h, nfresh + 1) != 201) {
				fprintf(stderr, "burst: posting fresh commit %d failed\n", nfresh + 1);
				return 1;
			}
			nfresh++;
			next_fresh = now + 1.0;
		}
		while (fresh_done < nfresh) {
			sha_of(sha, "f0f0f", fresh_done + 1);
			if (count(db, SQL_DECIDED_SHA, sha) < 1)
				break;
			fresh_lat[fresh_done] = now_s() - fresh_post[fresh_done];
			if (fresh_lat[fresh_done] > worst)
				worst = fresh_lat[fresh_done];
			fresh_done++;
		}
		if (t_ingest && !t_done && (have = count(db, SQL_BURST_DECISIONS, like)) >= want &&
		    count(db, SQL_QUEUED, NULL) == 0)
			t_done = now_s();
		if (t_done && fresh_done == nfresh)
			break;
		if (now_s() - t0 > TIMEOUT_S) {
			fprintf(stderr, "burst: %ld of %ld decisions after %.0f s\n", have, want,
				TIMEOUT_S);
			return 1;
		}
		usleep(10000);
	}
	t_done -= t0 + t_ingest;
	print_report(db, like, t_ingest, t_done, worst, nfresh, fresh_lat, fresh_during);
	PQfinish(db);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
	free(runs);
	return 0;
}
