/*
 * bisect.c - bisection to the first bad commit (see bisect.h). The state of
 * a bisection is its chain and its judged steps: the last good index is the
 * highest judged good, the first bad the lowest judged bad, so a pass can
 * always start over from what is stored and a kperfd killed mid-way loses
 * nothing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/mail/alert.h"
#include "server/decide/bisect.h"
#include "lib/buf.h"
#include "server/stats/compare.h"
#include "server/decide/confirm.h"
#include "server/db/db.h"
#include "server/stats/direction.h"
#include "lib/util.h"
#include "server/stats/verdict.h"

/* One running bisection, claimed for this pass. */
static const char SQL_CLAIM[] =
	"SELECT b.id, b.machine_id, b.test_id, b.variant_id, b.metric_id, b.chain::text,"
	" mt.name, coalesce((SELECT d.direction FROM decision d WHERE d.id = b.decision_id),"
	"  mt.direction), t.suite"
	" FROM bisection b JOIN metric mt ON mt.id = b.metric_id JOIN test t ON t.id = b.test_id"
	" WHERE b.state = 'running' AND b.id > $1::bigint ORDER BY b.id LIMIT 1"
	" FOR UPDATE OF b SKIP LOCKED";

/* Every value of the metric in the valid runs of the key at the chain's commits. */
static const char SQL_SAMPLES[] =
	"SELECT r.commit_id, r.id, s.value FROM run r JOIN key_group g ON g.machine_id = r.machine_id"
	"  AND g.test_id = r.test_id AND g.variant_id = r.variant_id"
	" JOIN sample s ON s.run_id = r.id AND s.at = r.received_at AND s.key_group_id = g.id"
	" WHERE r.machine_id = $1::bigint AND r.test_id = $2::bigint AND r.variant_id = $3::bigint"
	" AND s.metric_id = $4::bigint AND r.valid AND r.commit_id = ANY ($5::bigint[])"
	" ORDER BY r.commit_id, r.id, s.iteration";

/* The summaries of the chain's archived runs of the metric (migration 015),
 * read after the samples: a run met in both (a read straddling an archive)
 * keeps its samples. */
static const char SQL_SUMMARIES[] =
	"SELECT r.commit_id, r.id, ss.n, ss.mean, ss.m2, ss.min, ss.max, coalesce(ss.rsum, 'NaN')"
	" FROM run r JOIN key_group g ON g.machine_id = r.machine_id"
	"  AND g.test_id = r.test_id AND g.variant_id = r.variant_id"
	" JOIN sample_summary ss ON ss.run_id = r.id AND ss.key_group_id = g.id"
	" WHERE r.machine_id = $1::bigint AND r.test_id = $2::bigint AND r.variant_id = $3::bigint"
	" AND ss.metric_id = $4::bigint AND r.valid AND r.commit_id = ANY ($5::bigint[])"
	" ORDER BY r.commit_id, r.id";

static const char SQL_STEPS[] =
	"SELECT commit_id, class, runs FROM bisection_step WHERE bisection_id = $1::bigint";

static const char SQL_STEP[] =
	"INSERT INTO bisection_step (bisection_id, commit_id, runs, change_pct_vs_good,"
	" verdict_vs_good, verdict_vs_bad, class, job_id)"
	" VALUES ($1::bigint, $2::bigint, $3::int, $4::float8, $5, $6, $7,"
	"  (SELECT max(id) FROM job WHERE bisection_id = $1::bigint AND commit_id = $2::bigint))"
	" ON CONFLICT (bisection_id, commit_id) DO UPDATE SET runs = EXCLUDED.runs,"
	" change_pct_vs_good = EXCLUDED.change_pct_vs_good,"
	" verdict_vs_good = EXCLUDED.verdict_vs_good, verdict_vs_bad = EXCLUDED.verdict_vs_bad,"
	" class = EXCLUDED.class, job_id = EXCLUDED.job_id, judged_at = now()";

/* Jobs of this bisection at a commit: open ones, and ended ones that failed. */
static const char SQL_JOBS_AT[] =
	"SELECT count(*) FILTER (WHERE state IN ('queued', 'running')),"
	" count(*) FILTER (WHERE state IN ('failed', 'cancelled')),"
	" string_agg(DISTINCT failures->-1->>'reason', '; ') FILTER (WHERE state = 'failed')"
	" FROM job WHERE bisection_id = $1::bigint AND commit_id = $2::bigint";

