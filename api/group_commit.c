/*
 * group_commit.c - group commit across concurrent requests (leader and
 * followers). A request queues its runs; when fewer than LIMIT_GROUP_LEADERS
 * transactions are being written, the request's thread becomes a leader,
 * takes every queued request (up to LIMIT_GROUP_RUNS runs) and stores them in
 * one transaction on its own connection, while the others wait for the
 * COMMIT. Two leaders keep both cores of a small server busy; everything
 * arriving while they write is committed by the next one in one go. A failure in
 * a group (a conflicting run_id, a deadlock, a bad value) rolls it back: the
 * conflicting request leaves the group, or on any other error each request
 * stores its runs alone, so one request's error is never another's.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "server/counters.h"
#include "server/db/db.h"
#include "lib/kperf_limits.h"
#include "lib/util.h"
#include "api/group_commit.h"

enum job_state { JOB_QUEUED, JOB_STORED, JOB_ALONE };

struct job {
	struct store_item *items;
	size_t n, nvalues;
	enum job_state state;
	struct job *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done = PTHREAD_COND_INITIALIZER;
static struct job *queue, **queue_tail = &queue;
static int leading; /* transactions being written: up to LIMIT_GROUP_LEADERS */

/* One transaction for items: -1 stored, >= 0 a conflict, -2 database error. */
static long store_tx(PGconn *c, struct store_item *items, size_t n, PGresult **failed)
{
	struct strmap fresh = {0};
	long rc;

	*failed = NULL;
	rc = store_runs(c, items, n, &fresh, failed); /* BEGIN ... COMMIT */
	if (rc != -1) {
		if (PQstatus(c) == CONNECTION_OK)
			PQclear(PQexec(c, "ROLLBACK"));
		strmap_release(&fresh);
		return rc;
	}
	store_publish(&fresh);
	counters.ingest_commits++;
	return -1;
}

/* A request's runs in a transaction of their own, retried when worth it. */
static long store_alone(struct store_item *items, size_t n, PGconn **c, PGresult **failed)
{
	long rc = -2;

	*failed = NULL;
	for (int attempt = 0; attempt < LIMIT_TX_RETRIES; attempt++) {
		PQclear(*failed);
		*failed = NULL;
		if (!(*c = db_get()))
			return -3;
		rc = store_tx(*c, items, n, failed);
		if (rc != -2 || !db_retryable(*c, *failed))
			break;
		db_log_error("ingest attempt", *c, *failed);
		if (PQstatus(*c) != CONNECTION_OK)
			db_drop();
	}
	return rc;
}

/* Store the group's jobs in one transaction; set each job's state. */
static void lead(struct job **group, size_t njobs)
{
	PGconn *c = njobs > 1 ? db_get() : NULL;
	struct store_item *all;
	size_t total = 0;

	if (!c) { /* one request, or no connection: each answers for itself */
		for (size_t j = 0; j < njobs; j++)
			group[j]->state = JOB_ALONE;
		return;
	}
	for (size_t j = 0; j < njobs; j++)
		total += group[j]->n;
	all = xcalloc(total, sizeof(*all));
	while (njobs > 1) {
		PGresult *failed = NULL;
		size_t k = 0, j;
		long rc;

		for (j = 0; j < njobs; j++) {
			memcpy(all + k, group[j]->items, group[j]->n * sizeof(*all));
			k += group[j]->n;
		}
		rc = store_tx(c, all, k, &failed);
		PQclear(failed);
		if (rc == -1) {
			for (j = 0, k = 0; j < njobs; k += group[j]->n, j++) {
				memcpy(group[j]->items, all + k, group[j]->n * sizeof(*all));
				group[j]->state = JOB_STORED;
			}
			counters.ingest_grouped_requests += njobs;
			free(all);
			return;
		}
		if (rc == -2) {
			if (PQstatus(c) != CONNECTION_OK)
				db_drop();
			break;
		}
		/* the request holding run rc conflicts: it answers alone, the rest retry */
		for (j = 0, k = group[0]->n; k <= (size_t)rc; k += group[++j]->n)
			;
		group[j]->state = JOB_ALONE;
		memmove(group + j, group + j + 1, (njobs - j - 1) * sizeof(*group));
		njobs--;
	}
	for (size_t j = 0; j < njobs; j++)
		group[j]->state = JOB_ALONE;
	free(all);
}

long group_store(struct store_item *items, size_t n, PGconn **c, PGresult **failed)
{
	struct job self = {items, n, 0, JOB_QUEUED, NULL};

	*c = NULL;
	*failed = NULL;
	for (size_t i = 0; i < n; i++)
		self.nvalues += items[i].run->nvalues;
	if (n > LIMIT_GROUP_RUNS / 2 || self.nvalues > LIMIT_GROUP_VALUES / 2)
		return store_alone(items, n, c, failed);

	pthread_mutex_lock(&lock);
	*queue_tail = &self;
	queue_tail = &self.next;
	while (self.state == JOB_QUEUED) {
		struct job *group[LIMIT_GROUP_RUNS];
		size_t njobs = 0, runs = 0, values = 0;

		/* wait while the leaders are busy, or while a leader holds this
		 * request in its group (it is no longer in the queue) */
		if (leading >= LIMIT_GROUP_LEADERS || !queue) {
			pthread_cond_wait(&done, &lock);
			continue;
		}
		leading++;
		while (queue && njobs < LIMIT_GROUP_RUNS && runs + queue->n <= LIMIT_GROUP_RUNS &&
		       values + queue->nvalues <= LIMIT_GROUP_VALUES) {
			runs += queue->n;
			values += queue->nvalues;
			group[njobs++] = queue;
			queue = queue->next;
		}
		if (!queue)
			queue_tail = &queue;
		pthread_mutex_unlock(&lock);
		if (njobs == 1 && group[0] == &self) {
			/* alone, but still leading: requests arriving meanwhile queue up
			 * and the next leader stores them together */
			long rc = store_alone(items, n, c, failed);
			pthread_mutex_lock(&lock);
			leading--;
			pthread_cond_broadcast(&done);
			pthread_mutex_unlock(&lock);
			return rc;
		}
		lead(group, njobs);
		/* not held while waiting below: waiting threads holding pool
		 * connections could leave the next leader none */
		db_release();
		pthread_mutex_lock(&lock);
		leading--;
		pthread_cond_broadcast(&done);
	}
	pthread_mutex_unlock(&lock);
	return self.state == JOB_STORED ? -1 : store_alone(items, n, c, failed);
}
