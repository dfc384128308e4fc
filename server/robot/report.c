/*
 * report.c - a plan target's outcome and its reply (see report.h).
 */
#include <curl/curl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/buf.h"
#include "lib/util.h"
#include "server/db/db.h"
#include "server/mail/alert.h"
#include "server/mail/robot_msg.h"
#include "server/reads/compare_load.h"
#include "server/robot/report.h"
#include "server/stats/compare_lkp.h"

static struct report_config rcfg = {"kperf@localhost", "http://127.0.0.1:8080"};

void report_configure(const struct report_config *cfg)
{
	rcfg = *cfg;
}

/* The commits a target stands for: its series' patches (as applied), its
 * branch head, its base. */
#define TARGET_COMMITS(t)                                                                      \
	"(SELECT pp.commit_id FROM posted_patch pp WHERE pp.series_id = " t ".series_id"         \
	" AND pp.commit_id IS NOT NULL UNION ALL SELECT " t ".head_commit_id"                      \
	" UNION ALL SELECT " t ".base_commit_id)"

/* Targets whose jobs have all ended: their head, and whether decisions,
 * confirmations or bisections of their commits are still under way. */
static const char SQL_READY[] =
	"WITH t AS (SELECT pt.*, p.name AS plan, p.report_mode, p.report_cc, p.report_clean,"
	"  p.report_regzbot, p.branch,"
	"  CASE WHEN pt.series_id IS NULL THEN pt.head_commit_id ELSE (SELECT pp.commit_id"
	"   FROM posted_patch pp JOIN posted_series s ON s.id = pp.series_id"
	"   WHERE pp.series_id = pt.series_id AND pp.position = s.total) END AS head"
	"  FROM plan_target pt JOIN plan p ON p.id = pt.plan_id"
	"  WHERE pt.state IN ('queued', 'applied')"
	"  AND EXISTS (SELECT 1 FROM job j WHERE j.plan_target_id = pt.id)"
	"  AND NOT EXISTS (SELECT 1 FROM job j WHERE j.plan_target_id = pt.id"
	"   AND j.state IN ('queued', 'running'))"
	"  ORDER BY pt.id LIMIT 8 FOR UPDATE OF pt SKIP LOCKED)"
	" SELECT t.id, t.series_id, t.head, t.base_commit_id, t.plan, t.report_mode,"
	"  array_to_string(t.report_cc, ', '), t.report_clean, t.report_regzbot, t.branch,"
	"  (EXISTS (SELECT 1 FROM decision_queue q WHERE q.commit_id IN " TARGET_COMMITS("t") ")"
	"   OR EXISTS (SELECT 1 FROM decision d WHERE d.commit_id IN " TARGET_COMMITS("t")
	"    AND d.confirmation = 'waiting')"
	"   OR EXISTS (SELECT 1 FROM bisection b JOIN decision d ON d.id = b.decision_id"
	"    WHERE d.commit_id = t.head AND b.state = 'running')"
	"   OR EXISTS (SELECT 1 FROM job j WHERE j.commit_id IN " TARGET_COMMITS("t")
	"    AND j.state IN ('queued', 'running'))),"
	"  (SELECT f->>'reason' FROM job j, jsonb_array_elements(j.failures) f"
	"   WHERE j.plan_target_id = t.id ORDER BY f->>'at' DESC LIMIT 1)"
	" FROM t";

/* The head's KPI change to report: a bisection from it (which holds the
 * change even once a commit between got runs and the head's own decision
 * is against it), else its regressions, then its largest change. */
static const char SQL_CHANGE[] =
	"(SELECT d.id, 'regression'::text, b.id, 0 FROM bisection b JOIN decision d"
	"  ON d.id = b.decision_id WHERE b.bad_commit_id = $1::bigint"
	"  AND b.state IN ('found', 'inconclusive')"
	"  AND (b.machine_id, b.test_id) IN (SELECT machine_id, test_id FROM job"
	"   WHERE plan_target_id = $2::bigint) ORDER BY b.id DESC LIMIT 1)"
	" UNION ALL"
	" (SELECT d.id, d.verdict, d.bisection_id, 1 FROM decision d WHERE d.commit_id = $1::bigint"
	"  AND d.kpi AND d.verdict IN ('regression', 'improvement') AND d.command_differs IS NULL"
	"  AND coalesce(d.confirmation, '') <> 'refuted'"
	"  AND (d.machine_id, d.test_id) IN (SELECT machine_id, test_id FROM job"
	"   WHERE plan_target_id = $2::bigint)"
	"  ORDER BY d.verdict = 'regression' DESC, abs(d.change_pct) DESC NULLS LAST, d.id LIMIT 1)"
	" ORDER BY 4 LIMIT 1";

