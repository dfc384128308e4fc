/*
 * inbox.c - inboxes and their polling (see inbox.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/atom.h"
#include "lib/kperf_limits.h"
#include "lib/mail.h"
#include "lib/util.h"
#include "server/counters.h"
#include "server/db/db.h"
#include "server/robot/fetch.h"
#include "server/robot/inbox.h"
#include "server/robot/plan.h"
#include "server/robot/posted.h"
#include "server/robot/thread.h"

#define INBOX_ROW                                                                          \
	"json_build_object('id', i.id, 'name', i.name, 'url', i.url, 'list', i.list, 'query',"  \
	" i.query, 'poll_s', i.poll_s, 'created_at', i.created_at, 'last_poll_at',"             \
	" i.last_poll_at, 'last_result', i.last_result, 'last_ok_at', i.last_ok_at, 'failures',"\
	" i.failures, 'next_poll_at', i.next_poll_at, 'messages_seen', i.messages_seen,"        \
	" 'series_found', i.series_found)"

/* Taken for a poll: held for a while so that a crashed poll is retried. */
static const char SQL_CLAIM[] =
	"UPDATE inbox SET next_poll_at = now() + make_interval(secs => least(greatest(poll_s, 5), 120))"
	" WHERE id = (SELECT id FROM inbox WHERE next_poll_at <= now() ORDER BY next_poll_at"
	"  LIMIT 1 FOR UPDATE SKIP LOCKED)"
	" RETURNING id, name, url, query, poll_s, failures";

static const char SQL_OK[] =
	"UPDATE inbox SET last_poll_at = now(), last_ok_at = now(), last_result = $2, failures = 0,"
	" next_poll_at = now() + make_interval(secs => poll_s),"
	" messages_seen = messages_seen + $3::int, series_found = series_found + $4::int"
	" WHERE id = $1::bigint";

static const char SQL_FAILED[] =
	"UPDATE inbox SET last_poll_at = now(), last_result = $2, failures = failures + 1,"
	" next_poll_at = now() + make_interval(secs => least(poll_s * power(2, least(failures, 20)),"
	"  greatest(poll_s, $3::int)))"
	" WHERE id = $1::bigint";

static const char SQL_SEEN[] =
	"SELECT msgid, state, tries FROM inbox_seen WHERE inbox_id = $1::bigint AND msgid = $2";

/* A stored series whose head is the cover $2, of version $3 and count $4 (0: any). */
static const char SQL_OF_COVER[] =
	"SELECT 1 FROM posted_series WHERE inbox_id = $1::bigint AND head_msgid = $2"
	" AND has_cover AND ($3::int = 0 OR version = $3::int) AND ($4::int = 0 OR total = $4::int)";

static const char SQL_MARK[] =
	"INSERT INTO inbox_seen (inbox_id, msgid, state, reason) VALUES ($1::bigint, $2, $3, $4)"
	" ON CONFLICT (inbox_id, msgid) DO UPDATE SET state = EXCLUDED.state,"
	" reason = EXCLUDED.reason, tries = inbox_seen.tries + 1, seen_at = now()";

struct poll {
	PGconn *c;
	long id;
	const char *name, *url;
	int entries, found;
	struct buf notes; /* what went wrong with single threads */
};

static int mark(struct poll *pl, const char *msgid, const char *state, const char *reason)
{
	char id[24];
	const char *p[4] = {id, msgid, state, reason};

	snprintf(id, sizeof(id), "%ld", pl->id);
	return db_do(pl->c, SQL_MARK, 4, p);
}

/* 1 when msgid needs reading (new, or incomplete and not tried too often),
 * with *tries the reads so far. */
