/*
 * commit_cache.c - commits' shown fields by id, one generation per commit
 * epoch (see commit_cache.h). A generation only grows: its entries and
 * strings sit in chunks that never move, so pointers handed out stay valid
 * until its last holder puts it back.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "server/reads/commit_cache.h"
#include "server/db/db.h"
#include "lib/idmap.h"
#include "lib/jsonw.h"
#include "lib/kperf_limits.h"
#include "lib/util.h"

const char COMMIT_CACHE_SQL_EPOCH[] = "SELECT n FROM commit_epoch";
const char COMMIT_CACHE_SQL_BY_ID[] =
	"SELECT " COMMIT_CACHE_COLUMNS " FROM commits WHERE id = ANY($1::bigint[])";

#define ENTRY_CHUNK 1024
#define TEXT_CHUNK (64 * 1024)

struct chunk {
	struct chunk *next;
	size_t used, cap;
	char data[];
};

struct commit_gen {
	int64_t epoch;
	int refs;         /* holders, + 1 while current */
	struct idmap ids; /* id -> struct commit_info */
	struct chunk *entries, *text;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct commit_gen *current;

static struct commit_gen *gen_new(int64_t epoch)
{
	struct commit_gen *g = xcalloc(1, sizeof(*g));

	g->epoch = epoch;
	g->refs = 1;
	return g;
}

static void chunks_free(struct chunk *c)
{
	while (c) {
		struct chunk *next = c->next;
		free(c);
		c = next;
	}
}

/* Drop a reference; the caller holds lock. */
static void gen_unref(struct commit_gen *g)
{
	if (--g->refs)
		return;
	chunks_free(g->entries);
	chunks_free(g->text);
	idmap_release(&g->ids);
	free(g);
}

struct commit_gen *commit_cache_take(int64_t epoch)
{
	struct commit_gen *g;

	pthread_mutex_lock(&lock);
	if (current && current->epoch == epoch) {
		g = current;
	} else if (current && current->epoch > epoch) {
		g = gen_new(epoch); /* its own: not shared, not kept */
		g->refs = 0;
	} else {
		if (current)
			gen_unref(current);
		current = g = gen_new(epoch); /* its reference as current */
	}
	g->refs++;
	pthread_mutex_unlock(&lock);
	return g;
}

void commit_cache_put(struct commit_gen *g)
{
	if (!g)
		return;
	pthread_mutex_lock(&lock);
	gen_unref(g);
	pthread_mutex_unlock(&lock);
}

size_t commit_cache_find(struct commit_gen *g, const long *ids, size_t n,
			 const struct commit_info **out)
{
	size_t missing = 0;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < n; i++)
		missing += !(out[i] = idmap_get(&g->ids, ids[i]));
	pthread_mutex_unlock(&lock);
	return missing;
}

/* Room for size bytes in a chunk list (a chunk of its own when large). */
static void *chunk_alloc(struct chunk **list, size_t size, size_t chunk_size)
{
	struct chunk *c = *list;

	size = (size + 7) & ~(size_t)7;
	if (!c || c->cap - c->used < size) {
		size_t cap = size > chunk_size ? size : chunk_size;
		c = xmalloc(sizeof(*c) + cap);
		c->used = 0;
		c->cap = cap;
		c->next = *list;
		*list = c;
	}
	c->used += size;
	return c->data + c->used - size;
}

/* A NUL-terminated copy of len bytes at p, in g's text. */
static const char *text_of(struct commit_gen *g, const char *p, size_t len)
{
	char *s = chunk_alloc(&g->text, len + 1, TEXT_CHUNK);

	memcpy(s, p, len);
	s[len] = '\0';
	return s;
}

static const char *text_copy(struct commit_gen *g, const PGresult *r, int row, int col)
{
	if (PQgetisnull(r, row, col))
		return NULL;
	return text_of(g, PQgetvalue(r, row, col), (size_t)PQgetlength(r, row, col));
}

/* PostgreSQL's epoch (2000-01-01) in Unix seconds */
#define PG_EPOCH_UNIX 946684800LL

void commit_cache_json(struct buf *b, const struct commit_info *e)
{
	buf_puts(b, "\"commit\":");
	jsonw_str(b, e->sha);
	buf_puts(b, ",\"parent\":");
	jsonw_str(b, e->parent);
	buf_puts(b, ",\"release\":");
	jsonw_str(b, e->release);
	buf_puts(b, ",\"subject\":");
	jsonw_str(b, e->subject);
	buf_puts(b, ",\"date\":");
	if (e->has_date) {
		char date[24];
		int64_t us = e->committed; /* whole seconds, rounded down */
		format_utc(us / 1000000 - (us % 1000000 < 0) + PG_EPOCH_UNIX, date);
		jsonw_str(b, date);
	} else {
		buf_puts(b, "null");
	}
}

void commit_cache_add(struct commit_gen *g, const PGresult *r)
{
	struct buf json = BUF_INIT;

	pthread_mutex_lock(&lock);
	for (int i = 0; i < PQntuples(r); i++) {
		long id = (long)db_int8(r, i, 0);
		struct commit_info *e;

		if (idmap_get(&g->ids, id))
			continue;
		e = chunk_alloc(&g->entries, sizeof(*e), ENTRY_CHUNK * sizeof(*e));
		e->id = id;
		e->sha = text_copy(g, r, i, 1);
		e->parent = text_copy(g, r, i, 2);
		e->release = text_copy(g, r, i, 3);
		e->subject = text_copy(g, r, i, 4);
		e->has_date = !PQgetisnull(r, i, 5);
		e->committed = e->has_date ? db_int8(r, i, 5) : 0;
		json.len = 0;
		commit_cache_json(&json, e);
		e->json = text_of(g, json.data, json.len);
		e->json_len = json.len;
		idmap_put(&g->ids, id, e);
	}
	if (g->ids.len >= LIMIT_COMMIT_CACHE && g == current) {
		/* full: the next readers start a new one (g lives on, still
		 * growing by what its holders read, until they put it back) */
		current = gen_new(g->epoch);
		gen_unref(g);
	}
	pthread_mutex_unlock(&lock);
	buf_release(&json);
}

int commit_cache_fill(PGconn *c, struct commit_gen *g, const long *ids, size_t n,
		      const struct commit_info **out, PGresult **failed)
{
	struct buf a = BUF_INIT;
	const char *params[1];
	PGresult *r;

	if (!commit_cache_find(g, ids, n, out))
		return 0;
	if (!c)
		return 1;
	buf_putc(&a, '{');
	for (size_t i = 0; i < n; i++)
		if (!out[i])
			buf_printf(&a, "%s%ld", a.len > 1 ? "," : "", ids[i]);
	buf_putc(&a, '}');
	params[0] = buf_str(&a);
	r = db_exec_binary(c, COMMIT_CACHE_SQL_BY_ID, 1, params);
	buf_release(&a);
	if (!db_ok(r)) {
		*failed = r;
		return -1;
	}
	commit_cache_add(g, r);
	PQclear(r);
	commit_cache_find(g, ids, n, out);
	return 0;
}
