/*
 * smtp.c - SMTP delivery through libcurl's SMTP protocol. The message is
 * uploaded from memory; libcurl does the dot-stuffing. The server's last
 * refusal is kept (libcurl's debug callback sees every line it reads), so
 * it is reported in the server's own words.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#include "server/mail/smtp.h"
#include "lib/util.h"

struct upload {
	const char *data;
	size_t len, off;
};

static size_t read_cb(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct upload *u = arg;
	size_t n = size * nmemb;

	if (n > u->len - u->off)
		n = u->len - u->off;
	memcpy(ptr, u->data + u->off, n);
	u->off += n;
	return n;
}

/* The server's last refusal (a 4xx or 5xx reply line), without its line end. */
struct last_reply {
	char text[512];
};

static int debug_cb(CURL *h, curl_infotype type, char *data, size_t size, void *arg)
{
	struct last_reply *lr = arg;
	size_t n = size;

	(void)h;
	if (type != CURLINFO_HEADER_IN || !size || (data[0] != '4' && data[0] != '5'))
		return 0;
	while (n && (data[n - 1] == '\n' || data[n - 1] == '\r'))
		n--;
	if (n >= sizeof(lr->text))
		n = sizeof(lr->text) - 1;
	memcpy(lr->text, data, n);
	lr->text[n] = '\0';
	return 0;
}

int smtp_send(const struct smtp_server *s, const char *from, const char *to, const char *msg,
	      size_t len, char *err, size_t errlen)
{
	char curl_err[CURL_ERROR_SIZE] = "";
	char addr[512];
	struct curl_slist *rcpt = NULL;
	struct upload up = {msg, len, 0};
	struct last_reply reply = {""};
	CURL *h = curl_easy_init();
	CURLcode rc;
	long code = 0;

	if (!h) {
		snprintf(err, errlen, "libcurl could not start");
		return -1;
	}
	for (const char *t = to; *t;) { /* "a@x, b@y": one RCPT TO each */
		size_t n = strcspn(t, ",");
		while (n && (*t == ' ' || *t == '\t'))
			t++, n--;
		while (n && (t[n - 1] == ' ' || t[n - 1] == '\t'))
			n--;
		if (n) {
			snprintf(addr, sizeof(addr), "<%.*s>", (int)n, t);
			rcpt = curl_slist_append(rcpt, addr);
		}
		t += strcspn(t, ",");
		if (*t == ',')
			t++;
	}
	snprintf(addr, sizeof(addr), "<%s>", from);
	curl_easy_setopt(h, CURLOPT_URL, s->url);
	curl_easy_setopt(h, CURLOPT_MAIL_FROM, addr);
	curl_easy_setopt(h, CURLOPT_MAIL_RCPT, rcpt);
	curl_easy_setopt(h, CURLOPT_READFUNCTION, read_cb);
	curl_easy_setopt(h, CURLOPT_READDATA, &up);
	curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(h, CURLOPT_USE_SSL, (long)CURLUSESSL_TRY);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curl_err);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, s->timeout_s > 0 ? s->timeout_s : 60L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_DEBUGFUNCTION, debug_cb);
	curl_easy_setopt(h, CURLOPT_DEBUGDATA, &reply);
	curl_easy_setopt(h, CURLOPT_VERBOSE, 1L);
	if (s->user) {
		curl_easy_setopt(h, CURLOPT_USERNAME, s->user);
		curl_easy_setopt(h, CURLOPT_PASSWORD, s->password ? s->password : "");
	}
	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_slist_free_all(rcpt);
	curl_easy_cleanup(h);
	if (rc != CURLE_OK) {
		if (*reply.text)
			snprintf(err, errlen, "the SMTP server answered \"%s\"", reply.text);
		else
			snprintf(err, errlen, "%s%s%s (SMTP %ld)", curl_easy_strerror(rc),
				 *curl_err ? ": " : "", curl_err, code);
		return -1;
	}
	return 0;
}
