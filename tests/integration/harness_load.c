/*
 * harness_load.c - posters and readers against one kperfd during an outage
 * of its database (harness_load.h).
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/integration/harness_load.h"

static void *poster_main(void *arg)
{
	struct load_poster *p = arg;
	struct load *l = p->load;
	struct curl_slist *hdr;
	CURL *h = harness_runs_handle(l->k, 30L, &hdr);
	char body[512];

	for (int i = 0; i < LOAD_RUNS_MAX && !atomic_load(&l->stop);) {
		struct resp r;
		long status = 0;
		double t0 = harness_now(), took;
		int after = atomic_load(&l->after);
		CURLcode rc;

		snprintf(body, sizeof(body),
			 "{\"run_id\":\"%s-c%d-r%d\",\"machine\":{\"name\":\"lm%d\"},"
			 "\"kernel\":{\"commit\":\"1431d4d11abb265e79cd44bed2f5ea93f1bcc57b\"},"
			 "\"test\":{\"suite\":\"will-it-scale\",\"params\":{\"nr_task\":\"1\"}},"
			 "\"metrics\":{\"will-it-scale.per_process_ops\":%d}}",
			 l->prefix, p->id, i, p->id, 1000 + i);
		harness_curl_capture(h, &r);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		rc = curl_easy_perform(h);
		if (rc == CURLE_OK)
			curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
		took = harness_now() - t0;
		pthread_mutex_lock(&l->mu);
		if (took > p->slowest)
			p->slowest = took;
		if (status == 201 || status == 200) {
			p->acked[i] = 1;
			if (after) {
				p->acked_after++;
				if (p->refused && p->first_after < 0)
					p->first_after = harness_now() - l->outage_at;
			}
			p->n = ++i;
		} else if (status == 503 || status == 0) {
			if (after) {
				p->refused++;
				p->last_refused = harness_now() - l->outage_at;
			}
			if (status == 0) {
				p->none++;
				p->last_curl = (int)rc;
			}
			else if (r.retry_after[0] && strstr(r.body, "\"error\""))
				p->r503++;
			else
				p->r503_bare++;
		} else {
			p->other++;
			p->last_other = status;
			p->n = ++i;
		}
		pthread_mutex_unlock(&l->mu);
		if (status == 503 || status == 0)
			usleep(20000); /* the same run again */
		resp_release(&r);
	}
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
	return NULL;
}

static void *reader_main(void *arg)
{
	static const char *const paths[] = {"/api/v1/machines", "/api/v1/series"};
	struct load_reader *rd = arg;
	struct load *l = rd->load;
	CURL *h = curl_easy_init();
	double last_ok = -1;

	curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
	for (int i = 0; !atomic_load(&l->stop); i++) {
		char url[128];
		struct resp r;
		long status = 0;
		double t0 = harness_now(), took;

		snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", l->k->port, paths[i % 2]);
		harness_curl_capture(h, &r);
		curl_easy_setopt(h, CURLOPT_URL, url);
		if (curl_easy_perform(h) == CURLE_OK)
			curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
		took = harness_now() - t0;
		pthread_mutex_lock(&l->mu);
		if (took > rd->slowest)
			rd->slowest = took;
		if (status == 200) {
			double now = harness_now();
			if (last_ok >= 0 && now - last_ok > rd->longest_gap)
				rd->longest_gap = now - last_ok;
			last_ok = now;
			rd->ok++;
		} else {
			rd->failed++;
			rd->last_failed = status;
		}
		pthread_mutex_unlock(&l->mu);
		resp_release(&r);
		usleep(50000);
	}
	curl_easy_cleanup(h);
	return NULL;
}