/* What the reply says of decision $1 (or of the same key and metric at the
 * first bad commit $2, when it was decided there), against base $3. */
static const char SQL_FACTS[] =
	"WITH h AS (SELECT * FROM decision WHERE id = $1::bigint),"
	" d AS (SELECT coalesce((SELECT x.id FROM decision x, h WHERE x.commit_id = $2::bigint"
	"   AND x.machine_id = h.machine_id AND x.test_id = h.test_id"
	"   AND x.variant_id = h.variant_id AND x.metric_id = h.metric_id), h.id) AS id FROM h)"
	" SELECT mt.name, to_char(x.change_pct, 'FMSG990.0') || '%',"
	"  CASE WHEN x.ci_lo_pct IS NOT NULL THEN format('95%% CI %s%% .. %s%% (%s), p = %s,"
	" %s -> %s runs', to_char(x.ci_lo_pct, 'FMSG990.0'), to_char(x.ci_hi_pct, 'FMSG990.0'),"
	"   initcap(coalesce(x.test_used, 'welch')), btrim(to_char(x.p_value, '9.9EEEE')), x.base_runs,"
	"   x.target_runs) END,"
	"  t.suite, t.params::text, v.knobs::text, m.name,"
	"  format('%s: %s CPUs, %s sockets, %s MB memory, %s', m.name, coalesce(m.nr_cpus::text, '?'),"
	"   coalesce(m.sockets::text, '?'), coalesce(m.memory_mb::text, '?'),"
	"   coalesce(m.cpu_model, 'an unknown CPU')),"
	"  fc.sha, fc.subject, bc.sha, fc.author, x.id, x.verdict,"
	"  (SELECT r.command FROM run r WHERE r.commit_id = fc.id AND r.machine_id = x.machine_id"
	"   AND r.test_id = x.test_id ORDER BY r.id DESC LIMIT 1)"
	" FROM d JOIN decision x ON x.id = d.id JOIN metric mt ON mt.id = x.metric_id"
	" JOIN test t ON t.id = x.test_id JOIN variant v ON v.id = x.variant_id"
	" JOIN machine m ON m.id = x.machine_id, commits fc, commits bc"
	" WHERE fc.id = $2::bigint AND bc.id = $3::bigint";

/* The posted patch a commit was made from, with its series and inbox. */
static const char SQL_PATCH[] =
	"SELECT pp.position, pp.msgid, pp.subject, pp.author_name, pp.author_email, s.head_msgid,"
	" i.url, i.list, s.name, s.version, s.total, s.subject"
	" FROM posted_patch pp JOIN posted_series s ON s.id = pp.series_id"
	" JOIN inbox i ON i.id = s.inbox_id WHERE pp.series_id = $1::bigint AND pp.commit_id = $2::bigint";

/* A found bisection's steps, in the order they were judged. */
static const char SQL_STEPS[] =
	"SELECT g.sha, bd.sha, cardinality(b.chain), b.state, coalesce(b.reason, ''),"
	" (SELECT string_agg(format('%s  %-7s %s runs  %s%%  (%s)', left(sc.sha, 12), st.class,"
	"   st.runs, CASE WHEN st.change_pct_vs_good IS NULL THEN '?'"
	"   ELSE to_char(st.change_pct_vs_good, 'FMSG990.0') END, coalesce(sc.subject, '')),"
	"   E'\\n' ORDER BY st.judged_at, sc.id)"
	"  FROM bisection_step st JOIN commits sc ON sc.id = st.commit_id"
	"  WHERE st.bisection_id = b.id), b.first_bad_commit_id"
	" FROM bisection b JOIN commits g ON g.id = b.good_commit_id"
	" JOIN commits bd ON bd.id = b.bad_commit_id WHERE b.id = $1::bigint";

static const char SQL_QUEUE[] =
	"INSERT INTO alert (subscription_id, commit_id, kind, state, due_at, rcpt, subject,"
	" message_id, message, plan_target_id, robot_kind, in_reply_to)"
	" VALUES (NULL, $1::bigint, 'robot', $2, now(), $3, $4, $5, $6, $7::bigint, $8, $9)"
	" ON CONFLICT (plan_target_id, robot_kind) WHERE kind = 'robot' DO NOTHING";

