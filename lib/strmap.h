/*
 * strmap.h - a map from strings to positive integer ids (open addressing,
 * keys copied). Not synchronised: callers that share one lock it.
 */
#ifndef KPERF_STRMAP_H
#define KPERF_STRMAP_H

#include <stddef.h>

struct strmap {
	struct strmap_slot {
		char *key;
		long val;
	} *slots;
	size_t cap, len; /* cap is 0 or a power of two */
};

/* The value of key, or 0 when absent. */
long strmap_get(const struct strmap *m, const char *key);

/* Set key to val (> 0), replacing an old value. */
void strmap_put(struct strmap *m, const char *key, long val);

void strmap_release(struct strmap *m);

#endif
