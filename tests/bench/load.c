/*
 * load.c - the HTTP load generator of `make bench`: C clients on keep-alive
 * connections (libcurl), each sending its share of N requests, with the
 * latency of every request kept for the percentiles.
 * Usage: load [-c CLIENTS] [-n REQUESTS] [-t TOKEN] [-d BODYFILE] [-s STATUS] [-k KEYS] URL
 * Prints one line: requests ok p50_ms p99_ms requests_per_s
 * (-d posts the file's bytes; -s names the status that counts as ok, 200 by
 * default; any other status is counted and the first few are reported).
 * With -k, "{i}" in URL becomes the request's number modulo KEYS, zero-padded
 * to the width of KEYS - 1: -k 200 and metric=wis.m{i} read 200 different
 * trends, each first request a miss of kperfd's read cache.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/bench/bench.h"
#include <unistd.h>

static const char *url, *token;
static char *body;
static size_t body_len;
static long want_status = 200;
static double *lat;
static int nreq, nclients = 1, nkeys;

/* url with "{i}" replaced by key (see -k), into out */
static void url_of(int key, char *out, size_t cap)
{
	const char *at = strstr(url, "{i}");
	int width = snprintf(NULL, 0, "%d", nkeys > 1 ? nkeys - 1 : 0);

	if (!nkeys || !at) {
		snprintf(out, cap, "%s", url);
		return;
	}
	snprintf(out, cap, "%.*s%0*d%s", (int)(at - url), url, width, key % nkeys, at + 3);
}

struct client {
	int first, n, ok;
};

static void *client_main(void *arg)
{
	struct client *cl = arg;
	CURL *h = curl_easy_init();
	struct curl_slist *hdr = NULL;
	char auth[300];

	hdr = curl_slist_append(hdr, "Expect:");
	if (token) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
		hdr = curl_slist_append(hdr, auth);
	}
	if (body) {
		hdr = curl_slist_append(hdr, "Content-Type: application/json");
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
	for (int i = 0; i < cl->n; i++) {
		long status = 0;
		char u[4096];
		double t0;
		CURLcode rc;

		url_of(cl->first + i, u, sizeof(u));
		curl_easy_setopt(h, CURLOPT_URL, u);
		t0 = now_s();
		rc = curl_easy_perform(h);
		lat[cl->first + i] = now_s() - t0;
		if (rc == CURLE_OK)
			curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
		if (status == want_status)
			cl->ok++;
		else if (cl->n - cl->ok < 4)
			fprintf(stderr, "load: %s: %s %ld\n", url, curl_easy_strerror(rc), status);
	}
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void read_body(const char *path)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		perror(path);
		exit(2);
	}
	body = malloc((size_t)n + 1);
	if (!body || fread(body, 1, (size_t)n, f) != (size_t)n) {
		perror(path);
		exit(2);
	}
	body_len = (size_t)n;
	fclose(f);
}

int main(int argc, char **argv)
{
	pthread_t th[256];
	struct client cl[256];
	int opt, ok = 0;
	double t0, wall;

	nreq = 100;
	while ((opt = getopt(argc, argv, "c:n:t:d:s:k:")) != -1) {
		switch (opt) {
		case 'c': nclients = atoi(optarg); break;
		case 'n': nreq = atoi(optarg); break;
		case 't': token = optarg; break;
		case 'd': read_body(optarg); break;
		case 's': want_status = atol(optarg); break;
		case 'k': nkeys = atoi(optarg); break;
		default: goto usage;
		}
	}
	if (optind + 1 != argc || nclients < 1 || nclients > 256 || nreq < nclients)
		goto usage;
	url = argv[optind];
	lat = calloc((size_t)nreq, sizeof(*lat));
	curl_global_init(CURL_GLOBAL_ALL);
	t0 = now_s();
	for (int i = 0, first = 0; i < nclients; i++) {
		int n = nreq / nclients + (i < nreq % nclients);
		cl[i] = (struct client){first, n, 0};
		first += n;
		pthread_create(&th[i], NULL, client_main, &cl[i]);
	}
	for (int i = 0; i < nclients; i++) {
		pthread_join(th[i], NULL);
		ok += cl[i].ok;
	}
	wall = now_s() - t0;
	qsort(lat, (size_t)nreq, sizeof(*lat), cmp);
	printf("%d %d %.2f %.2f %.0f\n", nreq, ok, lat[(nreq - 1) / 2] * 1000,
	       lat[(int)(nreq * 0.99) < nreq ? (int)(nreq * 0.99) : nreq - 1] * 1000, nreq / wall);
	free(lat);
	free(body);
	return ok == nreq ? 0 : 1;
usage:
	fprintf(stderr, "usage: load [-c CLIENTS] [-n REQUESTS] [-t TOKEN] [-d BODYFILE] "
			"[-s STATUS] [-k KEYS] URL\n");
	return 2;
}