static const char SQL_TARGET[] =
	"UPDATE plan_target SET state = $2, detail = $3, first_bad_position = $4::int,"
	" updated_at = now() WHERE id = $1::bigint";

static const char SQL_SERIES_STATE[] =
	"UPDATE posted_series SET state = $2, state_detail = $3, updated_at = now()"
	" WHERE id = $1::bigint";

/* The clean report's table: each KPI of the head against the base. */
static const char SQL_KPIS[] =
	"SELECT string_agg(format('%-44s %14s %14s %8s  %s', mt.name || ' (' || t.suite || ', '"
	"  || m.name || ')', to_char(d.base_mean, 'FM999999999990.00'),"
	"  to_char(d.target_mean, 'FM999999999990.00'),"
	"  coalesce(to_char(d.change_pct, 'FMSG990.0') || '%', '-'), d.verdict),"
	"  E'\\n' ORDER BY t.suite, m.name, d.kpi_rank NULLS LAST, mt.name)"
	" FROM decision d JOIN metric mt ON mt.id = d.metric_id JOIN test t ON t.id = d.test_id"
	" JOIN machine m ON m.id = d.machine_id WHERE d.commit_id = $1::bigint AND d.kpi";

struct target {
	PGresult *r;
	int row;
	const char *id, *series, *head, *base, *plan, *mode, *cc, *branch;
	int clean, regzbot;
};

static const char *col(PGresult *r, int row, int c)
{
	return PQgetisnull(r, row, c) ? NULL : PQgetvalue(r, row, c);
}

static int set_state(PGconn *c, const struct target *t, const char *state, const char *detail,
		     const char *first_bad)
{
	const char *p[4] = {t->id, state, detail, first_bad};
	const char *q[3] = {t->series, state, detail};

	if (db_do(c, SQL_TARGET, 4, p))
		return -1;
	return t->series ? db_do(c, SQL_SERIES_STATE, 3, q) : 0;
}

/* LKP's table of the key, base against the first bad commit. */
static void lkp_table(PGconn *c, PGresult *fx, const char *base, const char *bad,
		      struct buf *out)
{
	char base_ids[48], bad_ids[48];
	struct cmp_filter fb = {base_ids, "{}", "{}", PQgetvalue(fx, 0, 3), PQgetvalue(fx, 0, 6),
				NULL, PQgetvalue(fx, 0, 5), PQgetvalue(fx, 0, 4)};
	struct cmp_filter ft = fb;
	struct lkp_kernel kernels[2] = {{PQgetvalue(fx, 0, 10), NULL},
					{PQgetvalue(fx, 0, 8), col(fx, 0, 9)}};
	struct cmp_set set;
	size_t nb = 0, nt = 0;
	PGresult *failed = NULL;

	snprintf(base_ids, sizeof(base_ids), "{%s}", base);
	snprintf(bad_ids, sizeof(bad_ids), "{%s}", bad);
	ft.commit_ids = bad_ids;
	cmp_set_init(&set, 2);
	if (cmp_load_side(c, &set, 0, &fb, &nb, NULL, &failed) ||
	    cmp_load_side(c, &set, 1, &ft, &nt, NULL, &failed)) {
		db_log_error("loading a reply's table", c, failed);
		PQclear(failed);
	} else {
		cmp_set_sort(&set);
		cmp_render_lkp(&set, kernels, out);
	}
	cmp_set_release(&set);
}

static void reproduce(PGresult *fx, PGresult *pp, struct buf *out)
{
	json_t *params = json_loads(PQgetvalue(fx, 0, 4), 0, NULL);
	const char *key;
	json_t *v;

	buf_puts(out, "To reproduce:\n\n");
	buf_printf(out, "\tgit checkout %s\n", PQgetvalue(fx, 0, 10));
	if (pp)
		buf_printf(out, "\tb4 am -C -T -v %s -P 1-%s -o - %s | git am\n", PQgetvalue(pp, 0, 9),
			   PQgetvalue(pp, 0, 0), PQgetvalue(pp, 0, 5));
	buf_puts(out, "\t# build and boot that kernel, then on the test machine:\n");
	buf_printf(out, "\tkperf-collect run --suite %s", PQgetvalue(fx, 0, 3));
	json_object_foreach(params, key, v)
		buf_printf(out, " \\\n\t\t--param %s=%s", key,
			   json_string_value(v) ? json_string_value(v) : "");
	buf_printf(out, " \\\n\t\t-- %s\n",
		   col(fx, 0, 14) ? PQgetvalue(fx, 0, 14) : "<the catalogue's command>");
	json_decref(params);
}

