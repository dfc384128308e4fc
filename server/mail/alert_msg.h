/*
 * alert_msg.h - the text of an alert mail, LKP-report style: subject line,
 * headers, body with the commit, machine, test, headline change with its
 * Welch CI, the other changes, the LKP table, how to reproduce, links.
 * Pure: the mailer gathers the facts.
 */
#ifndef KPERF_ALERT_MSG_H
#define KPERF_ALERT_MSG_H

#include <stddef.h>

#include "lib/buf.h"

/* One decision as the message tells it. Strings borrowed; NULL when unknown. */
struct alert_item {
	const char *metric, *machine, *suite, *params, *variant; /* params/variant: JSON */
	const char *verdict, *previous_verdict;                    /* previous: NULL if new */
	const char *commit, *base_commit, *recovered_by;
	double change_pct, change_abs, ci_lo_pct, ci_hi_pct; /* NaN when unknown */
	int absolute, kpi;
	long decision_id;
	const char *confirmation; /* "unconfirmed", "waiting" (past its wait), ... or NULL */
	/* why an unconfirmed one is: "no_agent" (no agent on the machine offers
	 * the test), "failed" (the jobs failed, unconfirmed_why says how),
	 * "timeout" (the runs did not come in time), "no_job"; NULL */
	const char *unconfirmed, *unconfirmed_why;
	long base_runs, target_runs;
};

struct alert_facts {
	const char *to, *from, *public_url, *message_id, *in_reply_to, *date; /* date: RFC 5322 */
	const char *unsubscribe_url;
	const char *served; /* lines naming the subscriptions served (NULL: none) */
	const char *bisection; /* how a bisection found this commit, with its steps, or NULL */
	int digest;
	/* the commit (reports) */
	const char *sha, *subject, *series, *branch, *base_kind;
	/* the headline decision's machine and run */
	const char *cpu_model, *nr_cpus, *sockets, *memory_mb, *command;
	const char *collector; /* the run's "collector" object (JSON): kperf-collect's options */
	/* "suite: time 1 -> 2" lines: the commit's tests run with other work
	 * arguments than their base's, not judged as a kernel change; or NULL */
	const char *not_judged;
	const char *lkp_table; /* "" when LKP's rule shows no row */
	const struct alert_item *items;
	size_t nitems;
};

/* The subject line (without "Subject: "), into out. */
void alert_subject(const struct alert_facts *f, struct buf *out);

/* The whole message (headers and body, CRLF line ends) into out. */
void alert_message(const struct alert_facts *f, struct buf *out);

/* Text as CRLF lines wrapped at ALERT_COLUMNS (continuations indented;
 * NOWRAP_ON .. NOWRAP_OFF kept whole), into out. */
void alert_wrap_crlf(const char *text, struct buf *out);
/* A header value, RFC 2047-encoded when it is not ASCII, into b. */
void alert_header_text(struct buf *b, const char *s);

/* "-11.5%" / "+0.8" (absolute rows) for an item. */
void alert_change(const struct alert_item *it, char *buf, size_t cap);

#endif