/*
 * A job for the runs of commit $1 still wanted ($5 in all, $7 read by this
 * pass): counted in the run table now too, since a job may have ended, its
 * runs committed, after this pass read them.
 */
static const char SQL_JOB[] =
	"SELECT kperf_job_add($1::bigint, $2::bigint, $3::bigint, $4::bigint,"
	" $5::int - greatest($7::int, n)::int, 'bisect', 'bisection ' || $6, p_bisection => $6::bigint)"
	" FROM (SELECT count(*) AS n FROM run r WHERE r.commit_id = $1::bigint"
	"  AND r.machine_id = $2::bigint AND r.test_id = $3::bigint AND r.variant_id = $4::bigint"
	"  AND r.valid) c WHERE greatest($7::int, n) < $5::int";

static const char SQL_END[] =
	"UPDATE bisection SET state = $2, reason = $3, first_bad_commit_id = $4::bigint,"
	" last_good_commit_id = $5::bigint, ended_at = now() WHERE id = $1::bigint";

/* The samples of one commit of the chain. */
struct side {
	long commit;
	double *v, *runs; /* every value; one mean per run (archived ones too) */
	size_t n, nruns;
	struct stats_moments arch; /* its archived runs, their values gone */
	long *raw;                 /* the runs of v, by id */
	size_t nraw;
};

struct state {
	const char *id, *machine, *test, *variant, *metric_id, *metric, *suite;
	enum direction dir;
	long *chain;
	size_t nchain;
	struct side *sides; /* one per chain commit, in chain order */
};

static void state_release(struct state *s)
{
	for (size_t i = 0; i < s->nchain && s->sides; i++) {
		free(s->sides[i].v);
		free(s->sides[i].runs);
		free(s->sides[i].raw);
	}
	free(s->sides);
	free(s->chain);
}

/* "{3,7,9}" into a new array; its length in *n. */
static long *parse_ids(const char *text, size_t *n)
{
	long *out = NULL;
	size_t cap = 0;
	const char *p = text + (*text == '{');

	*n = 0;
	while (*p && *p != '}') {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		if (*n == cap)
			out = xrealloc(out, (cap = cap ? 2 * cap : 16) * sizeof(*out));
		out[(*n)++] = v;
		p = end + (*end == ',');
	}
	return out;
}

static struct side *side_of(struct state *s, long commit)
{
	for (size_t i = 0; i < s->nchain; i++)
		if (s->chain[i] == commit)
			return &s->sides[i];
	return NULL;
}

/* Side sd's archived runs of the metric, from rows of SQL_SUMMARIES. */
static void load_summaries(struct state *s, const PGresult *r)
{
	for (int i = 0; i < PQntuples(r); i++) {
		struct side *sd = side_of(s, strtol(PQgetvalue(r, i, 0), NULL, 10));
		long run = strtol(PQgetvalue(r, i, 1), NULL, 10);
		struct stats_moments m;
		int seen = 0;

		if (!sd)
			continue;
		for (size_t k = 0; k < sd->nraw && !seen; k++)
			seen = sd->raw[k] == run;
		m.n = strtoul(PQgetvalue(r, i, 2), NULL, 10);
		m.mean = strtod(PQgetvalue(r, i, 3), NULL);
		m.m2 = strtod(PQgetvalue(r, i, 4), NULL);
		m.min = strtod(PQgetvalue(r, i, 5), NULL);
		m.max = strtod(PQgetvalue(r, i, 6), NULL);
		m.rsum = strtod(PQgetvalue(r, i, 7), NULL);
		if (seen || !m.n)
			continue;
		stats_moments_merge(&sd->arch, &m);
		sd->runs = xrealloc(sd->runs, (sd->nruns + 1) * sizeof(double));
		sd->runs[sd->nruns++] = m.mean;
	}
}

/* The archive epoch (migration 015) as text into out; 0, or -1 (logged). */
static int archive_epoch(PGconn *c, char out[24])
{
	PGresult *r = db_exec(c, "SELECT n FROM archive_epoch", 0, NULL);

	if (!db_ok(r) || PQntuples(r) != 1) {
		db_log_error("reading the archive epoch", c, r);
		PQclear(r);
		return -1;
	}
	snprintf(out, 24, "%s", PQgetvalue(r, 0, 0));
	PQclear(r);
	return 0;
}