/* The bisection's lines (NULL when there is none), into out. */
static int bisection_text(PGconn *c, const char *bisection, struct buf *out, char *first_bad,
			  size_t cap)
{
	const char *p[1] = {bisection};
	PGresult *r;

	if (!bisection)
		return 0;
	r = db_exec(c, SQL_STEPS, 1, p);
	if (!db_ok(r) || PQntuples(r) != 1) {
		db_log_error("reading a bisection", c, r);
		PQclear(r);
		return -1;
	}
	if (!strcmp(PQgetvalue(r, 0, 3), "found")) {
		buf_printf(out, "Bisected between %.12s (good) and %.12s (bad), %s commits:\n\n%s\n",
			   PQgetvalue(r, 0, 0), PQgetvalue(r, 0, 1), PQgetvalue(r, 0, 2),
			   PQgetvalue(r, 0, 5));
		snprintf(first_bad, cap, "%s", PQgetvalue(r, 0, 6));
	} else {
		buf_printf(out, "The bisection between %.12s and %.12s was inconclusive: %s\n",
			   PQgetvalue(r, 0, 0), PQgetvalue(r, 0, 1), PQgetvalue(r, 0, 4));
	}
	PQclear(r);
	return 0;
}

static void message_id(const struct target *t, const char *kind, char *out, size_t cap)
{
	char host[256];

	alert_url_host(rcfg.public_url, host, sizeof(host));
	snprintf(out, cap, "<kperf.robot.%s.%s.%ld@%s>", t->id, kind, (long)time(NULL), host);
}

static int queue_mail(PGconn *c, const struct target *t, const char *commit, const char *kind,
		      const struct robot_facts *f, const char *rcpt)
{
	struct buf msg = BUF_INIT, subject = BUF_INIT;
	const char *p[9];
	int rc;

	robot_message(f, &msg);
	robot_subject(f, &subject);
	p[0] = commit;
	p[1] = strcmp(t->mode, "send") ? "held" : "pending";
	p[2] = rcpt;
	p[3] = subject.data;
	p[4] = f->message_id;
	p[5] = msg.data;
	p[6] = t->id;
	p[7] = kind;
	p[8] = f->in_reply_to;
	rc = db_do(c, SQL_QUEUE, 9, p);
	buf_release(&msg);
	buf_release(&subject);
	if (!rc)
		log_info("plan target %s: %s reply %s (%s)", t->id, kind, f->message_id, p[1]);
	return rc;
}

/* Cc: the inbox's list and the plan's cc; the envelope: those and the
 * author's address (to_addr), bare. */
static void recipients(const char *to_addr, const char *list, const char *cc, struct buf *ccs,
		       struct buf *rcpt)
{
	buf_puts(rcpt, to_addr);
	if (list && *list)
		buf_printf(ccs, "%s", list);
	if (cc && *cc)
		buf_printf(ccs, "%s%s", ccs->len ? ", " : "", cc);
	if (ccs->len)
		buf_printf(rcpt, ", %s", ccs->data);
}

/* The address in "Name <a@b>" (or a bare one), into out. */
static void bare_address(const char *s, char *out, size_t cap)
{
	const char *lt = s ? strrchr(s, '<') : NULL, *gt = lt ? strchr(lt, '>') : NULL;

	if (lt && gt)
		snprintf(out, cap, "%.*s", (int)(gt - lt - 1), lt + 1);
	else
		snprintf(out, cap, "%s", s ? s : "");
}

