/*
 * alert.c - the outbox's SQL and the gathering of an alert's facts. Matching
 * lives in one SQL function (subscription_matches, migration 003) so queueing
 * and rendering agree; a message is rendered once and stored, so a retry
 * sends the same bytes with the same Message-ID.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/mail/alert.h"
#include "server/mail/alert_msg.h"
#include "lib/buf.h"
#include "server/reads/compare_load.h"
#include "server/stats/compare_lkp.h"
#include "server/db/db.h"
#include "lib/util.h"

static const char SQL_ENQUEUE[] =
	"WITH f AS (SELECT * FROM decision_facts WHERE machine_id = $1 AND test_id = $2"
	"  AND variant_id = $3 AND commit_id = $4),"
	" m AS (SELECT s.id, s.delivery FROM subscription s"
	"  WHERE EXISTS (SELECT 1 FROM f WHERE subscription_matches(s, f))"
	"  UNION SELECT s.id, 'immediate' FROM subscription s"
	"  JOIN alert_mailed am ON am.subscription_id = s.id JOIN f ON f.id = am.decision_id"
	"  WHERE s.unsubscribed_at IS NULL AND (am.verdict <> f.verdict"
	"   OR (f.recovered_by IS NOT NULL AND NOT am.recovered)"
	"   OR abs(coalesce(f.change_pct, 0) - coalesce(am.change_pct, 0)) >= 1))"
	" INSERT INTO alert (subscription_id, commit_id, kind, due_at)"
	" SELECT id, CASE WHEN delivery = 'daily' THEN NULL ELSE $4::bigint END,"
	"  CASE WHEN delivery = 'daily' THEN 'digest' ELSE 'report' END,"
	"  CASE WHEN delivery = 'daily' THEN (date_trunc('day', now() AT TIME ZONE 'UTC')"
	"   + interval '1 day') AT TIME ZONE 'UTC'"
	"  ELSE now() + make_interval(secs => $5::float8) END FROM m"
	" ON CONFLICT (subscription_id, (coalesce(commit_id, 0)), kind) WHERE state = 'pending'"
	" DO UPDATE SET due_at = CASE WHEN alert.kind = 'digest' THEN alert.due_at"
	"  ELSE EXCLUDED.due_at END";

int alert_enqueue(PGconn *c, const char *machine, const char *test, const char *variant,
		  const char *commit, double settle_s)
{
	char settle[32];
	const char *params[5] = {machine, test, variant, commit, settle};
	PGresult *r;
	int rc;

	snprintf(settle, sizeof(settle), "%.3f", settle_s);
	r = db_exec(c, SQL_ENQUEUE, 5, params);
	rc = db_ok(r) ? 0 : -1;
	if (rc)
		db_log_error("queueing alerts", c, r);
	PQclear(r);
	return rc;
}

int alert_secret_ensure(PGconn *c)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[32];
	char text[65];
	const char *params[1] = {text};
	PGresult *r;
	int rc;

	if (random_bytes(raw, sizeof(raw)))
		return -1;
	for (size_t i = 0; i < sizeof(raw); i++) {
		text[2 * i] = hex[raw[i] >> 4];
		text[2 * i + 1] = hex[raw[i] & 15];
	}
	text[64] = '\0';
	r = db_exec(c,
		    "INSERT INTO kperf_secret (name, value) VALUES ('unsubscribe', decode($1, 'hex'))"
		    " ON CONFLICT (name) DO NOTHING",
		    1, params);
	rc = db_ok(r) ? 0 : -1;
	if (rc)
		db_log_error("storing the unsubscribe secret", c, r);
	PQclear(r);
	return rc;
}

static const char SQL_CLAIM[] =
	"SELECT a.id, a.subscription_id, a.commit_id, a.kind, a.message IS NULL, a.attempts,"
	" s.email, a.rcpt, a.message,"
	" to_char(a.due_at - interval '1 day', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
	" lower(s.email), a.due_at"
	/* the robot's replies have no subscription: rendered when queued */
	" FROM alert a LEFT JOIN subscription s ON s.id = a.subscription_id"
	" WHERE ((a.state = 'pending' AND a.due_at <= now() AND a.next_attempt_at <= now()"
	/* a commit with a decision waiting for its confirmation runs waits too */
	"   AND NOT EXISTS (SELECT 1 FROM decision w WHERE w.commit_id = a.commit_id"
	"    AND w.confirmation = 'waiting'))"
	"  OR (a.state = 'sending' AND a.claimed_at < now() - interval '10 minutes'))"
	" ORDER BY a.due_at LIMIT 1 FOR UPDATE OF a SKIP LOCKED";

