/*
 * post.h - one HTTP POST of a JSON document to kperfd with libcurl, and what
 * its answer means for a collector: delivered, try again later, or rejected
 * for good.
 */
#ifndef KPERF_POST_H
#define KPERF_POST_H

#include <stddef.h>

#include "collectors/base/config.h"

struct post_result {
	long status;     /* HTTP status; 0 when no answer arrived */
	char *body;      /* the answer's body (malloc'd, NUL-terminated, never NULL) */
	char error[256]; /* why there was no answer, when status is 0 */
};

enum delivery {
	DELIVERY_OK,       /* 200 or 201: stored (now or before) */
	DELIVERY_RETRY,    /* no answer, 5xx, 401/403/404/429: keep it and try later */
	DELIVERY_REJECTED, /* 400, 409, 413: this document will never be taken */
};

/* Call once before any post_json (main) and post_cleanup at exit. */
void post_global_init(void);
void post_cleanup(void);

/*
 * POST body (len bytes) to <c->server><path> with c->token. Always fills r
 * (release with post_result_release); returns its delivery class.
 */
enum delivery post_json(const struct collect_config *c, const char *path, const char *body,
			size_t len, struct post_result *r);

/*
 * One request as post_json makes it, for the agent's job calls: method
 * "GET" (body NULL) or "POST"; timeout_s bounds it (a long poll needs more
 * than c->timeout_s); cancel, when not NULL, is asked about once a second
 * and more: nonzero ends the request with no answer ("aborted"). Fills r
 * as post_json does and returns the status (0: no answer).
 */
long post_request(const struct collect_config *c, const char *method, const char *path,
		  const char *body, size_t len, long timeout_s, int (*cancel)(void *arg),
		  void *arg, struct post_result *r);
void post_result_release(struct post_result *r);

/* The delivery class of an answer's status. */
enum delivery post_classify(long status);

#endif