void load_start(struct load *l, const struct kperfd *k, const char *prefix, int nposters,
		int nreaders)
{
	cr_assert(nposters <= LOAD_POSTERS_MAX && nreaders <= LOAD_READERS_MAX);
	memset(l, 0, sizeof(*l));
	pthread_mutex_init(&l->mu, NULL);
	l->k = k;
	l->prefix = prefix;
	l->nposters = nposters;
	l->nreaders = nreaders;
	for (int i = 0; i < nposters; i++) {
		l->p[i].load = l;
		l->p[i].id = i;
		l->p[i].first_after = -1;
		l->p[i].last_refused = -1;
		l->p[i].acked = calloc(LOAD_RUNS_MAX, 1);
		pthread_create(&l->pt[i], NULL, poster_main, &l->p[i]);
	}
	for (int i = 0; i < nreaders; i++) {
		l->r[i].load = l;
		l->r[i].id = i;
		pthread_create(&l->rt[i], NULL, reader_main, &l->r[i]);
	}
}

void load_outage(struct load *l)
{
	l->outage_at = harness_now();
	atomic_store(&l->after, 1);
}

int load_wait_after(struct load *l, int per_poster, double seconds)
{
	double end = harness_now() + seconds;

	for (;;) {
		int done = 1;
		pthread_mutex_lock(&l->mu);
		for (int i = 0; i < l->nposters; i++)
			done &= l->p[i].acked_after >= per_poster;
		pthread_mutex_unlock(&l->mu);
		if (done)
			return 1;
		if (harness_now() > end)
			return 0;
		usleep(100000);
	}
}

void load_stop(struct load *l)
{
	atomic_store(&l->stop, 1);
	for (int i = 0; i < l->nposters; i++)
		pthread_join(l->pt[i], NULL);
	for (int i = 0; i < l->nreaders; i++)
		pthread_join(l->rt[i], NULL);
}

struct load_sum load_sum(struct load *l)
{
	struct load_sum s = {.first_after = -1, .last_refused = -1};

	pthread_mutex_lock(&l->mu);
	for (int i = 0; i < l->nposters; i++) {
		const struct load_poster *p = &l->p[i];
		for (int r = 0; r < p->n; r++)
			s.acked += p->acked[r];
		s.acked_after += p->acked_after;
		s.r503 += p->r503;
		s.r503_bare += p->r503_bare;
		s.none += p->none;
		s.other += p->other;
		if (p->first_after >= 0 && (s.first_after < 0 || p->first_after < s.first_after))
			s.first_after = p->first_after;
		if (p->last_refused > s.last_refused)
			s.last_refused = p->last_refused;
		if (p->none)
			s.last_curl = p->last_curl;
		if (p->slowest > s.slowest_post)
			s.slowest_post = p->slowest;
	}
	for (int i = 0; i < l->nreaders; i++) {
		const struct load_reader *r = &l->r[i];
		s.reads_ok += r->ok;
		s.reads_failed += r->failed;
		if (r->slowest > s.slowest_read)
			s.slowest_read = r->slowest;
		if (r->longest_gap > s.longest_read_gap)
			s.longest_read_gap = r->longest_gap;
	}
	pthread_mutex_unlock(&l->mu);
	return s;
}

void load_check_stored(struct load *l, const char *conninfo)
{
	PGconn *c = PQconnectdb(conninfo ? conninfo : l->k->conninfo);

	cr_assert_eq(PQstatus(c), CONNECTION_OK, "%s", PQerrorMessage(c));
	for (int i = 0; i < l->nposters; i++) {
		struct load_poster *p = &l->p[i];
		cr_expect_eq(p->other, 0, "%s poster %d: %d answers neither 2xx nor 503 (last %ld)",
			     l->prefix, i, p->other, p->last_other);
		for (int r = 0; r < p->n; r++) {
			char id[96];
			const char *params[1] = {id};
			PGresult *res;
			if (!p->acked[r])
				continue;
			snprintf(id, sizeof(id), "%s-c%d-r%d", l->prefix, i, r);
			res = PQexecParams(c, "SELECT count(*) FROM run WHERE run_id = $1", 1, NULL,
					   params, NULL, NULL, 0);
			cr_expect_str_eq(PQgetvalue(res, 0, 0), "1",
					 "run %s acknowledged, stored %s times", id,
					 PQgetvalue(res, 0, 0));
			PQclear(res);
		}
		free(p->acked);
		p->acked = NULL;
	}
	PQfinish(c);
}