/* One renderer per address at a time (two kperfd on one database): what the
 * other one mails it records in alert_mailed before this one reads. */
static const char SQL_ADDRESS_LOCK[] =
	"SELECT pg_advisory_xact_lock(hashtext('kperf.alert:' || $1))";

/* The address's other pending rows of the same commit (or digest day) go into
 * the message being rendered ($1): one message per address. */
static const char SQL_MERGE[] =
	"UPDATE alert a SET state = 'merged', merged_into = $1::bigint, claimed_at = now()"
	" WHERE a.id IN (SELECT a2.id FROM alert a2 JOIN subscription s ON s.id = a2.subscription_id"
	"  WHERE lower(s.email) = $2 AND a2.kind = $3 AND a2.state = 'pending' AND a2.id <> $1::bigint"
	"  AND a2.commit_id IS NOT DISTINCT FROM $4::bigint"
	"  AND ($3 <> 'digest' OR a2.due_at = $5::timestamptz)"
	"  FOR UPDATE OF a2 SKIP LOCKED)";

/*
 * What this address is to be told, over all its subscriptions: new matches
 * (of its immediate subscriptions for a report, of its daily ones for a
 * digest), and mailed decisions that flipped, recovered or moved by a point
 * or more. One row per decision, with the subscriptions it serves (column
 * 24). Most important first.
 */
static const char SQL_ITEMS[] =
	"WITH m AS (SELECT f.id, array_agg(DISTINCT s.id ORDER BY s.id) AS subs,"
	"  max(am.verdict) AS prev"
	"  FROM decision_facts f JOIN subscription s ON lower(s.email) = $1"
	"  LEFT JOIN alert_mailed am ON am.subscription_id = s.id AND am.decision_id = f.id"
	"  WHERE ($2::bigint IS NULL OR f.commit_id = $2)"
	"  AND ($3::timestamptz IS NULL OR f.decided_at >= $3::timestamptz)"
	"  AND s.unsubscribed_at IS NULL"
	/* a regression under bisection is told once found, at its first bad commit */
	"  AND NOT EXISTS (SELECT 1 FROM bisection b WHERE b.id = f.bisection_id"
	"   AND (b.state = 'running' OR (b.state = 'found' AND b.first_bad_commit_id <> f.commit_id)))"
	"  AND ((am.decision_id IS NULL AND subscription_matches(s, f)"
	"    AND s.delivery = CASE WHEN $3::timestamptz IS NULL THEN 'immediate' ELSE 'daily' END)"
	"   OR (am.decision_id IS NOT NULL AND (am.verdict <> f.verdict"
	"    OR (f.recovered_by IS NOT NULL AND NOT am.recovered)"
	"    OR abs(coalesce(f.change_pct, 0) - coalesce(am.change_pct, 0)) >= 1)))"
	"  GROUP BY f.id)"
	"SELECT f.id, f.metric, f.machine, f.suite, t.params::text, f.knobs::text, f.verdict,"
	" m.prev, f.sha, b.sha, rc.sha, f.change_pct, f.change_abs, f.ci_lo_pct, f.ci_hi_pct,"
	" f.absolute, f.kpi, f.machine_id, f.test_id, f.variant_id, f.base_commit_id,"
	" f.base_kind, f.commit_id, f.recovered_by IS NOT NULL, m.subs::text, f.confirmation,"
	" (SELECT b.id FROM bisection b WHERE b.id = f.bisection_id AND b.state = 'found'),"
	" CASE WHEN f.confirmation IN ('unconfirmed', 'waiting') THEN CASE"
	"  WHEN NOT EXISTS (SELECT 1 FROM machine_offer o WHERE o.machine_id = f.machine_id"
	"   AND o.test_id = f.test_id) THEN 'no_agent'"
	"  WHEN EXISTS (SELECT 1 FROM job j WHERE j.decision_id = f.id AND j.state = 'failed')"
	"   THEN 'failed'"
	"  WHEN NOT EXISTS (SELECT 1 FROM job j WHERE j.decision_id = f.id) THEN 'no_job'"
	"  ELSE 'timeout' END END,"
	" (SELECT j.failures->-1->>'reason' FROM job j WHERE j.decision_id = f.id"
	"  AND j.state = 'failed' ORDER BY j.id DESC LIMIT 1), f.base_runs, f.target_runs"
	" FROM m JOIN decision_facts f ON f.id = m.id JOIN test t ON t.id = f.test_id"
	" JOIN commits b ON b.id = f.base_commit_id LEFT JOIN commits rc ON rc.id = f.recovered_by"
	" ORDER BY f.kpi DESC, (f.verdict = 'regression') DESC, f.kpi_rank NULLS LAST,"
	"  abs(CASE WHEN f.absolute THEN f.change_abs ELSE f.change_pct END) DESC NULLS LAST, f.id";