/* The samples, then the summaries; -1 also when an archive or restore
 * committed between them (a month missed or met twice): the pass is rolled
 * back and made again. */
static int load_samples(PGconn *c, struct state *s, const char *chain_text)
{
	const char *p[5] = {s->machine, s->test, s->variant, s->metric_id, chain_text};
	char e0[24], e1[24];
	PGresult *r;
	int n;

	if (archive_epoch(c, e0))
		return -1;
	r = db_exec(c, SQL_SAMPLES, 5, p);

	if (!db_ok(r)) {
		db_log_error("reading a bisection's samples", c, r);
		PQclear(r);
		return -1;
	}
	n = PQntuples(r);
	s->sides = xcalloc(s->nchain, sizeof(*s->sides));
	for (size_t i = 0; i < s->nchain; i++)
		s->sides[i].commit = s->chain[i];
	for (int i = 0; i < n;) {
		struct side *sd = side_of(s, strtol(PQgetvalue(r, i, 0), NULL, 10));
		const char *run = PQgetvalue(r, i, 1);
		double sum = 0;
		size_t k = 0;
		int j = i;
		for (; j < n && !strcmp(PQgetvalue(r, j, 1), run); j++, k++)
			;
		if (sd) {
			sd->v = xrealloc(sd->v, (sd->n + k) * sizeof(double));
			sd->runs = xrealloc(sd->runs, (sd->nruns + 1) * sizeof(double));
			for (int x = i; x < j; x++) {
				double v = strtod(PQgetvalue(r, x, 2), NULL);
				sd->v[sd->n++] = v;
				sum += v;
			}
			sd->runs[sd->nruns++] = sum / (double)k;
			sd->raw = xrealloc(sd->raw, (sd->nraw + 1) * sizeof(*sd->raw));
			sd->raw[sd->nraw++] = strtol(run, NULL, 10);
		}
		i = j;
	}
	PQclear(r);
	r = db_exec(c, SQL_SUMMARIES, 5, p);
	if (!db_ok(r)) {
		db_log_error("reading a bisection's summaries", c, r);
		PQclear(r);
		return -1;
	}
	load_summaries(s, r);
	PQclear(r);
	if (archive_epoch(c, e1))
		return -1;
	if (strcmp(e0, e1)) {
		log_info("bisection %s: a month was archived or restored while it was read;"
			 " read again at the next pass", s->id);
		return -1;
	}
	return 0;
}

static enum verdict judge(const struct state *s, const struct side *base, const struct side *tgt,
			  double *change_pct)
{
	/* archived runs (their summaries) are judged as a compare judges them */
	struct verdict_in in = {s->metric, s->suite, s->dir, base->v, base->n, tgt->v, tgt->n,
				base->runs, base->nruns, tgt->runs, tgt->nruns, NULL, NULL,
				&base->arch, &tgt->arch};
	struct verdict_out out;

	if (verdict_decide(&in, &out))
		return VERDICT_NOISE;
	if (change_pct)
		*change_pct = out.change_pct;
	return out.verdict;
}

/* The bisected change: a regression, or any change of a metric without a
 * direction. */
static int is_change(const struct state *s, enum verdict v)
{
	return v == VERDICT_REGRESSION || (s->dir == DIR_NONE && v == VERDICT_CHANGED);
}

static int end(PGconn *c, const struct state *s, const char *st, const char *reason,
	       long first_bad, long last_good)
{
	char fb[24], lg[24];
	const char *p[5] = {s->id, st, reason, first_bad ? fb : NULL, last_good ? lg : NULL};

	snprintf(fb, sizeof(fb), "%ld", first_bad);
	snprintf(lg, sizeof(lg), "%ld", last_good);
	if (db_do(c, SQL_END, 5, p))
		return -1;
	log_info("bisection %s %s%s%s", s->id, st, reason ? ": " : "", reason ? reason : "");
	if (first_bad) /* the first bad commit's own decision is the one mailed */
		return alert_enqueue(c, s->machine, s->test, s->variant, fb, lab_policy.settle_s);
	return 0;
}

/* Queue runs of commit for the bisection (want in all, have of them read)
 * unless some are on their way. 1 queued or waiting, 0 when its jobs failed
 * (reason set), -1 error. */