/* A change of the head: found where it began, mailed as a reply there. */
static int report_change(PGconn *c, const struct target *t, PGresult *ch)
{
	char first_bad[32], date[64], msgid[400], pos[16] = "";
	const char *decision = PQgetvalue(ch, 0, 0), *verdict = PQgetvalue(ch, 0, 1);
	struct buf bis = BUF_INIT, table = BUF_INIT, repro = BUF_INIT, refs = BUF_INIT;
	struct buf url = BUF_INIT, to = BUF_INIT, ccs = BUF_INIT, rcpt = BUF_INIT, link = BUF_INIT;
	struct buf irt = BUF_INIT, detail = BUF_INIT;
	PGresult *fx = NULL, *pp = NULL;
	struct robot_facts f;
	int rc = -1;

	snprintf(first_bad, sizeof(first_bad), "%s", t->head);
	if (!strcmp(verdict, "regression") &&
	    bisection_text(c, col(ch, 0, 2), &bis, first_bad, sizeof(first_bad)))
		goto out;
	{
		const char *p[3] = {decision, first_bad, t->base};
		fx = db_exec(c, SQL_FACTS, 3, p);
		if (!db_ok(fx) || PQntuples(fx) != 1) {
			db_log_error("reading a reply's facts", c, fx);
			goto out;
		}
	}
	if (t->series) {
		const char *p[2] = {t->series, first_bad};
		pp = db_exec(c, SQL_PATCH, 2, p);
		if (db_ok(pp) && PQntuples(pp) == 0 && strcmp(first_bad, t->head)) {
			/* found outside the series (its base moved): the head's patch */
			const char *ph[2] = {t->series, t->head};
			PQclear(pp);
			pp = db_exec(c, SQL_PATCH, 2, ph);
		}
		if (!db_ok(pp) || PQntuples(pp) != 1) {
			db_log_error("reading the first bad patch", c, pp);
			goto out;
		}
		snprintf(pos, sizeof(pos), "%s", PQgetvalue(pp, 0, 0));
	}
	memset(&f, 0, sizeof(f));
	f.kind = verdict;
	f.from = rcfg.from;
	alert_date(date, sizeof(date));
	f.date = date;
	message_id(t, verdict, msgid, sizeof(msgid));
	f.message_id = msgid;
	f.metric = PQgetvalue(fx, 0, 0);
	f.change = PQgetvalue(fx, 0, 1);
	f.ci = col(fx, 0, 2);
	f.suite = PQgetvalue(fx, 0, 3);
	f.params = PQgetvalue(fx, 0, 4);
	f.machine = PQgetvalue(fx, 0, 7);
	f.sha = PQgetvalue(fx, 0, 8);
	f.commit_subject = col(fx, 0, 9);
	f.base = PQgetvalue(fx, 0, 10);
	buf_printf(&url, "%s/regressions/%s", rcfg.public_url, PQgetvalue(fx, 0, 12));
	f.report_url = url.data;
	lkp_table(c, fx, t->base, first_bad, &table);
	f.lkp_table = buf_str(&table);
	f.bisection = bis.len ? bis.data : NULL;
	reproduce(fx, pp, &repro);
	f.reproduce = repro.data;
	if (pp) {
		const char *name = col(pp, 0, 3), *email = col(pp, 0, 4);
		buf_printf(&to, "%s%s<%s>", name && *name ? name : "", name && *name ? " " : "",
			   email ? email : "");
		buf_printf(&link, "%s%s/", PQgetvalue(pp, 0, 6), PQgetvalue(pp, 0, 1));
		buf_printf(&irt, "<%s>", PQgetvalue(pp, 0, 1));
		if (strcmp(PQgetvalue(pp, 0, 5), PQgetvalue(pp, 0, 1)))
			buf_printf(&refs, "<%s> ", PQgetvalue(pp, 0, 5));
		buf_printf(&refs, "<%s>", PQgetvalue(pp, 0, 1));
		f.reply_subject = PQgetvalue(pp, 0, 2);
		f.patch_subject = PQgetvalue(pp, 0, 2);
		f.commit_subject = PQgetvalue(pp, 0, 2);
		f.patch_url = link.data;
		f.in_reply_to = irt.data;
		f.references = refs.data;
		recipients(email ? email : "", col(pp, 0, 7), t->cc, &ccs, &rcpt);
		f.to = to.data;
		f.cc = ccs.data;
		buf_printf(&detail, "%s %s in patch %s/%s", f.metric, f.change, pos,
			   PQgetvalue(pp, 0, 10));
	} else {
		const char *author = col(fx, 0, 11);
		const char *subj = col(fx, 0, 9) ? PQgetvalue(fx, 0, 9) : "";
		size_t area = strcspn(subj, ":");
		char areabuf[64];
		snprintf(areabuf, sizeof(areabuf), "%.*s", subj[area] && area < 40 ? (int)area : 0,
			 subj);
		f.branch = t->branch;
		f.area = areabuf;
		f.regzbot = t->regzbot;
		char addr[320];
		bare_address(author && strchr(author, '@') ? author : rcfg.from, addr, sizeof(addr));
		recipients(addr, NULL, t->cc, &ccs, &rcpt);
		f.to = author && strchr(author, '@') ? author : rcfg.from;
		f.cc = ccs.data;
		buf_printf(&detail, "%s %s at %.12s", f.metric, f.change, f.sha);
		rc = queue_mail(c, t, first_bad, verdict, &f, rcpt.data);
		if (!rc)
			rc = set_state(c, t, verdict, detail.data, NULL);
		goto out;
	}
	rc = queue_mail(c, t, first_bad, verdict, &f, rcpt.data);
	if (!rc)
		rc = set_state(c, t, verdict, detail.data, pos);
out:
	PQclear(fx);
	PQclear(pp);
	buf_release(&bis);
	buf_release(&table);
	buf_release(&repro);
	buf_release(&refs);
	buf_release(&url);
	buf_release(&to);
	buf_release(&ccs);
	buf_release(&rcpt);
	buf_release(&link);
	buf_release(&irt);
	buf_release(&detail);
	return rc;
}

