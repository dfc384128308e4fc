/*
 * throttle.c - a fixed table of recently failing addresses under one mutex:
 * memory stays bounded whatever the number of addresses (the oldest entry
 * is reused), which is all a lab-sized service needs.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lib/kperf_limits.h"
#include "server/http/throttle.h"

#define THROTTLE_SLOTS 1024

struct slot {
	char addr[64];
	time_t window_start;
	int failures;
	time_t blocked_until;
};

static struct slot slots[THROTTLE_SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static struct slot *find(const char *addr, int create, time_t now)
{
	struct slot *oldest = &slots[0];

	for (int i = 0; i < THROTTLE_SLOTS; i++) {
		if (!strcmp(slots[i].addr, addr))
			return &slots[i];
		if (slots[i].window_start < oldest->window_start)
			oldest = &slots[i];
	}
	if (!create)
		return NULL;
	memset(oldest, 0, sizeof(*oldest));
	snprintf(oldest->addr, sizeof(oldest->addr), "%s", addr);
	oldest->window_start = now;
	return oldest;
}

int throttle_blocked(const char *addr)
{
	time_t now = time(NULL);
	int wait = 0;
	struct slot *s;

	pthread_mutex_lock(&lock);
	s = find(addr, 0, now);
	if (s && s->blocked_until > now)
		wait = (int)(s->blocked_until - now);
	pthread_mutex_unlock(&lock);
	return wait;
}

void throttle_fail(const char *addr)
{
	time_t now = time(NULL);
	struct slot *s;

	pthread_mutex_lock(&lock);
	s = find(addr, 1, now);
	if (now - s->window_start > LIMIT_AUTH_WINDOW_S) {
		s->window_start = now;
		s->failures = 0;
	}
	if (++s->failures >= LIMIT_AUTH_FAILURES)
		s->blocked_until = now + LIMIT_AUTH_BLOCK_S;
	pthread_mutex_unlock(&lock);
}
