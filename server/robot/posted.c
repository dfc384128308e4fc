/*
 * posted.c - posted series and their patches (see posted.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "server/db/db.h"
#include "server/robot/posted.h"

/* A version is the next of the newest earlier version with its key. */
static const char SQL_SERIES[] =
	"INSERT INTO posted_series (inbox_id, head_msgid, has_cover, series_key, name, version, rfc,"
	" subject, author_name, author_email, change_id, base_sha, prerequisites, total, posted_at,"
	" previous_id, state, state_detail)"
	" VALUES ($1::bigint, $2, $3::boolean, $4, $5, $6::int, $7::boolean, $8, $9, $10, $11, $12,"
	" $13::text[], $14::int, $15::timestamptz,"
	" (SELECT id FROM posted_series WHERE series_key = $4 AND version < $6::int"
	"  ORDER BY version DESC, id DESC LIMIT 1),"
	" CASE WHEN $12::text IS NULL THEN 'no_base' ELSE 'posted' END, $16)"
	" ON CONFLICT (inbox_id, head_msgid) DO NOTHING RETURNING id";

static const char SQL_PATCH[] =
	"INSERT INTO posted_patch (series_id, position, msgid, subject, author_name, author_email,"
	" files) VALUES ($1::bigint, $2::int, $3, $4, $5, $6, $7::text[])";

static int hex40(const char *s)
{
	if (!s || strlen(s) != 40)
		return 0;
	for (int i = 0; i < 40; i++)
		if (!strchr("0123456789abcdef", s[i]))
			return 0;
	return 1;
}

static void text_array(char **v, size_t n, struct buf *out)
{
	buf_putc(out, '{');
	for (size_t i = 0; i < n; i++) {
		buf_puts(out, i ? ",\"" : "\"");
		for (const char *p = v[i]; *p; p++) {
			if (*p == '"' || *p == '\\')
				buf_putc(out, '\\');
			buf_putc(out, *p);
		}
		buf_putc(out, '"');
	}
	buf_putc(out, '}');
}

