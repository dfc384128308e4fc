/*
 * fetch.c - HTTP GET for the inbox poller (see fetch.h).
 */
#include <ctype.h>
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#include "server/robot/fetch.h"

struct sink {
	struct fetched *f;
	size_t max;
	int over;
};

static size_t write_cb(char *data, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;
	size_t len = size * n;

	if (s->f->body.len + len > s->max) {
		s->over = 1;
		return 0;
	}
	buf_append(&s->f->body, data, len);
	return len;
}

int fetch_get(const char *url, long timeout_s, size_t max, struct fetched *f, char *err,
	      size_t errlen)
{
	char curl_err[CURL_ERROR_SIZE] = "";
	struct sink s = {f, max, 0};
	CURL *h = curl_easy_init();
	const char *type = NULL;
	CURLcode rc;

	memset(f, 0, sizeof(*f));
	buf_init(&f->body);
	if (!h) {
		snprintf(err, errlen, "libcurl could not start");
		return -1;
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, timeout_s);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, timeout_s < 10 ? timeout_s : 10L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curl_err);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "kperf");
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	rc = curl_easy_perform(h);
	if (rc != CURLE_OK) {
		if (s.over)
			snprintf(err, errlen, "%s: the answer is over %zu bytes", url, max);
		else
			snprintf(err, errlen, "%s: %s", url, *curl_err ? curl_err : curl_easy_strerror(rc));
		curl_easy_cleanup(h);
		return -1;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &f->status);
	if (curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &type) == CURLE_OK && type)
		snprintf(f->type, sizeof(f->type), "%s", type);
	curl_easy_cleanup(h);
	return 0;
}

void fetch_msgid_url(const char *inbox_url, const char *msgid, const char *suffix,
		     struct buf *out)
{
	size_t n = strlen(inbox_url);

	buf_puts(out, inbox_url);
	if (!n || inbox_url[n - 1] != '/')
		buf_putc(out, '/');
	for (const unsigned char *p = (const unsigned char *)msgid; *p; p++) {
		if (isalnum(*p) || strchr("@.-_+=~!$&'()*,;:", *p))
			buf_putc(out, (char)*p);
		else
			buf_printf(out, "%%%02X", *p);
	}
	buf_puts(out, suffix);
}