static int wanted(struct poll *pl, const char *msgid, int *tries)
{
	char id[24];
	const char *p[2] = {id, msgid};
	PGresult *r;
	int want;

	snprintf(id, sizeof(id), "%ld", pl->id);
	r = db_exec(pl->c, SQL_SEEN, 2, p);
	if (!db_ok(r)) {
		PQclear(r);
		return -1;
	}
	*tries = PQntuples(r) ? (int)strtol(PQgetvalue(r, 0, 2), NULL, 10) : 0;
	want = PQntuples(r) == 0 ||
	       (!strcmp(PQgetvalue(r, 0, 1), "incomplete") && *tries < INBOX_INCOMPLETE_TRIES);
	PQclear(r);
	return want;
}

/* The series a head's thread holds, stored with its plans in one
 * transaction; tries: the reads of the thread before this one, skipped: its
 * messages dropped for an over-long Subject. An incomplete thread is
 * refused at its INBOX_INCOMPLETE_TRIES-th read, and so is one whose head
 * was dropped (it never comes). 0, or -1 on a database error. */
static int take(struct poll *pl, const struct atom_entry *e, struct mail_msg *msgs, size_t n,
		int tries, size_t skipped)
{
	struct thread_series s;
	char why[400];
	int rc = thread_series(msgs, n, e->msgid, &s, why, sizeof(why));
	long sid = 0;

	if (rc == 0 && skipped > 0 && !s.head) {
		int held = 0;
		for (size_t i = 0; i < n && !held; i++)
			held = msgs[i].msgid && !strcmp(msgs[i].msgid, e->msgid);
		if (!held) {
			size_t k = strlen(why);
			snprintf(why + k, sizeof(why) - k, ": %zu message%s dropped, %s over %d bytes",
				 skipped, skipped == 1 ? "" : "s",
				 skipped == 1 ? "its Subject" : "their Subjects", LIMIT_MAIL_SUBJECT);
			rc = -1;
		}
	}
	if (rc == 0 && tries + 1 >= INBOX_INCOMPLETE_TRIES) {
		size_t k = strlen(why);
		snprintf(why + k, sizeof(why) - k, " after %d reads", tries + 1);
		rc = -1;
	}

	if (db_do(pl->c, "BEGIN", 0, NULL))
		return -1;
	if (rc == 1) {
		sid = posted_store(pl->c, pl->id, &s, e->updated);
		if (sid < 0 || (sid > 0 && plan_match_series(pl->c, sid) < 0) ||
		    mark(pl, e->msgid, "done", NULL))
			rc = -2;
		thread_series_release(&s);
	} else if (rc == 0) {
		if (mark(pl, e->msgid, "incomplete", why))
			rc = -2;
	} else if (mark(pl, e->msgid, "refused", why)) {
		rc = -2;
	}
	if (rc == -2 || db_do(pl->c, "COMMIT", 0, NULL)) {
		PQclear(PQexec(pl->c, "ROLLBACK"));
		return -1;
	}
	if (sid > 0) {
		pl->found++;
		log_info("inbox %s: series %ld stored from <%s>", pl->name, sid, e->msgid);
	} else if (rc <= 0) {
		buf_printf(&pl->notes, "; <%.100s>: %s", e->msgid, why);
	}
	return 0;
}

/*
 * Whether entry e, a patch in reply to another mail, is patch 1 of the
 * series its parent starts, a cover of its version and count in the same
 * feed or already stored: its thread needs no read (it would say so). 1, 0,
 * or -1 on a database error.
 */
static int of_stored_cover(struct poll *pl, const struct atom_entry *e,
			   const struct atom_entry *feed, size_t n)
{
	struct patch_subject ps, cs;
	char id[24], v[16], t[16];
	const char *p[4] = {id, e->parent_msgid, v, t};
	PGresult *r;
	int yes;

	if (!e->is_reply || !e->parent_msgid || patch_subject_parse(e->title, &ps) ||
	    (ps.pos == 0 && ps.total > 0))
		return 0;
	/* the parent in this feed, a cover of its version and count: its thread,
	 * read for the cover, is this one's */
	for (size_t i = 0; i < n; i++)
		if (feed[i].msgid && feed[i].title && !strcmp(feed[i].msgid, e->parent_msgid))
			return !patch_subject_parse(feed[i].title, &cs) && cs.is_patch &&
			       !cs.is_reply && cs.pos == 0 && cs.total > 0 &&
			       (!ps.version_given || cs.version == ps.version) &&
			       (ps.total == 0 || cs.total == ps.total);
	snprintf(id, sizeof(id), "%ld", pl->id);
	snprintf(v, sizeof(v), "%d", ps.version_given ? ps.version : 0); /* none: the cover's */
	snprintf(t, sizeof(t), "%d", ps.total);
	r = db_exec(pl->c, SQL_OF_COVER, 4, p);
	if (!db_ok(r)) {
		PQclear(r);
		return -1;
	}
	yes = PQntuples(r) > 0;
	PQclear(r);
	return yes;
}