/* The subscriptions a message serves, each with its filters in words and
 * its own unsubscribe token; then the token of all of them together. */
static const char SQL_SERVED[] =
	"WITH k AS (SELECT value FROM kperf_secret WHERE name = 'unsubscribe')"
	" SELECT s.id, concat_ws(', ', 'focus=' || s.focus, 'series=' || s.series,"
	"  'suite=' || s.suite, 'metric=' || s.metric, 'machine=' || s.machine,"
	"  'files=' || array_to_string(s.files, ' '), 'min_change_pct=' || s.min_change_pct,"
	"  CASE WHEN s.verdicts <> '{regression}' THEN 'verdicts=' || array_to_string(s.verdicts, ',') END,"
	"  CASE WHEN s.delivery <> 'immediate' THEN 'delivery=' || s.delivery END),"
	"  left(encode(sha256(k.value || sha256(k.value || convert_to('unsubscribe:' || s.id,"
	"  'UTF8'))), 'hex'), 32)"
	" FROM subscription s, k WHERE s.id = ANY ($1::bigint[]) ORDER BY s.id";

/* A found bisection: its range and steps, for the mail of its first bad commit. */
static const char SQL_BISECTION[] =
	"SELECT g.sha, bd.sha, cardinality(b.chain), m.name,"
	" (SELECT string_agg(format('%s  %-7s %s runs  %s%%  (%s)', left(sc.sha, 12), st.class,"
	"   st.runs, CASE WHEN st.change_pct_vs_good IS NULL THEN '?'"
	"   ELSE to_char(st.change_pct_vs_good, 'FMSG990.0') END, coalesce(sc.subject, '')),"
	"   E'\\n' ORDER BY st.judged_at, sc.id)"
	"  FROM bisection_step st JOIN commits sc ON sc.id = st.commit_id"
	"  WHERE st.bisection_id = b.id)"
	" FROM bisection b JOIN commits g ON g.id = b.good_commit_id"
	" JOIN commits bd ON bd.id = b.bad_commit_id JOIN machine m ON m.id = b.machine_id"
	" WHERE b.id = $1::bigint";

static const char SQL_COMMIT[] =
	"SELECT sha, subject, series, branch, message_id FROM commits WHERE id = $1";

static const char SQL_MACHINE[] =
	"SELECT m.cpu_model, m.nr_cpus, m.sockets, m.memory_mb, m.name, t.suite, t.params::text,"
	" v.knobs::text,"
	" r.command, r.collector::text"
	" FROM machine m, test t, variant v LEFT JOIN LATERAL (SELECT r.command,"
	"  r.doc->'collector' AS collector FROM run r"
	"  WHERE r.commit_id = $4 AND r.machine_id = $1 AND r.test_id = $2 AND r.variant_id = $3"
	"  AND r.valid ORDER BY r.id DESC LIMIT 1) r ON true"
	" WHERE m.id = $1 AND t.id = $2 AND v.id = $3";

/* The suites of the commit ($1) on the machine ($2) whose runs differ in
 * the work arguments of their command from the base's: "suite: what". */
static const char SQL_NOT_JUDGED[] =
	"SELECT string_agg(DISTINCT t.suite || ': ' || d.command_differs, E'\\n')"
	" FROM decision d JOIN test t ON t.id = d.test_id"
	" WHERE d.commit_id = $1 AND d.machine_id = $2 AND d.command_differs IS NOT NULL";

