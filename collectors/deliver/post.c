/*
 * post.c - libcurl glue: one request per call, its own easy handle, a
 * bounded answer. Connection refused and DNS failures land here as status 0,
 * which the caller treats like a 5xx: spool and retry later.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#include "lib/buf.h"
#include "collectors/base/cutil.h"
#include "collectors/deliver/post.h"

/* Bytes of an answer kept: error answers are small; more is not kperfd. */
#define POST_ANSWER_MAX (1u << 20)

void post_global_init(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

void post_cleanup(void)
{
	curl_global_cleanup();
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
	struct buf *b = arg;
	size_t n = size * nmemb;

	if (b->len + n <= POST_ANSWER_MAX)
		buf_append(b, data, n);
	return n;
}

enum delivery post_classify(long status)
{
	if (status == 200 || status == 201)
		return DELIVERY_OK;
	if (status == 400 || status == 409 || status == 413)
		return DELIVERY_REJECTED;
	return DELIVERY_RETRY;
}

struct abort_check {
	int (*fn)(void *arg);
	void *arg;
};

static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct abort_check *a = arg;

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return a->fn(a->arg) ? 1 : 0;
}

enum delivery post_json(const struct collect_config *c, const char *path, const char *body,
			size_t len, struct post_result *r)
{
	long status = post_request(c, "POST", path, body, len, c->timeout_s, NULL, NULL, r);

	return status ? post_classify(status) : DELIVERY_RETRY;
}

long post_request(const struct collect_config *c, const char *method, const char *path,
		  const char *body, size_t len, long timeout_s, int (*cancel)(void *arg),
		  void *arg, struct post_result *r)
{
	struct abort_check check = {cancel, arg};
	struct curl_slist *hdr = NULL;
	struct buf url = BUF_INIT, auth = BUF_INIT, answer = BUF_INIT;
	CURL *h;
	CURLcode rc;

	memset(r, 0, sizeof(*r));
	if (!c->server) {
		snprintf(r->error, sizeof(r->error), "no server configured (--server or KPERF_SERVER)");
		r->body = xcalloc(1, 1);
		return 0;
	}
	h = curl_easy_init();
	if (!h) {
		snprintf(r->error, sizeof(r->error), "curl_easy_init failed");
		r->body = xcalloc(1, 1);
		return 0;
	}
	buf_printf(&url, "%s%s", c->server, path);
	hdr = curl_slist_append(hdr, "Content-Type: application/json");
	hdr = curl_slist_append(hdr, "Expect:");
	if (c->token) {
		buf_printf(&auth, "Authorization: Bearer %s", c->token);
		hdr = curl_slist_append(hdr, buf_str(&auth));
	}
	curl_easy_setopt(h, CURLOPT_URL, buf_str(&url));
	if (!strcmp(method, "POST")) {
		curl_easy_setopt(h, CURLOPT_POST, 1L);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	} else {
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	}
	if (cancel) {
		curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(h, CURLOPT_XFERINFODATA, &check);
		curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, timeout_s);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, timeout_s < 10 ? timeout_s : 10L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &answer);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "kperf-collect/1");
	rc = curl_easy_perform(h);
	if (rc == CURLE_OK) {
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	} else {
		r->status = 0;
		snprintf(r->error, sizeof(r->error), "%s: %s", buf_str(&url), curl_easy_strerror(rc));
	}
	r->body = buf_detach(&answer, NULL);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
	buf_release(&url);
	buf_release(&auth);
	return r->status;
}

void post_result_release(struct post_result *r)
{
	free(r->body);
	memset(r, 0, sizeof(*r));
}
