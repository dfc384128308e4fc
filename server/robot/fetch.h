/*
 * fetch.h - one HTTP GET of an inbox's feed or thread, with libcurl: a
 * deadline, a byte cap, and the status and Content-Type kept.
 */
#ifndef KPERF_ROBOT_FETCH_H
#define KPERF_ROBOT_FETCH_H

#include <stddef.h>

#include "lib/buf.h"

struct fetched {
	long status;           /* HTTP status; 0 when no answer came */
	char type[128];        /* Content-Type, "" when none */
	struct buf body;
};

/*
 * GET url within timeout_s, keeping at most max bytes. 0 with f filled
 * (any status), or -1 with err saying why no answer came (refused, timed
 * out, over max bytes). f->body is released by the caller either way.
 */
int fetch_get(const char *url, long timeout_s, size_t max, struct fetched *f, char *err,
	      size_t errlen);

/* url + "/" + the Message-ID escaped for a path + suffix. */
void fetch_msgid_url(const char *inbox_url, const char *msgid, const char *suffix,
		     struct buf *out);

#endif