/* The unsubscribe token of a list of subscription ids ("3,7"). */
static const char SQL_TOKEN[] =
	"SELECT left(encode(sha256(k.value || sha256(k.value || convert_to('unsubscribe:' || $1,"
	" 'UTF8'))), 'hex'), 32) FROM kperf_secret k WHERE k.name = 'unsubscribe'";

static const char SQL_THREAD[] =
	"WITH ins AS (INSERT INTO alert_thread_rcpt (rcpt, topic, root_message_id)"
	"  VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING root_message_id)"
	" SELECT root_message_id, false FROM alert_thread_rcpt WHERE rcpt = $1"
	"  AND topic = $2 UNION ALL SELECT root_message_id, true FROM ins";

static const char SQL_MAILED[] =
	"INSERT INTO alert_mailed (subscription_id, decision_id, alert_id, verdict, change_pct,"
	" recovered) SELECT unnest($1::bigint[]), $2, $3, $4, $5, $6"
	" ON CONFLICT (subscription_id, decision_id)"
	" DO UPDATE SET alert_id = $3, verdict = $4, change_pct = $5, recovered = $6";

static const char SQL_STORE[] =
	"UPDATE alert SET rcpt = $2, subject = $3, message_id = $4, message = $5,"
	" subscription_ids = $6::bigint[],"
	" state = 'sending', claimed_at = now(), attempts = attempts + 1 WHERE id = $1";

static const char SQL_RESEND[] =
	"UPDATE alert SET state = 'sending', claimed_at = now(), attempts = attempts + 1"
	" WHERE id = $1";

static const char SQL_SKIP[] =
	"UPDATE alert SET state = 'skipped', claimed_at = now() WHERE id = $1";

static PGresult *query(PGconn *c, const char *sql, int n, const char *const *params,
		       const char *what)
{
	PGresult *r = db_exec(c, sql, n, params);
	if (!db_ok(r)) {
		db_log_error(what, c, r);
		PQclear(r);
		return NULL;
	}
	return r;
}

static const char *opt(PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? NULL : PQgetvalue(r, row, col);
}

static double num(PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? NAN : strtod(PQgetvalue(r, row, col), NULL);
}

/* The host part of the public URL, for Message-IDs. */
void alert_url_host(const char *url, char *host, size_t cap)
{
	const char *p = url ? strstr(url, "://") : NULL;
	size_t n;

	if (!p) {
		snprintf(host, cap, "kperf.localdomain");
		return;
	}
	p += 3;
	n = strcspn(p, ":/?#");
	snprintf(host, cap, "%.*s", (int)(n ? n : 1), n ? p : "kperf.localdomain");
}

/* LKP's table of the headline's key group, base against commit. */
static void lkp_table(PGconn *c, PGresult *items, PGresult *mach, struct buf *out)
{
	char base_ids[32], tgt_ids[32];
	struct cmp_filter fb = {base_ids, "{}", "{}", PQgetvalue(mach, 0, 5),
				PQgetvalue(mach, 0, 4), NULL, PQgetvalue(mach, 0, 7),
				PQgetvalue(mach, 0, 6)};
	struct cmp_filter ft = fb;
	struct lkp_kernel kernels[2] = {{PQgetvalue(items, 0, 9), NULL},
					{PQgetvalue(items, 0, 8), NULL}};
	struct cmp_set set;
	size_t nb = 0, nt = 0;
	PGresult *failed = NULL;

	snprintf(base_ids, sizeof(base_ids), "{%s}", PQgetvalue(items, 0, 20));
	snprintf(tgt_ids, sizeof(tgt_ids), "{%s}", PQgetvalue(items, 0, 22));
	ft.commit_ids = tgt_ids;
	cmp_set_init(&set, 2);
	if (cmp_load_side(c, &set, 0, &fb, &nb, NULL, &failed) ||
	    cmp_load_side(c, &set, 1, &ft, &nt, NULL, &failed)) {
		db_log_error("loading an alert's table", c, failed);
		PQclear(failed);
	} else {
		cmp_set_sort(&set);
		cmp_render_lkp(&set, kernels, out);
	}
	cmp_set_release(&set);
}

