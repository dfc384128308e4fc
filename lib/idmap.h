/*
 * idmap.h - a map from ids (> 0, e.g. a table's bigint key) to pointers:
 * open addressing, doubled at half full. Not synchronised: callers that
 * share one lock it.
 */
#ifndef KPERF_IDMAP_H
#define KPERF_IDMAP_H

#include <stddef.h>

struct idmap {
	struct idmap_slot {
		long id; /* 0: empty */
		void *val;
	} *slots;
	size_t cap, len; /* cap is 0 or a power of two */
};

/* The value of id, or NULL when absent. */
void *idmap_get(const struct idmap *m, long id);

/* Set id (> 0) to val, replacing an old value. */
void idmap_put(struct idmap *m, long id, void *val);

/* Free the table (not the values). */
void idmap_release(struct idmap *m);

#endif