/* Nothing moved: the state, and with "clean" a reply to the cover letter. */
static int report_clean(PGconn *c, const struct target *t)
{
	const char *p1[1] = {t->head};
	PGresult *k = NULL, *s = NULL;
	struct buf tested = BUF_INIT, to = BUF_INIT, ccs = BUF_INIT, rcpt = BUF_INIT;
	struct buf irt = BUF_INIT, link = BUF_INIT, table = BUF_INIT;
	char date[64], msgid[400];
	struct robot_facts f;
	int rc = -1;

	if (!t->clean || !t->series)
		return set_state(c, t, "clean", "no KPI moved", NULL);
	k = db_exec(c, SQL_KPIS, 1, p1);
	{
		const char *p[1] = {t->series};
		s = db_exec(c,
			    "SELECT s.head_msgid, s.subject, s.author_name, s.author_email, i.list,"
			    " i.url, s.base_sha, s.total, (SELECT c.sha FROM commits c WHERE c.id ="
			    " (SELECT commit_id FROM posted_patch WHERE series_id = s.id AND position ="
			    " s.total)) FROM posted_series s JOIN inbox i ON i.id = s.inbox_id"
			    " WHERE s.id = $1::bigint",
			    1, p);
	}
	if (!db_ok(k) || !db_ok(s) || PQntuples(s) != 1) {
		db_log_error("reading a clean report", c, db_ok(k) ? s : k);
		goto out;
	}
	memset(&f, 0, sizeof(f));
	f.kind = "clean";
	f.from = rcfg.from;
	alert_date(date, sizeof(date));
	f.date = date;
	message_id(t, "clean", msgid, sizeof(msgid));
	f.message_id = msgid;
	f.sha = col(s, 0, 8);
	f.commit_subject = PQgetvalue(s, 0, 1);
	f.base = col(s, 0, 6);
	buf_printf(&link, "%s%s/", PQgetvalue(s, 0, 5), PQgetvalue(s, 0, 0));
	f.patch_url = link.data;
	f.patch_subject = PQgetvalue(s, 0, 1);
	f.reply_subject = PQgetvalue(s, 0, 1);
	buf_printf(&irt, "<%s>", PQgetvalue(s, 0, 0));
	f.in_reply_to = irt.data;
	f.references = irt.data;
	buf_printf(&tested, "The series (%s patches) was applied on its base and measured\n"
			    "against it; no KPI changed. KPIs, base against the series:\n",
		   PQgetvalue(s, 0, 7));
	f.tested = tested.data;
	buf_printf(&table, "%s\n", col(k, 0, 0) ? PQgetvalue(k, 0, 0) : "(no KPI was measured)");
	f.lkp_table = table.data;
	buf_printf(&to, "%s%s<%s>", col(s, 0, 2) ? PQgetvalue(s, 0, 2) : "",
		   col(s, 0, 2) ? " " : "", col(s, 0, 3) ? PQgetvalue(s, 0, 3) : "");
	recipients(col(s, 0, 3) ? PQgetvalue(s, 0, 3) : "", col(s, 0, 4), t->cc, &ccs, &rcpt);
	f.to = to.data;
	f.cc = ccs.data;
	rc = queue_mail(c, t, t->head, "clean", &f, rcpt.data);
	if (!rc)
		rc = set_state(c, t, "clean", "no KPI moved", NULL);
out:
	PQclear(k);
	PQclear(s);
	buf_release(&tested);
	buf_release(&to);
	buf_release(&ccs);
	buf_release(&rcpt);
	buf_release(&irt);
	buf_release(&link);
	buf_release(&table);
	return rc;
}

