/*
 * readcache.c - see readcache.h. A short doubly linked list in recency
 * order: the cache holds a few megabytes of answers of hundreds of kilobytes
 * each, so a linear search by key costs nothing next to the answers' size.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "readcache.h"
#include "util.h"

struct entry {
	struct entry *prev, *next;
	char *key;
	char snap[READCACHE_SNAPSHOT_MAX];
	const char *content_type;
	uint64_t etag;
	char *body;
	size_t len;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *head, *tail; /* head: most recently used */
static size_t limit_bytes, held_bytes, held_entries;
static unsigned long hits, misses;

static const char SQL_SNAPSHOT[] = "SELECT pg_current_snapshot()::text";

void readcache_limit(size_t bytes)
{
	limit_bytes = bytes;
}

int readcache_snapshot(PGconn *c, char out[READCACHE_SNAPSHOT_MAX])
{
	PGresult *r;
	int rc = -1;

	if (!limit_bytes)
		return -1;
	r = db_exec(c, SQL_SNAPSHOT, 0, NULL);
	if (db_ok(r) && PQntuples(r) == 1 && (size_t)PQgetlength(r, 0, 0) < READCACHE_SNAPSHOT_MAX) {
		memcpy(out, PQgetvalue(r, 0, 0), (size_t)PQgetlength(r, 0, 0) + 1);
		rc = 0;
	}
	PQclear(r);
	return rc;
}

static void unlink_entry(struct entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		tail = e->prev;
	e->prev = e->next = NULL;
}

static void push_front(struct entry *e)
{
	e->prev = NULL;
	e->next = head;
	if (head)
		head->prev = e;
	head = e;
	if (!tail)
		tail = e;
}

static void drop(struct entry *e)
{
	unlink_entry(e);
	held_bytes -= e->len + strlen(e->key);
	held_entries--;
	free(e->key);
	free(e->body);
	free(e);
}

static struct entry *find(const char *key)
{
	for (struct entry *e = head; e; e = e->next)
		if (!strcmp(e->key, key))
			return e;
	return NULL;
}

int readcache_get(const char *key, const char *snap, struct buf *out, const char **content_type,
		  uint64_t *etag)
{
	struct entry *e;
	int hit = 0;

	pthread_mutex_lock(&lock);
	e = find(key);
	if (e && !strcmp(e->snap, snap)) {
		unlink_entry(e);
		push_front(e);
		buf_append(out, e->body, e->len);
		*content_type = e->content_type;
		*etag = e->etag;
		hit = 1;
		hits++;
	} else {
		misses++;
	}
	pthread_mutex_unlock(&lock);
	return hit;
}

void readcache_put(const char *key, const char *snap, const char *content_type,
		   const char *body, size_t len, uint64_t *etag)
{
	size_t cost = len + strlen(key);
	struct entry *e;

	*etag = hash_fnv1a64(body, len);
	/* one answer may take a quarter of the cache, so a big compare cannot flush it */
	if (!limit_bytes || cost > limit_bytes / 4)
		return;
	e = xcalloc(1, sizeof(*e));
	e->key = xstrdup(key);
	memcpy(e->snap, snap, strlen(snap) + 1);
	e->content_type = content_type;
	e->etag = *etag;
	e->body = xmalloc(len ? len : 1);
	memcpy(e->body, body, len);
	e->len = len;
	pthread_mutex_lock(&lock);
	{
		struct entry *old = find(key);
		if (old)
			drop(old);
	}
	while (head && held_bytes + cost > limit_bytes)
		drop(tail);
	push_front(e);
	held_bytes += cost;
	held_entries++;
	pthread_mutex_unlock(&lock);
}

void readcache_stats(size_t *entries, size_t *bytes, unsigned long *h, unsigned long *m)
{
	pthread_mutex_lock(&lock);
	*entries = held_entries;
	*bytes = held_bytes;
	*h = hits;
	*m = misses;
	pthread_mutex_unlock(&lock);
}
