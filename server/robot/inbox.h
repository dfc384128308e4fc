/*
 * inbox.h - the inbox and inbox_seen tables, and one poll of an inbox:
 * its Atom feed over HTTP, then the thread (t.mbox.gz) of each series head
 * not taken in yet; each complete series is stored, with the plans it
 * matches, in one transaction.
 */
#ifndef KPERF_ROBOT_INBOX_H
#define KPERF_ROBOT_INBOX_H

#include <libpq-fe.h>

#include "lib/buf.h"

/* Seconds an inbox's fetch may take, and the cap on the wait after failures in a
 * row (an inbox polled less often than that keeps its own poll_s). */
#define INBOX_FETCH_TIMEOUT_S 30
#define INBOX_BACKOFF_MAX_S 3600
/* Polls an incomplete thread is read again before it is refused. */
#define INBOX_INCOMPLETE_TRIES 30

/*
 * Poll the inbox whose turn it is (next_poll_at past; claimed FOR UPDATE
 * SKIP LOCKED, so two kperfd poll it once). 1 when one was polled (its
 * result recorded, failures retried with backoff), 0 when none was due,
 * -1 on a database error.
 */
int inbox_poll_step(PGconn *c);

/* Add an inbox; answers its row as JSON in out. 0, 1 when the name is
 * taken, -1 on error. */
int inbox_add(PGconn *c, const char *name, const char *url, const char *list, const char *query,
	      long poll_s, struct buf *out);

/* The inboxes as a JSON array (with last poll, result, next poll). */
int inbox_list_json(PGconn *c, struct buf *out);

/* For /healthz: inboxes whose last poll failed, as "name: reason; ..." ("" none). */
int inbox_health(PGconn *c, struct buf *out);

#endif
