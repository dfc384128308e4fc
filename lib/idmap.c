/* idmap.c - ids to pointers, open addressing (see idmap.h). */
#include <stdint.h>
#include <stdlib.h>

#include "lib/idmap.h"
#include "lib/util.h"

static size_t slot_of(long id, size_t cap)
{
	uint64_t x = (uint64_t)id * 0x9e3779b97f4a7c15ull; /* ids are dense: spread them */
	return (size_t)(x ^ (x >> 29)) & (cap - 1);
}

void *idmap_get(const struct idmap *m, long id)
{
	if (!m->cap)
		return NULL;
	for (size_t h = slot_of(id, m->cap); m->slots[h].id; h = (h + 1) & (m->cap - 1))
		if (m->slots[h].id == id)
			return m->slots[h].val;
	return NULL;
}

static void grow(struct idmap *m)
{
	struct idmap old = *m;

	m->cap = old.cap ? 2 * old.cap : 1024;
	m->slots = xcalloc(m->cap, sizeof(*m->slots));
	m->len = 0;
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].id)
			idmap_put(m, old.slots[i].id, old.slots[i].val);
	free(old.slots);
}

void idmap_put(struct idmap *m, long id, void *val)
{
	size_t h;

	if (2 * (m->len + 1) > m->cap)
		grow(m);
	for (h = slot_of(id, m->cap); m->slots[h].id; h = (h + 1) & (m->cap - 1))
		if (m->slots[h].id == id) {
			m->slots[h].val = val;
			return;
		}
	m->slots[h].id = id;
	m->slots[h].val = val;
	m->len++;
}

void idmap_release(struct idmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->len = 0;
}
