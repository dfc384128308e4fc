/*
 * strmap.c - string keys to ids: FNV-1a hash, linear probing, grown at 3/4.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strmap.h"
#include "lib/util.h"

static uint64_t hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static struct strmap_slot *find(const struct strmap *m, const char *key)
{
	size_t i = (size_t)hash(key) & (m->cap - 1);
	while (m->slots[i].key && strcmp(m->slots[i].key, key))
		i = (i + 1) & (m->cap - 1);
	return &m->slots[i];
}

long strmap_get(const struct strmap *m, const char *key)
{
	return m->cap ? find(m, key)->val : 0;
}

void strmap_put(struct strmap *m, const char *key, long val)
{
	struct strmap_slot *s;

	if ((m->len + 1) * 4 > m->cap * 3) {
		struct strmap old = *m;
		m->cap = old.cap ? old.cap * 2 : 64;
		m->slots = xcalloc(m->cap, sizeof(*m->slots));
		for (size_t i = 0; i < old.cap; i++)
			if (old.slots[i].key)
				*find(m, old.slots[i].key) = old.slots[i];
		free(old.slots);
	}
	s = find(m, key);
	if (!s->key) {
		s->key = xstrdup(key);
		m->len++;
	}
	s->val = val;
}

void strmap_release(struct strmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].key);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}
