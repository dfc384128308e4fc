/*
 * regress_worker.c - the decision workers' threads: the first polls the
 * queue (regress_step, in regress.c, decides a claimed batch) and, when the
 * queue is empty, gives the lab loop its turn (confirmations past their
 * time, bisections to advance); the second joins while the queue is long.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#include "server/decide/bisect.h"
#include "server/decide/confirm.h"
#include "server/db/db.h"
#include "server/db/migrate.h"
#include "server/decide/regress.h"
#include "lib/util.h"

static atomic_int worker_stop;
static pthread_t threads[REGRESS_WORKERS];
static int nthreads;
/* the helpers wait here until the first worker finds the queue long */
static pthread_mutex_t help_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t help_cond = PTHREAD_COND_INITIALIZER;
static int help_wanted;

/* Confirmations past their time, and bisections to advance (at most once a
 * second: each reads its chain's samples). */
static void lab_step(PGconn *c)
{
	static _Thread_local int64_t last;
	int64_t now = now_us();

	if (now - last < 1000000)
		return;
	last = now;
	if (confirm_sweep(c) < 0 || bisect_step(c) < 0)
		log_error("the lab loop's pass failed; trying again in a second");
}

static void *worker_main(void *arg)
{
	int helper = (int)(intptr_t)arg;
	int64_t partitions_at = now_us();

	while (!atomic_load(&worker_stop)) {
		PGconn *c;
		int rc;

		if (helper) { /* wait until the queue is long */
			pthread_mutex_lock(&help_lock);
			while (!help_wanted && !atomic_load(&worker_stop))
				pthread_cond_wait(&help_cond, &help_lock);
			pthread_mutex_unlock(&help_lock);
			if (atomic_load(&worker_stop))
				break;
		}
		c = db_get();
		rc = c ? regress_step(c) : -1;
		if (!helper && c && rc == 0) /* the queue is empty: the lab loop's turn */
			lab_step(c);
		if (!helper && c && now_us() - partitions_at > 3600 * INT64_C(1000000)) {
			partitions_at = now_us();
			migrate_partitions(c);
		}
		if (!helper && rc >= REGRESS_HELP_ENTRIES && nthreads > 1) {
			pthread_mutex_lock(&help_lock);
			help_wanted = 1;
			pthread_cond_broadcast(&help_cond);
			pthread_mutex_unlock(&help_lock);
		}
		if (rc > 0)
			continue;
		if (helper) { /* the queue is short again: back to waiting, its
			       * connection back to the pool */
			pthread_mutex_lock(&help_lock);
			help_wanted = 0;
			pthread_mutex_unlock(&help_lock);
			db_release();
		}
		usleep(rc < 0 ? 5 * REGRESS_POLL_US : REGRESS_POLL_US);
	}
	db_release();
	return NULL;
}

int regress_start(double settle_s)
{
	regress_settle(settle_s);
	atomic_store(&worker_stop, 0);
	help_wanted = 0;
	for (nthreads = 0; nthreads < REGRESS_WORKERS; nthreads++)
		if (pthread_create(&threads[nthreads], NULL, worker_main,
				   (void *)(intptr_t)(nthreads > 0)))
			break;
	if (nthreads)
		return 0;
	return -1;
}

void regress_stop(void)
{
	if (!nthreads)
		return;
	atomic_store(&worker_stop, 1);
	pthread_mutex_lock(&help_lock);
	pthread_cond_broadcast(&help_cond);
	pthread_mutex_unlock(&help_lock);
	for (int i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);
	nthreads = 0;
	regress_release();
}