static int want_runs(PGconn *c, const struct state *s, long commit, long want, long have,
		     char *reason, size_t cap)
{
	char cid[24], n[24], h[24];
	const char *pa[2] = {s->id, cid};
	const char *pj[7] = {cid, s->machine, s->test, s->variant, n, s->id, h};
	PGresult *r;
	int rc = 1;

	snprintf(cid, sizeof(cid), "%ld", commit);
	snprintf(n, sizeof(n), "%ld", want);
	snprintf(h, sizeof(h), "%ld", have);
	r = db_exec(c, SQL_JOBS_AT, 2, pa);
	if (!db_ok(r)) {
		db_log_error("reading a bisection's jobs", c, r);
		PQclear(r);
		return -1;
	}
	if (strcmp(PQgetvalue(r, 0, 0), "0")) {
		rc = 1; /* on their way */
	} else if (strcmp(PQgetvalue(r, 0, 1), "0")) {
		snprintf(reason, cap, "the runs of commit %ld could not be had: %s", commit,
			 PQgetisnull(r, 0, 2) ? "jobs cancelled" : PQgetvalue(r, 0, 2));
		rc = 0;
	} else {
		rc = db_do(c, SQL_JOB, 7, pj) ? -1 : 1;
	}
	PQclear(r);
	return rc;
}

/* One pass over a claimed bisection, in the caller's transaction: 1 when it
 * changed (a step judged, a job queued, an end), 0 when it waits, -1 error. */
static int advance(PGconn *c, struct state *s, const char *chain_text)
{
	const long need = lab_policy.confirm_runs > 1 ? lab_policy.confirm_runs : 1;
	const long most = need * BISECT_MAX_RUNS_FACTOR;
	size_t lo = 0, hi = s->nchain - 1;
	const char *ps[1] = {s->id};
	char reason[300];
	PGresult *r;
	char *unclear = xcalloc(s->nchain, 1);

	if (load_samples(c, s, chain_text))
		goto fail;
	r = db_exec(c, SQL_STEPS, 1, ps);
	if (!db_ok(r)) {
		db_log_error("reading a bisection's steps", c, r);
		PQclear(r);
		goto fail;
	}
	for (int i = 0; i < PQntuples(r); i++) {
		long commit = strtol(PQgetvalue(r, i, 0), NULL, 10);
		const char *cls = PQgetvalue(r, i, 1);
		for (size_t k = 0; k < s->nchain; k++) {
			if (s->chain[k] != commit)
				continue;
			if (!strcmp(cls, "good") && k > lo)
				lo = k;
			else if (!strcmp(cls, "bad") && k < hi)
				hi = k;
			else if (!strcmp(cls, "unclear"))
				unclear[k] = 1;
		}
	}
	PQclear(r);
	if (!(s->sides[0].n + s->sides[0].arch.n) ||
	    !(s->sides[s->nchain - 1].n + s->sides[s->nchain - 1].arch.n)) {
		free(unclear);
		return end(c, s, "inconclusive", "an end of the range has no runs of the metric", 0, 0)
			       ? -1
			       : 1;
	}
	while (hi > lo + 1) {
		size_t mid = lo + (hi - lo) / 2;
		struct side *m = &s->sides[mid];
		long want = unclear[mid] ? most : need;
		enum verdict vg, vb;
		double pct = NAN;
		const char *cls;
		int w;

		if ((long)m->nruns < want) {
			w = want_runs(c, s, s->chain[mid], want, (long)m->nruns, reason, sizeof(reason));
			if (w < 0)
				goto fail;
			free(unclear);
			if (w == 0)
				return end(c, s, "inconclusive", reason, 0, 0) ? -1 : 1;
			return 1;
		}
		vg = judge(s, &s->sides[0], m, &pct);
		vb = judge(s, m, &s->sides[s->nchain - 1], NULL);
		cls = is_change(s, vg) && !is_change(s, vb)   ? "bad"
		      : !is_change(s, vg) && is_change(s, vb) ? "good"
							      : "unclear";
		{
			char cid[24], runs[16], pcts[40];
			const char *p[7] = {s->id, cid, runs, isfinite(pct) ? pcts : NULL,
					    verdict_name(vg), verdict_name(vb), cls};
			snprintf(cid, sizeof(cid), "%ld", s->chain[mid]);
			snprintf(runs, sizeof(runs), "%zu", m->nruns);
			snprintf(pcts, sizeof(pcts), "%.17g", pct);
			if (db_do(c, SQL_STEP, 7, p))
				goto fail;
		}
		if (!strcmp(cls, "bad")) {
			hi = mid;
		} else if (!strcmp(cls, "good")) {
			lo = mid;
		} else if ((long)m->nruns >= most) {
			snprintf(reason, sizeof(reason),
				 "commit id %ld is neither like the good nor like the bad end with %zu runs"
				 " (%s against good, %s against bad)",
				 s->chain[mid], m->nruns, verdict_name(vg), verdict_name(vb));
			free(unclear);
			return end(c, s, "inconclusive", reason, 0, 0) ? -1 : 1;
		} else {
			unclear[mid] = 1; /* more runs, then judged again */
		}
	}
	free(unclear);
	return end(c, s, "found", NULL, s->chain[hi], s->chain[lo]) ? -1 : 1;
fail:
	free(unclear);
	return -1;
}

