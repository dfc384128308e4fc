/*
 * alert.h - the mail outbox. Decisions that match a subscription queue one
 * message per (commit, subscriber) in the decision's transaction; when the
 * commit's decisions have settled a mailer claims the message (FOR UPDATE
 * SKIP LOCKED), renders and stores it, sends it, and marks it sent.
 */
#ifndef KPERF_ALERT_H
#define KPERF_ALERT_H

#include <libpq-fe.h>
#include <stddef.h>

struct alert_config {
	const char *from;       /* KPERF_MAIL_FROM */
	const char *public_url; /* KPERF_PUBLIC_URL, for links */
	double settle_s;        /* KPERF_ALERT_SETTLE_S */
	long max_attempts;      /* KPERF_SMTP_MAX_ATTEMPTS */
	double retry_s;         /* first retry delay; doubles each time */
};

/* Queue mail for the subscriptions that the decisions of (group, commit)
 * match, or that need a follow-up. In the caller's transaction. 0 or -1. */
int alert_enqueue(PGconn *c, const char *machine, const char *test, const char *variant,
		  const char *commit, double settle_s);

/* Make sure the database holds the unsubscribe secret. 0 or -1. */
int alert_secret_ensure(PGconn *c);

struct alert_claimed {
	char id[24];
	char *rcpt, *message; /* malloc'd */
	size_t len;
	long attempts;        /* including this one */
};

/*
 * In the caller's transaction: claim one due message, render it when it has
 * not been rendered yet, and mark it "sending". Returns 1 (out filled; free
 * with alert_claimed_release), 0 when nothing is due, 2 when the due message
 * had nothing left to say (marked skipped), -1 on error.
 */
int alert_claim(PGconn *c, const struct alert_config *cfg, struct alert_claimed *out);
void alert_claimed_release(struct alert_claimed *out);

/* After sending: mark sent, or failed (retry later with backoff, or give up
 * after max_attempts keeping the SMTP reply). 0 or -1. */
int alert_mark_sent(PGconn *c, const char *id);
int alert_mark_failed(PGconn *c, const struct alert_config *cfg, const struct alert_claimed *a,
		      const char *error);

/* Now as an RFC 5322 date ("Wed, 02 Dec 2026 05:48:08 +0000"). */
void alert_date(char *out, size_t cap);
/* The host part of url (kperf.localdomain when none), for Message-IDs. */
void alert_url_host(const char *url, char *host, size_t cap);

#endif