/* The patch at a position of a series, with its commit and its series' base. */
static const char SQL_PATCH_AT[] =
	"SELECT pp.msgid, pp.subject, pp.author_name, pp.author_email, s.head_msgid, i.url,"
	" i.list, s.name, s.base_sha, (SELECT c.sha FROM commits c WHERE c.id = pp.commit_id),"
	" pp.commit_id FROM posted_patch pp JOIN posted_series s ON s.id = pp.series_id"
	" JOIN inbox i ON i.id = s.inbox_id WHERE pp.series_id = $1::bigint AND pp.position = $2::int";

/* s's field after "; NAME " up to the next "; " (or its end), into out. */
static void build_field(const char *s, const char *name, char *out, size_t cap)
{
	char key[32];
	const char *p;

	snprintf(key, sizeof(key), "; %s ", name);
	p = strstr(s, key);
	if (!p) {
		snprintf(out, cap, "?");
		return;
	}
	p += strlen(key);
	snprintf(out, cap, "%.*s", (int)(strstr(p, "; ") ? (size_t)(strstr(p, "; ") - p) : strlen(p)),
		 p);
}

/*
 * A series that does not build ("does not build at patch K/N (SHA12): make
 * ...; compiler ...; config ...", then the compiler's lines): the target
 * and series say so, and a build report goes to patch K's thread. A branch
 * head that does not build only says so.
 */
static int report_build(PGconn *c, const struct target *t, const char *failure)
{
	const char *nl = strchr(failure, '\n');
	char first[1200], error[1000], compiler[300], config[200], pos[16], kpos[16], date[64];
	char msgid[400];
	struct buf to = BUF_INIT, ccs = BUF_INIT, rcpt = BUF_INIT, link = BUF_INIT, irt = BUF_INIT;
	struct buf refs = BUF_INIT, url = BUF_INIT, detail = BUF_INIT;
	PGresult *pp = NULL;
	struct robot_facts f;
	char *name = NULL;
	int k = 0, n = 0, rc = -1;

	snprintf(first, sizeof(first), "%.*s", nl ? (int)(nl - failure) : (int)strlen(failure),
		 failure);
	if (!t->series || sscanf(first, "does not build at patch %d/%d", &k, &n) != 2 || k < 1)
		return set_state(c, t, "does_not_build", first, NULL);
	snprintf(pos, sizeof(pos), "%d/%d", k, n);
	snprintf(kpos, sizeof(kpos), "%d", k);
	{
		const char *p[2] = {t->series, kpos};
		pp = db_exec(c, SQL_PATCH_AT, 2, p);
	}
	if (!db_ok(pp) || PQntuples(pp) != 1) {
		db_log_error("reading the patch that does not build", c, pp);
		goto out;
	}
	{
		const char *e = strchr(first, ':');
		e = e ? e + 1 : first;
		e += *e == ' ';
		snprintf(error, sizeof(error), "%.*s", (int)(strstr(e, "; compiler ")
								 ? (size_t)(strstr(e, "; compiler ") - e)
								 : strlen(e)),
			 e);
	}
	build_field(first, "compiler", compiler, sizeof(compiler));
	build_field(first, "config", config, sizeof(config));
	memset(&f, 0, sizeof(f));
	f.kind = "build";
	f.from = rcfg.from;
	alert_date(date, sizeof(date));
	f.date = date;
	message_id(t, "build", msgid, sizeof(msgid));
	f.message_id = msgid;
	f.sha = col(pp, 0, 9);
	f.base = col(pp, 0, 8);
	f.position = pos;
	f.reply_subject = PQgetvalue(pp, 0, 1);
	f.patch_subject = PQgetvalue(pp, 0, 1);
	f.commit_subject = PQgetvalue(pp, 0, 1);
	buf_printf(&link, "%s%s/", PQgetvalue(pp, 0, 5), PQgetvalue(pp, 0, 0));
	f.patch_url = link.data;
	buf_printf(&irt, "<%s>", PQgetvalue(pp, 0, 0));
	f.in_reply_to = irt.data;
	if (strcmp(PQgetvalue(pp, 0, 4), PQgetvalue(pp, 0, 0)))
		buf_printf(&refs, "<%s> ", PQgetvalue(pp, 0, 4));
	buf_printf(&refs, "<%s>", PQgetvalue(pp, 0, 0));
	f.references = refs.data;
	name = curl_easy_escape(NULL, PQgetvalue(pp, 0, 7), 0);
	buf_printf(&url, "%s/series/%s", rcfg.public_url, name ? name : "");
	f.report_url = url.data;
	f.build_error = error;
	f.compiler = compiler;
	f.config = config;
	f.build_lines = nl ? nl + 1 : "";
	{
		const char *pname = col(pp, 0, 2), *email = col(pp, 0, 3);
		buf_printf(&to, "%s%s<%s>", pname && *pname ? pname : "", pname && *pname ? " " : "",
			   email ? email : "");
		recipients(email ? email : "", col(pp, 0, 6), t->cc, &ccs, &rcpt);
	}
	f.to = to.data;
	f.cc = ccs.data;
	buf_printf(&detail, "does not build at patch %s: %s", pos, error);
	rc = queue_mail(c, t, col(pp, 0, 10) ? PQgetvalue(pp, 0, 10) : t->head, "build", &f,
			rcpt.data);
	if (!rc)
		rc = set_state(c, t, "does_not_build", detail.data, kpos);
out:
	curl_free(name);
	PQclear(pp);
	buf_release(&to);
	buf_release(&ccs);
	buf_release(&rcpt);
	buf_release(&link);
	buf_release(&irt);
	buf_release(&refs);
	buf_release(&url);
	buf_release(&detail);
	return rc;
}

