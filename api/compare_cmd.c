/*
 * compare_cmd.c - a compare's command lines: each side's distinct
 * commands per suite (run.command), their work arguments, and what
 * differs between the base and each target.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/command.h"
#include "api/compare_cmd.h"
#include "server/db/db.h"
#include "lib/jsonw.h"
#include "lib/util.h"

static const char SQL_COMMANDS[] =
	"SELECT t.suite, r.command FROM run r JOIN test t ON t.id = r.test_id"
	" WHERE r.id = ANY($1::bigint[]) AND r.command IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2";

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static struct compare_cmd *cmd_of(struct compare_req *q, const char *suite, int side)
{
	for (size_t i = 0; i < q->ncmds; i++)
		if (q->cmds[i].side == side && !strcmp(q->cmds[i].suite, suite))
			return &q->cmds[i];
	q->cmds = xrealloc(q->cmds, (q->ncmds + 1) * sizeof(*q->cmds));
	memset(&q->cmds[q->ncmds], 0, sizeof(q->cmds[0]));
	q->cmds[q->ncmds].suite = xstrdup(suite);
	q->cmds[q->ncmds].side = side;
	return &q->cmds[q->ncmds++];
}

static const struct compare_cmd *cmd_find(const struct compare_req *q, const char *suite,
					  int side)
{
	for (size_t i = 0; i < q->ncmds; i++)
		if (q->cmds[i].side == side && !strcmp(q->cmds[i].suite, suite))
			return &q->cmds[i];
	return NULL;
}

/* Sort and make distinct a side's work-argument strings. */
static void work_distinct(struct compare_cmd *m)
{
	size_t n = 0;

	qsort(m->work, m->nwork, sizeof(m->work[0]), str_cmp);
	for (size_t i = 0; i < m->nwork; i++) {
		if (n && !strcmp(m->work[n - 1], m->work[i])) {
			free(m->work[i]);
			continue;
		}
		m->work[n++] = m->work[i];
	}
	m->nwork = n;
}

static int same_work(const struct compare_cmd *a, const struct compare_cmd *b)
{
	if (a->nwork != b->nwork)
		return 0;
	for (size_t i = 0; i < a->nwork; i++)
		if (strcmp(a->work[i], b->work[i]))
			return 0;
	return 1;
}

int compare_cmd_load(PGconn *c, struct compare_req *q)
{
	for (int s = 0; s < q->nrefs; s++) {
		const char *params[1] = {q->run_ids[s] ? q->run_ids[s] : "{}"};
		PGresult *r = db_exec(c, SQL_COMMANDS, 1, params);

		if (!db_ok(r)) {
			db_log_error("reading the runs' commands", c, r);
			PQclear(r);
			return -1;
		}
		for (int i = 0; i < PQntuples(r); i++) {
			struct compare_cmd *m = cmd_of(q, PQgetvalue(r, i, 0), s);
			struct buf w = BUF_INIT;

			m->commands = xrealloc(m->commands, (m->ncommands + 1) * sizeof(char *));
			m->commands[m->ncommands++] = xstrdup(PQgetvalue(r, i, 1));
			command_work_args(PQgetvalue(r, i, 1), &w);
			m->work = xrealloc(m->work, (m->nwork + 1) * sizeof(char *));
			m->work[m->nwork++] = xstrdup(buf_str(&w));
			buf_release(&w);
		}
		PQclear(r);
	}
	for (size_t i = 0; i < q->ncmds; i++)
		work_distinct(&q->cmds[i]);
	for (size_t i = 0; i < q->ncmds; i++) {
		struct compare_cmd *t = &q->cmds[i];
		const struct compare_cmd *b;
		struct buf why = BUF_INIT;

		if (!t->side || !(b = cmd_find(q, t->suite, 0)) || same_work(b, t))
			continue;
		buf_printf(&why, "%s ran with other work arguments: ", t->suite);
		if (b->nwork == 1 && t->nwork == 1)
			command_work_diff(b->work[0], t->work[0], &why);
		else
			buf_printf(&why, "%zu kinds of command on the base, %zu on the target",
				   b->nwork, t->nwork);
		t->not_judged = buf_detach(&why, NULL);
	}
	return 0;
}

const char *compare_cmd_not_judged(const struct compare_req *q, const char *suite, int t)
{
	const struct compare_cmd *m = cmd_find(q, suite, t);
	return m ? m->not_judged : NULL;
}

static void put_strings(struct buf *b, char *const *v, size_t n)
{
	buf_putc(b, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_putc(b, ',');
		jsonw_str(b, v[i]);
	}
	buf_putc(b, ']');
}

static int same_commands(const struct compare_cmd *a, const struct compare_cmd *b)
{
	if (a->ncommands != b->ncommands)
		return 0;
	for (size_t i = 0; i < a->ncommands; i++)
		if (strcmp(a->commands[i], b->commands[i]))
			return 0;
	return 1;
}

void compare_cmd_env(const struct compare_req *q, struct buf *b, int *first)
{
	for (size_t i = 0; i < q->ncmds; i++) {
		const struct compare_cmd *t = &q->cmds[i], *base;

		if (!t->side || !(base = cmd_find(q, t->suite, 0)) || same_commands(base, t))
			continue;
		for (int kind = 0; kind < 2; kind++) {
			if (kind && !t->not_judged)
				break;
			buf_puts(b, *first ? "{\"kind\":" : ",{\"kind\":");
			*first = 0;
			jsonw_str(b, kind ? "command_args" : "command");
			buf_puts(b, ",\"key\":");
			jsonw_str(b, t->suite);
			buf_puts(b, ",\"target_ref\":");
			jsonw_str(b, q->refs[t->side].text);
			buf_puts(b, ",\"base\":");
			if (kind)
				put_strings(b, base->work, base->nwork);
			else
				put_strings(b, base->commands, base->ncommands);
			buf_puts(b, ",\"target\":");
			if (kind)
				put_strings(b, t->work, t->nwork);
			else
				put_strings(b, t->commands, t->ncommands);
			if (kind) {
				buf_puts(b, ",\"not_judged\":");
				jsonw_str(b, t->not_judged);
			}
			buf_putc(b, '}');
		}
	}
}

void compare_cmd_release(struct compare_req *q)
{
	for (size_t i = 0; i < q->ncmds; i++) {
		struct compare_cmd *m = &q->cmds[i];
		for (size_t k = 0; k < m->ncommands; k++)
			free(m->commands[k]);
		for (size_t k = 0; k < m->nwork; k++)
			free(m->work[k]);
		free(m->commands);
		free(m->work);
		free(m->suite);
		free(m->not_judged);
	}
	free(q->cmds);
	q->cmds = NULL;
	q->ncmds = 0;
}
