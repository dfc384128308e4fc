/*
 * decode_gate.c - a counting semaphore weighted by the values a body may hold.
 */
#include <pthread.h>

#include "lib/kperf_limits.h"
#include "api/decode_gate.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t freed = PTHREAD_COND_INITIALIZER;
static size_t in_use;

size_t decode_gate_enter(size_t len)
{
	size_t w = len / 2 + 1;

	if (w > LIMIT_REQUEST_VALUES)
		w = LIMIT_REQUEST_VALUES;
	pthread_mutex_lock(&lock);
	while (in_use && in_use + w > LIMIT_DECODE_VALUES)
		pthread_cond_wait(&freed, &lock);
	in_use += w;
	pthread_mutex_unlock(&lock);
	return w;
}

void decode_gate_leave(size_t weight)
{
	pthread_mutex_lock(&lock);
	in_use -= weight;
	pthread_cond_broadcast(&freed);
	pthread_mutex_unlock(&lock);
}