void alert_date(char *out, size_t cap)
{
	static const char *const days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
	static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
					     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	snprintf(out, cap, "%s, %02d %s %04d %02d:%02d:%02d +0000", days[tm.tm_wday], tm.tm_mday,
		 months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* The subscriptions the items serve (column 24 of each, "{3,7}"), as one
 * sorted array literal without repeats, into out. */
static void served_subscriptions(PGresult *items, struct buf *out)
{
	int n = PQntuples(items), m = 0;
	long *ids = NULL;
	size_t cap = 0;

	for (int i = 0; i < n; i++) {
		const char *p = PQgetvalue(items, i, 24);
		while (*p) {
			char *end;
			long v = strtol(p + 1, &end, 10);
			if (end == p + 1)
				break;
			if ((size_t)m == cap)
				ids = xrealloc(ids, (cap = cap ? 2 * cap : 8) * sizeof(*ids));
			ids[m++] = v;
			p = end;
			if (*p != ',')
				break;
		}
	}
	for (int i = 1; i < m; i++) /* insertion sort: a handful of ids */
		for (int j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
			long t = ids[j];
			ids[j] = ids[j - 1];
			ids[j - 1] = t;
		}
	buf_putc(out, '{');
	for (int i = 0; i < m; i++)
		if (!i || ids[i] != ids[i - 1])
			buf_printf(out, "%s%ld", i ? "," : "", ids[i]);
	buf_putc(out, '}');
	free(ids);
}

/* The message's footer lines about the subscriptions it serves (SQL_SERVED's
 * rows): each one's filters, and with more than one, each one's own link. */
static void served_text(PGresult *srv, const char *public_url, struct buf *out)
{
	int n = PQntuples(srv);

	buf_printf(out, "You get this for your subscription%s", n > 1 ? "s" : "");
	for (int i = 0; i < n; i++) {
		const char *what = PQgetvalue(srv, i, 1);
		buf_printf(out, "%s %s (%s)", i ? (i == n - 1 ? " and" : ",") : "",
			   PQgetvalue(srv, i, 0), *what ? what : "everything");
	}
	buf_puts(out, ".\n");
	if (n > 1 && public_url)
		for (int i = 0; i < n; i++)
			buf_printf(out, "Only %s: %s/api/v1/unsubscribe?s=%s&t=%s\n",
				   PQgetvalue(srv, i, 0), public_url, PQgetvalue(srv, i, 0),
				   PQgetvalue(srv, i, 2));
}

/* What render() gathers: the query results the facts point into, the text
 * built for them and the facts themselves; released by render_release(). */
struct render {
	PGresult *items, *com, *mach, *tok, *thr, *srv, *nj, *bis;
	struct alert_item *it;
	int n;
	struct alert_facts f;
	struct buf msg, subject, table, unsub, subs, served, bisected;
	char host[256], msgid[400], date[64], reply[600];
};

static void render_release(struct render *r)
{
	free(r->it);
	PQclear(r->items);
	PQclear(r->com);
	PQclear(r->mach);
	PQclear(r->nj);
	PQclear(r->tok);
	PQclear(r->thr);
	PQclear(r->srv);
	PQclear(r->bis);
	buf_release(&r->bisected);
	buf_release(&r->subs);
	buf_release(&r->served);
	buf_release(&r->msg);
	buf_release(&r->subject);
	buf_release(&r->table);
	buf_release(&r->unsub);
}

/* The items (SQL_ITEMS's rows) as alert_items pointing into r->items. */
static void render_items(struct render *r)
{
	PGresult *items = r->items;

	r->it = xcalloc((size_t)r->n, sizeof(*r->it));
	for (int i = 0; i < r->n; i++) {
		struct alert_item *it = &r->it[i];
		it->decision_id = strtol(PQgetvalue(items, i, 0), NULL, 10);
		it->metric = PQgetvalue(items, i, 1);
		it->machine = PQgetvalue(items, i, 2);
		it->suite = PQgetvalue(items, i, 3);
		it->params = PQgetvalue(items, i, 4);
		it->variant = PQgetvalue(items, i, 5);
		it->verdict = PQgetvalue(items, i, 6);
		it->previous_verdict = opt(items, i, 7);
		it->commit = opt(items, i, 8);
		it->base_commit = opt(items, i, 9);
		it->recovered_by = opt(items, i, 10);
		it->change_pct = num(items, i, 11);
		it->change_abs = num(items, i, 12);
		it->ci_lo_pct = num(items, i, 13);
		it->ci_hi_pct = num(items, i, 14);
		it->absolute = !strcmp(PQgetvalue(items, i, 15), "t");
		it->kpi = !strcmp(PQgetvalue(items, i, 16), "t");
		it->confirmation = opt(items, i, 25);
		it->unconfirmed = opt(items, i, 27);
		it->unconfirmed_why = opt(items, i, 28);
		it->base_runs = strtol(PQgetvalue(items, i, 29), NULL, 10);
		it->target_runs = strtol(PQgetvalue(items, i, 30), NULL, 10);
	}
}

/* The footer: the signed unsubscribe link for every subscription served and
 * the lines naming them; 0, or -1 on a database error. */
static int render_served(PGconn *c, const struct alert_config *cfg, struct render *r)
{
	/* "{3,7}" -> "3,7": the link unsubscribes every subscription served */
	char *list = xstrdup(buf_str(&r->subs) + 1);
	const char *p1[1] = {list}, *pa[1] = {buf_str(&r->subs)};

	list[strlen(list) - 1] = '\0';
	r->tok = query(c, SQL_TOKEN, 1, p1, "signing the unsubscribe link");
	if (r->tok && cfg->public_url && PQntuples(r->tok) == 1) {
		buf_printf(&r->unsub, "%s/api/v1/unsubscribe?s=%s&t=%s", cfg->public_url, list,
			   PQgetvalue(r->tok, 0, 0));
		r->f.unsubscribe_url = buf_str(&r->unsub);
	}
	free(list);
	if (!r->tok || !(r->srv = query(c, SQL_SERVED, 1, pa, "naming the subscriptions")))
		return -1;
	served_text(r->srv, cfg->public_url, &r->served);
	r->f.served = buf_str(&r->served);
	return 0;
}

/* A report's commit and headline machine, and the commands run with other
 * arguments than their base's; 0, or -1 on an error or a missing row. */
static int render_commit(PGconn *c, const char *commit, struct render *r)
{
	PGresult *items = r->items;
	const char *p1[1] = {commit};
	const char *p4[4] = {PQgetvalue(items, 0, 17), PQgetvalue(items, 0, 18),
			     PQgetvalue(items, 0, 19), commit};
	const char *pn[2] = {commit, PQgetvalue(items, 0, 17)};
	struct alert_facts *f = &r->f;

	if (!(r->com = query(c, SQL_COMMIT, 1, p1, "reading the commit")) ||
	    PQntuples(r->com) != 1 ||
	    !(r->mach = query(c, SQL_MACHINE, 4, p4, "reading the machine")) ||
	    PQntuples(r->mach) != 1)
		return -1;
	f->sha = opt(r->com, 0, 0);
	f->subject = opt(r->com, 0, 1);
	f->series = opt(r->com, 0, 2);
	f->branch = opt(r->com, 0, 3);
	f->base_kind = PQgetvalue(items, 0, 21);
	f->cpu_model = opt(r->mach, 0, 0);
	f->nr_cpus = opt(r->mach, 0, 1);
	f->sockets = opt(r->mach, 0, 2);
	f->memory_mb = opt(r->mach, 0, 3);
	f->command = opt(r->mach, 0, 8);
	f->collector = opt(r->mach, 0, 9);
	if (!(r->nj = query(c, SQL_NOT_JUDGED, 2, pn, "reading changed commands")))
		return -1;
	f->not_judged = PQntuples(r->nj) == 1 ? opt(r->nj, 0, 0) : NULL;
	return 0;
}

/* How a bisection found the commit, when one did (items column 26);
 * 0, or -1 on a database error. */
static int render_bisection(PGconn *c, struct render *r)
{
	const char *pb[1];

	if (PQgetisnull(r->items, 0, 26))
		return 0;
	pb[0] = PQgetvalue(r->items, 0, 26);
	if (!(r->bis = query(c, SQL_BISECTION, 1, pb, "reading the bisection")))
		return -1;
	if (PQntuples(r->bis) == 1) {
		buf_printf(&r->bisected,
			   "Bisected between %.12s (good) and %.12s (bad), %s commits,\n"
			   "on %s:\n\n%s\n",
			   PQgetvalue(r->bis, 0, 0), PQgetvalue(r->bis, 0, 1),
			   PQgetvalue(r->bis, 0, 2), PQgetvalue(r->bis, 0, 3),
			   PQgetvalue(r->bis, 0, 4));
		r->f.bisection = buf_str(&r->bisected);
	}
	return 0;
}

/* In-Reply-To: one thread per series (or commit) and recipient, the first
 * message replying to the patch mail; 0, or -1 on a database error. */
static int render_thread(PGconn *c, const char *rcpt, const char *commit, struct render *r)
{
	const struct alert_facts *f = &r->f;
	const char *patch = opt(r->com, 0, 4);
	char topic[300], root[600];
	const char *tp[3] = {rcpt, topic, root};

	snprintf(topic, sizeof(topic), "%s:%s", f->series ? "series" : "commit",
		 f->series ? f->series : (f->sha ? f->sha : commit));
	if (patch)
		snprintf(root, sizeof(root), "%s%s%s", *patch == '<' ? "" : "<", patch,
			 *patch == '<' ? "" : ">");
	else
		snprintf(root, sizeof(root), "%s", r->msgid);
	if (!(r->thr = query(c, SQL_THREAD, 3, tp, "threading an alert")))
		return -1;
	if (PQntuples(r->thr) >= 1 && (strcmp(PQgetvalue(r->thr, 0, 0), r->msgid) || patch)) {
		snprintf(r->reply, sizeof(r->reply), "%s", PQgetvalue(r->thr, 0, 0));
		r->f.in_reply_to = r->reply;
	}
	return 0;
}

/* A report's facts beyond the items: commit, machine, bisection, LKP's
 * table and thread; 0, or -1 on an error. */
static int render_report(PGconn *c, const char *rcpt, const char *commit, struct render *r)
{
	if (render_commit(c, commit, r) || render_bisection(c, r))
		return -1;
	lkp_table(c, r->items, r->mach, &r->table);
	r->f.lkp_table = buf_str(&r->table);
	return render_thread(c, rcpt, commit, r);
}

/* Record what each item's subscriptions were told, then store the rendered
 * message for alert row id; 0, or -1 on a database error. */
static int render_store(PGconn *c, const char *id, struct render *r)
{
	for (int i = 0; i < r->n; i++) {
		const char *pm[6] = {PQgetvalue(r->items, i, 24), PQgetvalue(r->items, i, 0), id,
				     r->it[i].verdict, opt(r->items, i, 11),
				     PQgetvalue(r->items, i, 23)};
		PGresult *res = query(c, SQL_MAILED, 6, pm, "recording mailed decisions");
		if (!res)
			return -1;
		PQclear(res);
	}
	{
		const char *ps[6] = {id, r->f.to, buf_str(&r->subject), r->msgid, buf_str(&r->msg),
				     buf_str(&r->subs)};
		PGresult *res = query(c, SQL_STORE, 6, ps, "storing an alert");
		if (!res)
			return -1;
		PQclear(res);
	}
	return 0;
}

/* Render alert row 0 of claim; 1 rendered into out, 2 nothing to say, -1 error. */
static int render(PGconn *c, const struct alert_config *cfg, PGresult *claim,
		  struct alert_claimed *out)
{
	const char *id = PQgetvalue(claim, 0, 0), *rcpt = PQgetvalue(claim, 0, 10);
	const char *commit = opt(claim, 0, 2);
	int digest = !strcmp(PQgetvalue(claim, 0, 3), "digest");
	const char *p3[3] = {rcpt, commit, digest ? PQgetvalue(claim, 0, 9) : NULL};
	struct render r;
	int rc = -1;

	memset(&r, 0, sizeof(r));
	if (!(r.items = query(c, SQL_ITEMS, 3, p3, "gathering an alert")))
		goto out;
	r.n = PQntuples(r.items);
	if (r.n == 0) {
		const char *p1[1] = {id};
		PGresult *res = query(c, SQL_SKIP, 1, p1, "skipping an alert");
		rc = res ? 2 : -1;
		PQclear(res);
		goto out;
	}
	render_items(&r);
	served_subscriptions(r.items, &r.subs);
	alert_url_host(cfg->public_url, r.host, sizeof(r.host));
	snprintf(r.msgid, sizeof(r.msgid), "<kperf.alert.%s.%ld@%s>", id, (long)time(NULL),
		 r.host);
	alert_date(r.date, sizeof(r.date));
	r.f.to = PQgetvalue(claim, 0, 6);
	r.f.from = cfg->from;
	r.f.public_url = cfg->public_url;
	r.f.message_id = r.msgid;
	r.f.date = r.date;
	r.f.digest = digest;
	r.f.items = r.it;
	r.f.nitems = (size_t)r.n;
	if (render_served(c, cfg, &r) || (!digest && render_report(c, rcpt, commit, &r)))
		goto out;
	alert_subject(&r.f, &r.subject);
	alert_message(&r.f, &r.msg);
	if (render_store(c, id, &r))
		goto out;
	out->rcpt = xstrdup(r.f.to);
	out->len = r.msg.len;
	out->message = buf_detach(&r.msg, NULL);
	rc = 1;
out:
	render_release(&r);
	return rc;
}

int alert_claim(PGconn *c, const struct alert_config *cfg, struct alert_claimed *out)
{
	PGresult *claim = query(c, SQL_CLAIM, 0, NULL, "claiming an alert");
	int rc;

	memset(out, 0, sizeof(*out));
	if (!claim)
		return -1;
	if (PQntuples(claim) == 0) {
		PQclear(claim);
		return 0;
	}
	snprintf(out->id, sizeof(out->id), "%s", PQgetvalue(claim, 0, 0));
	out->attempts = strtol(PQgetvalue(claim, 0, 5), NULL, 10) + 1;
	if (!strcmp(PQgetvalue(claim, 0, 4), "t")) {
		const char *pl[1] = {PQgetvalue(claim, 0, 10)};
		const char *pm[5] = {out->id, PQgetvalue(claim, 0, 10), PQgetvalue(claim, 0, 3),
				     opt(claim, 0, 2), PQgetvalue(claim, 0, 11)};
		PGresult *lk = query(c, SQL_ADDRESS_LOCK, 1, pl, "locking an address's alerts");
		PGresult *mg = lk ? query(c, SQL_MERGE, 5, pm, "merging an address's alerts") : NULL;
		rc = mg ? render(c, cfg, claim, out) : -1;
		PQclear(lk);
		PQclear(mg);
	} else {
		const char *p1[1] = {out->id};
		PGresult *r = query(c, SQL_RESEND, 1, p1, "claiming an alert");
		rc = r ? 1 : -1;
		PQclear(r);
		if (r) {
			out->rcpt = xstrdup(PQgetvalue(claim, 0, 7));
			out->message = xstrdup(PQgetvalue(claim, 0, 8));
			out->len = strlen(out->message);
		}
	}
	PQclear(claim);
	return rc;
}

void alert_claimed_release(struct alert_claimed *out)
{
	free(out->rcpt);
	free(out->message);
	memset(out, 0, sizeof(*out));
}

int alert_mark_sent(PGconn *c, const char *id)
{
	const char *p1[1] = {id};
	return db_do(c, "UPDATE alert SET state = 'sent', sent_at = now(), last_error = NULL"
			" WHERE id = $1",
		     1, p1);
}

int alert_mark_failed(PGconn *c, const struct alert_config *cfg, const struct alert_claimed *a,
		      const char *error)
{
	char delay[32], max[16];
	const char *params[4] = {a->id, error, delay, max};
	double d = cfg->retry_s * pow(2.0, (double)(a->attempts - 1));

	snprintf(delay, sizeof(delay), "%.3f", d > 3600 ? 3600 : d);
	snprintf(max, sizeof(max), "%ld", cfg->max_attempts);
	return db_do(c,
		     "UPDATE alert SET last_error = $2, state = CASE WHEN attempts >= $4::int"
		     " THEN 'failed' ELSE 'pending' END,"
		     " next_attempt_at = now() + make_interval(secs => $3::float8) WHERE id = $1",
		     4, params);
}