static int report_one(PGconn *c, const struct target *t, const char *failure)
{
	const char *p[2] = {t->head, t->id};
	PGresult *ch;
	int rc;

	if (failure && !strncmp(failure, "does not build", 14))
		return report_build(c, t, failure);
	if (!t->head) {
		char detail[1200];
		int na = failure && !strncmp(failure, "does not apply", 14);
		snprintf(detail, sizeof(detail), "%s",
			 failure ? failure : "the series was never applied");
		return set_state(c, t, na ? "does_not_apply" : "failed", detail, NULL);
	}
	ch = db_exec(c, SQL_CHANGE, 2, p);
	if (!db_ok(ch)) {
		db_log_error("reading a target's changes", c, ch);
		PQclear(ch);
		return -1;
	}
	if (PQntuples(ch) == 1)
		rc = report_change(c, t, ch);
	else
		rc = report_clean(c, t);
	PQclear(ch);
	return rc;
}

int report_sweep(PGconn *c)
{
	PGresult *r;
	int n = 0, rc = 0;

	if (db_do(c, "BEGIN", 0, NULL))
		return -1;
	r = db_exec(c, SQL_READY, 0, NULL);
	if (!db_ok(r)) {
		db_log_error("finding ended plan targets", c, r);
		PQclear(r);
		PQclear(PQexec(c, "ROLLBACK"));
		return -1;
	}
	for (int i = 0; i < PQntuples(r) && !rc; i++) {
		struct target t = {r,
				   i,
				   PQgetvalue(r, i, 0),
				   col(r, i, 1),
				   col(r, i, 2),
				   PQgetvalue(r, i, 3),
				   PQgetvalue(r, i, 4),
				   PQgetvalue(r, i, 5),
				   PQgetvalue(r, i, 6),
				   col(r, i, 9),
				   !strcmp(PQgetvalue(r, i, 7), "t"),
				   !strcmp(PQgetvalue(r, i, 8), "t")};
		if (!strcmp(PQgetvalue(r, i, 10), "t"))
			continue; /* still deciding, confirming or bisecting */
		/* a target whose report fails ends "failed" and holds up no other */
		if (db_do(c, "SAVEPOINT report", 0, NULL))
			rc = -1;
		else if (report_one(c, &t, col(r, i, 11)) == 0)
			n++;
		else if (PQstatus(c) != CONNECTION_OK ||
			 db_do(c, "ROLLBACK TO SAVEPOINT report", 0, NULL) ||
			 set_state(c, &t, "failed", "the report could not be made (kperfd's log says why)",
				   NULL))
			rc = -1;
	}
	PQclear(r);
	if (rc || db_do(c, "COMMIT", 0, NULL)) {
		PQclear(PQexec(c, "ROLLBACK"));
		return -1;
	}
	return n;
}

int report_release(PGconn *c, const char *alert_id)
{
	const char *p[1] = {alert_id};
	PGresult *r = db_exec(c,
			      "UPDATE alert SET state = 'pending', released_at = now(),"
			      " next_attempt_at = now() WHERE id = $1::bigint AND kind = 'robot'"
			      " AND state = 'held' RETURNING id",
			      1, p);
	int rc = !db_ok(r) ? -1 : PQntuples(r) ? 0 : 1;

	PQclear(r);
	return rc;
}