/* Read one head's thread. 0 (taken or noted), -1 on a database error. */
static int read_thread(struct poll *pl, const struct atom_entry *e, int tries)
{
	struct buf url = BUF_INIT;
	struct fetched f;
	struct mail_msg *msgs = NULL;
	size_t n = 0, skipped = 0, len = 0;
	char err[512], *mbox = NULL;
	int rc = 0;

	fetch_msgid_url(pl->url, e->msgid, "/t.mbox.gz", &url);
	if (fetch_get(url.data, INBOX_FETCH_TIMEOUT_S, LIMIT_MBOX_BYTES, &f, err, sizeof(err))) {
		buf_printf(&pl->notes, "; <%.100s>: %s", e->msgid, err);
	} else if (f.status != 200) {
		buf_printf(&pl->notes, "; <%.100s>: thread answered HTTP %ld", e->msgid, f.status);
	} else if (mail_gunzip((const unsigned char *)f.body.data, f.body.len, LIMIT_MBOX_BYTES,
			       &mbox, &len, err, sizeof(err))) {
		buf_printf(&pl->notes, "; <%.100s>: %s", e->msgid, err);
	} else if (mail_parse_mbox(mbox, len, &msgs, &n, &skipped, err, sizeof(err))) {
		char why[600];
		snprintf(why, sizeof(why), "the thread's mbox: %s", err);
		if (db_do(pl->c, "BEGIN", 0, NULL) || mark(pl, e->msgid, "refused", why) ||
		    db_do(pl->c, "COMMIT", 0, NULL)) {
			PQclear(PQexec(pl->c, "ROLLBACK"));
			rc = -1;
		}
		buf_printf(&pl->notes, "; <%.100s>: %s", e->msgid, why);
	} else {
		rc = take(pl, e, msgs, n, tries, skipped);
	}
	mail_msgs_free(msgs, n);
	free(mbox);
	buf_release(&f.body);
	buf_release(&url);
	return rc;
}

static void feed_url(const char *url, const char *query, struct buf *out)
{
	buf_puts(out, url);
	if (!query) {
		buf_puts(out, "new.atom");
		return;
	}
	buf_puts(out, "?q=");
	for (const unsigned char *p = (const unsigned char *)query; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("-._~", *p))
			buf_putc(out, (char)*p);
		else
			buf_printf(out, "%%%02X", *p);
	}
	buf_puts(out, "&x=A");
}

static int record(PGconn *c, long id, const char *error, int entries, int found)
{
	char sid[24], ne[16], nf[16], cap[16];
	const char *ok[4] = {sid, error, ne, nf};
	const char *bad[3] = {sid, error, cap};

	snprintf(sid, sizeof(sid), "%ld", id);
	snprintf(ne, sizeof(ne), "%d", entries);
	snprintf(nf, sizeof(nf), "%d", found);
	snprintf(cap, sizeof(cap), "%d", INBOX_BACKOFF_MAX_S);
	counters.inbox_polls++;
	counters.series_found += (unsigned long)found;
	if (!strncmp(error, "ok", 2))
		return db_do(c, SQL_OK, 4, ok);
	log_error("inbox %s: %s", sid, error);
	counters.inbox_poll_failures++;
	return db_do(c, SQL_FAILED, 3, bad);
}

