/*
 * readcache.c - see readcache.h. A short doubly linked list in recency
 * order: the cache holds a few megabytes of answers of hundreds of kilobytes
 * each, so a linear search by key costs nothing next to the answers' size.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "server/db/db.h"
#include "server/reads/readcache.h"
#include "lib/util.h"

/*
 * An answer is one allocation: the body, then (aligned) this header and the
 * key. Three separate blocks let the small long-lived ones pin the heap
 * between the big short-lived ones of each request: RSS crept by megabytes.
 */
struct readcache_answer {
	struct readcache_answer *prev, *next;
	long refs;
	char snap[READCACHE_SNAPSHOT_MAX];
	const char *content_type;
	uint64_t etag;
	char *body; /* the start of the allocation */
	size_t len;
	char key[];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct readcache_answer *head, *tail; /* head: most recently used */
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

static void answer_free(struct readcache_answer *a)
{
	free(a->body); /* the whole answer */
}

/* Under the lock: drop one reference; 1 when that was the last. */
static int unref(struct readcache_answer *a)
{
	return --a->refs == 0;
}

static void unlink_answer(struct readcache_answer *a)
{
	if (a->prev)
		a->prev->next = a->next;
	else
		head = a->next;
	if (a->next)
		a->next->prev = a->prev;
	else
		tail = a->prev;
	a->prev = a->next = NULL;
}

static void push_front(struct readcache_answer *a)
{
	a->prev = NULL;
	a->next = head;
	if (head)
		head->prev = a;
	head = a;
	if (!tail)
		tail = a;
}

/* Under the lock: take a off the list; returns it when no response holds it
 * (the caller frees it), else NULL (the last readcache_release will). */
static struct readcache_answer *evict(struct readcache_answer *a)
{
	unlink_answer(a);
	held_bytes -= a->len + strlen(a->key);
	held_entries--;
	return unref(a) ? a : NULL;
}

static struct readcache_answer *find(const char *key)
{
	for (struct readcache_answer *a = head; a; a = a->next)
		if (!strcmp(a->key, key))
			return a;
	return NULL;
}

struct readcache_answer *readcache_get(const char *key, const char *snap)
{
	struct readcache_answer *a;

	pthread_mutex_lock(&lock);
	a = find(key);
	if (a && !strcmp(a->snap, snap)) {
		unlink_answer(a);
		push_front(a);
		a->refs++;
		hits++;
	} else {
		a = NULL;
		misses++;
	}
	pthread_mutex_unlock(&lock);
	return a;
}

struct readcache_answer *readcache_put(const char *key, const char *snap,
				       const char *content_type, char *body, size_t len)
{
	size_t klen = strlen(key), cost = len + klen;
	size_t at = (len + _Alignof(struct readcache_answer) - 1) &
		    ~(_Alignof(struct readcache_answer) - 1);
	struct readcache_answer *a, *dead = NULL, *old;

	body = xrealloc(body, at + sizeof(*a) + klen + 1); /* grows in place as a rule */
	a = (struct readcache_answer *)(void *)(body + at);
	memset(a, 0, sizeof(*a));
	memcpy(a->key, key, klen + 1);
	memcpy(a->snap, snap, strlen(snap) + 1);
	a->content_type = content_type;
	a->etag = hash64(body, len);
	a->body = body;
	a->len = len;
	a->refs = 1; /* the caller's */
	/* one answer may take a quarter of the cache, so a big compare cannot flush it */
	if (!limit_bytes || cost > limit_bytes / 4)
		return a;
	pthread_mutex_lock(&lock);
	old = find(key);
	while (old || (head && held_bytes + cost > limit_bytes)) {
		struct readcache_answer *gone = evict(old ? old : tail);
		old = NULL;
		if (gone) { /* freed after the lock, chained through next */
			gone->next = dead;
			dead = gone;
		}
	}
	push_front(a);
	a->refs++; /* the list's */
	held_bytes += cost;
	held_entries++;
	pthread_mutex_unlock(&lock);
	while (dead) {
		struct readcache_answer *next = dead->next;
		answer_free(dead);
		dead = next;
	}
	return a;
}

const char *readcache_body(const struct readcache_answer *a, size_t *len)
{
	*len = a->len;
	return a->body;
}

const char *readcache_content_type(const struct readcache_answer *a)
{
	return a->content_type;
}

uint64_t readcache_etag(const struct readcache_answer *a)
{
	return a->etag;
}

void readcache_release(struct readcache_answer *a)
{
	int last;

	if (!a)
		return;
	pthread_mutex_lock(&lock);
	last = unref(a);
	pthread_mutex_unlock(&lock);
	if (last)
		answer_free(a);
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