long posted_store(PGconn *c, long inbox_id, const struct thread_series *s, const char *posted_at)
{
	char inbox[24], version[16], total[16], key[1200], detail[200] = "";
	const char *base = hex40(s->base) ? s->base : NULL;
	struct buf prereq = BUF_INIT;
	const char *p[16];
	PGresult *r;
	long id;

	snprintf(inbox, sizeof(inbox), "%ld", inbox_id);
	snprintf(version, sizeof(version), "%d", s->subj.version);
	snprintf(total, sizeof(total), "%d", s->total);
	thread_series_key(s, key, sizeof(key));
	text_array(s->prereq, s->nprereq, &prereq);
	if (!s->base && s->base_other)
		snprintf(detail, sizeof(detail), "base-commit \"%.64s\" is not a 40-hex sha",
			 s->base_other);
	else if (!s->base)
		snprintf(detail, sizeof(detail), "the series names no base-commit");
	else if (!base)
		snprintf(detail, sizeof(detail), "base-commit \"%.60s\" is not a 40-hex sha", s->base);
	p[0] = inbox;
	p[1] = s->head->msgid;
	p[2] = s->has_cover ? "true" : "false";
	p[3] = key;
	p[4] = s->subj.stem;
	p[5] = version;
	p[6] = s->subj.rfc ? "true" : "false";
	p[7] = s->head->subject;
	p[8] = s->head->from_name;
	p[9] = s->head->from_email;
	p[10] = s->change_id;
	p[11] = base;
	p[12] = prereq.data ? prereq.data : "{}";
	p[13] = total;
	p[14] = posted_at;
	p[15] = *detail ? detail : NULL;
	r = db_exec(c, SQL_SERIES, 16, p);
	buf_release(&prereq);
	if (!db_ok(r)) {
		db_log_error("storing a posted series", c, r);
		PQclear(r);
		return -1;
	}
	if (PQntuples(r) == 0) {
		PQclear(r);
		return 0;
	}
	id = strtol(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	for (int i = 0; i < s->total; i++) {
		const struct mail_msg *m = s->patches[i];
		char sid[24], pos[16];
		struct buf files = BUF_INIT;
		const char *q[7] = {sid, pos, m->msgid, m->subject, m->from_name, m->from_email, NULL};
		int bad;
		snprintf(sid, sizeof(sid), "%ld", id);
		snprintf(pos, sizeof(pos), "%d", i + 1);
		text_array(m->files, m->nfiles, &files);
		q[6] = files.data;
		bad = db_do(c, SQL_PATCH, 7, q);
		buf_release(&files);
		if (bad)
			return -1;
	}
	return id;
}

int posted_state(PGconn *c, long series_id, const char *state, const char *detail)
{
	char id[24];
	const char *p[3] = {id, state, detail};

	snprintf(id, sizeof(id), "%ld", series_id);
	return db_do(c,
		     "UPDATE posted_series SET state = $2, state_detail = $3, updated_at = now()"
		     " WHERE id = $1::bigint",
		     3, p);
}

int posted_applied(PGconn *c, long series_id, int n, const char *const *shas, char *why,
		   size_t whylen)
{
	char sid[24];

	snprintf(sid, sizeof(sid), "%ld", series_id);
	for (int i = 0; i < n; i++) {
		char pos[16];
		const char *p[3] = {sid, pos, shas[i]};
		PGresult *r;
		snprintf(pos, sizeof(pos), "%d", i + 1);
		r = db_exec(c,
			    "UPDATE posted_patch pp SET commit_id = c.id FROM commits c"
			    " WHERE pp.series_id = $1::bigint AND pp.position = $2::int AND c.sha = $3"
			    " AND c.message_id IS NOT DISTINCT FROM pp.msgid RETURNING pp.position",
			    3, p);
		if (!db_ok(r)) {
			db_log_error("linking a patch to its commit", c, r);
			PQclear(r);
			return -1;
		}
		if (PQntuples(r) != 1) {
			PQclear(r);
			snprintf(why, whylen,
				 "commits[%d]: %s is not a stored commit made from patch %d's mail (post it"
				 " to /api/v1/commits with its message_id first)",
				 i, shas[i], i + 1);
			return 1;
		}
		PQclear(r);
	}
	return 0;
}

static const char SQL_VERSIONS[] =
	"SELECT coalesce(json_agg(v ORDER BY v.version, v.id), '[]')::text FROM ("
	" SELECT s.id, s.version, s.subject, s.rfc, s.author_name AS author, s.author_email,"
	"  i.name AS inbox, i.url || s.head_msgid || '/' AS url, s.head_msgid AS message_id,"
	"  s.has_cover, s.base_sha AS base, s.change_id, s.total, s.state, s.state_detail,"
	"  s.posted_at, (SELECT p.version FROM posted_series p WHERE p.id = s.previous_id)"
	"   AS previous_version,"
	"  (SELECT json_agg(json_build_object('position', pp.position, 'subject', pp.subject,"
	"    'message_id', pp.msgid, 'url', i.url || pp.msgid || '/', 'files', pp.files,"
	"    'commit', c.sha) ORDER BY pp.position)"
	"   FROM posted_patch pp LEFT JOIN commits c ON c.id = pp.commit_id"
	"   WHERE pp.series_id = s.id) AS patches,"
	"  (SELECT json_agg(json_build_object('plan', pl.name, 'state', pt.state, 'detail',"
	"    pt.detail, 'first_bad_position', pt.first_bad_position,"
	"    'mail', (SELECT json_build_object('id', a.id, 'state', a.state, 'kind', a.robot_kind)"
	"     FROM alert a WHERE a.plan_target_id = pt.id ORDER BY a.id DESC LIMIT 1))"
	"    ORDER BY pl.name)"
	"   FROM plan_target pt JOIN plan pl ON pl.id = pt.plan_id WHERE pt.series_id = s.id)"
	"   AS plans"
	" FROM posted_series s JOIN inbox i ON i.id = s.inbox_id WHERE s.name = $1) v";

int posted_versions_json(PGconn *c, const char *name, struct buf *out)
{
	const char *p[1] = {name};
	PGresult *r = db_exec(c, SQL_VERSIONS, 1, p);

	if (!db_ok(r) || PQntuples(r) != 1) {
		db_log_error("reading posted series", c, r);
		PQclear(r);
		return -1;
	}
	buf_puts(out, PQgetvalue(r, 0, 0));
	PQclear(r);
	return 0;
}