int bisect_step(PGconn *c)
{
	char after[24] = "0";
	int changed = 0;

	for (;;) {
		const char *p[1] = {after};
		struct state s;
		PGresult *r;
		int rc;

		if (db_do(c, "BEGIN", 0, NULL))
			return -1;
		r = db_exec(c, SQL_CLAIM, 1, p);
		if (!db_ok(r) || PQntuples(r) == 0) {
			if (!db_ok(r))
				db_log_error("claiming a bisection", c, r);
			PQclear(r);
			PQclear(db_exec(c, "ROLLBACK", 0, NULL));
			return changed;
		}
		memset(&s, 0, sizeof(s));
		snprintf(after, sizeof(after), "%s", PQgetvalue(r, 0, 0));
		s.id = PQgetvalue(r, 0, 0);
		s.machine = PQgetvalue(r, 0, 1);
		s.test = PQgetvalue(r, 0, 2);
		s.variant = PQgetvalue(r, 0, 3);
		s.metric_id = PQgetvalue(r, 0, 4);
		s.metric = PQgetvalue(r, 0, 6);
		s.dir = PQgetisnull(r, 0, 7) ? direction_of_name(s.metric)
					     : direction_parse(PQgetvalue(r, 0, 7),
							       direction_of_name(s.metric));
		s.suite = PQgetvalue(r, 0, 8);
		s.chain = parse_ids(PQgetvalue(r, 0, 5), &s.nchain);
		rc = s.nchain >= 2 ? advance(c, &s, PQgetvalue(r, 0, 5)) : -1;
		state_release(&s);
		PQclear(r);
		if (rc < 0 || db_do(c, "COMMIT", 0, NULL)) {
			PQclear(db_exec(c, "ROLLBACK", 0, NULL));
			return -1;
		}
		changed += rc;
	}
}

/* The first-parent chain from bad back to good, good first: see bisect.h. */
static const char SQL_START[] =
	"WITH RECURSIVE up(id, parent_sha, depth, path) AS ("
	"  SELECT c.id, c.parent_sha, 0, ARRAY[c.id] FROM commits c WHERE c.id = $2::bigint"
	"  UNION ALL SELECT p.id, p.parent_sha, up.depth + 1, p.id || up.path"
	"  FROM up JOIN commits p ON p.sha = up.parent_sha"
	"  WHERE up.depth < $7::int AND up.id <> $1::bigint)"
	" INSERT INTO bisection (machine_id, test_id, variant_id, metric_id, good_commit_id,"
	"  bad_commit_id, chain)"
	" SELECT $3::bigint, $4::bigint, $5::bigint, $6::bigint, $1::bigint, $2::bigint, path"
	" FROM up WHERE id = $1::bigint AND depth >= 1 RETURNING id";

long bisect_start(PGconn *c, const char *good, const char *bad, const char *machine,
		  const char *test, const char *variant, const char *metric, PGresult **failed)
{
	char depth[16];
	const char *p[7] = {good, bad, machine, test, variant, metric, depth};
	PGresult *r;
	long id;

	*failed = NULL;
	snprintf(depth, sizeof(depth), "%ld", lab_policy.ancestor_depth);
	r = db_exec(c, SQL_START, 7, p);
	if (!db_ok(r)) {
		*failed = r;
		return -1;
	}
	id = PQntuples(r) ? strtol(PQgetvalue(r, 0, 0), NULL, 10) : 0;
	PQclear(r);
	return id;
}