int inbox_poll_step(PGconn *c)
{
	PGresult *r = db_exec(c, SQL_CLAIM, 0, NULL);
	struct poll pl = {c, 0, NULL, NULL, 0, 0, BUF_INIT};
	struct atom_entry *es = NULL;
	struct fetched f = {0};
	struct buf url = BUF_INIT, result = BUF_INIT;
	size_t n = 0;
	char err[512];
	int rc = 1;

	if (!db_ok(r)) {
		db_log_error("claiming an inbox to poll", c, r);
		PQclear(r);
		return -1;
	}
	if (PQntuples(r) == 0) {
		PQclear(r);
		return 0;
	}
	pl.id = strtol(PQgetvalue(r, 0, 0), NULL, 10);
	pl.name = PQgetvalue(r, 0, 1);
	pl.url = PQgetvalue(r, 0, 2);
	feed_url(pl.url, PQgetisnull(r, 0, 3) ? NULL : PQgetvalue(r, 0, 3), &url);
	buf_init(&f.body);
	if (fetch_get(url.data, INBOX_FETCH_TIMEOUT_S, LIMIT_ATOM_BYTES, &f, err, sizeof(err))) {
		buf_printf(&result, "%s", err);
	} else if (f.status == 404 && !PQgetisnull(r, 0, 3)) {
		buf_puts(&result, "ok: no message matches the query");
	} else if (f.status != 200) {
		buf_printf(&result, "%s answered HTTP %ld", url.data, f.status);
	} else if (atom_parse(f.body.data ? f.body.data : "", f.body.len, &es, &n, err,
			      sizeof(err))) {
		buf_printf(&result, "%s: %s", url.data, err);
	} else {
		pl.entries = (int)n;
		for (size_t i = n; i-- > 0 && rc >= 0;) { /* oldest first */
			int w, tries = 0;
			if (!es[i].msgid || !es[i].title || !thread_is_head(es[i].title, es[i].is_reply))
				continue;
			w = wanted(&pl, es[i].msgid, &tries);
			if (w > 0) {
				int stored = of_stored_cover(&pl, &es[i], es, n);
				w = stored < 0 ? -1 : !stored;
			}
			if (w < 0 || (w && read_thread(&pl, &es[i], tries) < 0))
				rc = -1;
		}
		buf_printf(&result, "ok: %d entries, %d new series%s", pl.entries, pl.found,
			   pl.notes.data ? pl.notes.data : "");
	}
	if (rc >= 0 && record(c, pl.id, result.data, pl.entries, pl.found))
		rc = -1;
	atom_entries_free(es, n);
	PQclear(r);
	buf_release(&f.body);
	buf_release(&url);
	buf_release(&result);
	buf_release(&pl.notes);
	return rc;
}

int inbox_add(PGconn *c, const char *name, const char *url, const char *list, const char *query,
	      long poll_s, struct buf *out)
{
	char ps[16];
	const char *p[5] = {name, url, list, query, ps};

	snprintf(ps, sizeof(ps), "%ld", poll_s);
	return db_text(c,
		       "WITH i AS (INSERT INTO inbox (name, url, list, query, poll_s)"
		       " VALUES ($1, $2, $3, $4, $5::int) ON CONFLICT (name) DO NOTHING RETURNING *)"
		       " SELECT " INBOX_ROW "::text FROM i",
		       5, p, out, "adding an inbox");
}

int inbox_list_json(PGconn *c, struct buf *out)
{
	return db_text(c,
		       "SELECT coalesce(json_agg(" INBOX_ROW " ORDER BY i.name), '[]')::text"
		       " FROM inbox i",
		       0, NULL, out, "listing inboxes") ? -1 : 0;
}

int inbox_health(PGconn *c, struct buf *out)
{
	return db_text(c,
		       "SELECT coalesce(string_agg(name || ': ' || left(last_result, 300), '; '"
		       " ORDER BY name), '') FROM inbox WHERE failures > 0",
		       0, NULL, out, "reading the inboxes' health") ? -1 : 0;
}
