/*
 * lease.c - heartbeats and the other calls on a held job. The heartbeat
 * runs in a thread because one benchmark iteration may outlast a lease;
 * the agent's main thread only reads `lost` between iterations.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lib/buf.h"
#include "collectors/base/cutil.h"
#include "collectors/agent/lease.h"
#include "collectors/deliver/post.h"

int lease_status_lost(long status)
{
	return status == 401 || status == 403 || status == 404 || status == 409;
}

long lease_call(const struct collect_config *c, const char *machine, long job_id,
		const char *action, const char *reason, int final, long timeout_s, json_t **answer,
		char *what, size_t whatsz)
{
	struct post_result r;
	struct buf path = BUF_INIT;
	json_t *body = json_pack("{s:s}", "machine", machine), *j;
	char *text;
	long status;

	if (answer)
		*answer = NULL;
	if (reason)
		json_object_set_new(body, "reason", json_string(reason));
	if (final)
		json_object_set_new(body, "final", json_true());
	text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	buf_printf(&path, "/api/v1/jobs/%ld/%s", job_id, action);
	status = post_request(c, "POST", buf_str(&path), text, strlen(text), timeout_s, NULL, NULL,
			      &r);
	if (!status) {
		snprintf(what, whatsz, "no answer: %s", r.error);
	} else if (status != 200) {
		j = json_loads(r.body, 0, NULL);
		snprintf(what, whatsz, "HTTP %ld %s: %.300s", status,
			 json_string_value(json_object_get(j, "error")) ?: "",
			 json_string_value(json_object_get(j, "message")) ?: r.body);
		json_decref(j);
	} else {
		what[0] = '\0';
		if (answer)
			*answer = json_loads(r.body, 0, NULL);
	}
	post_result_release(&r);
	buf_release(&path);
	free(text);
	return status;
}

static void *beat(void *arg)
{
	struct lease *l = arg;
	struct timespec until;

	/* beats on a fixed schedule: a slow answer does not push the next one back */
	clock_gettime(CLOCK_MONOTONIC, &until);
	pthread_mutex_lock(&l->mu);
	while (!l->stop) {
		struct timespec now;
		char what[512];
		long status;
		int rc = 0;

		clock_gettime(CLOCK_MONOTONIC, &now);
		if (until.tv_sec + l->interval_s < now.tv_sec)
			until = now; /* far behind (a stopped machine): no burst of beats */
		until.tv_sec += l->interval_s;
		while (!l->stop && rc != ETIMEDOUT)
			rc = pthread_cond_timedwait(&l->cv, &l->mu, &until);
		if (l->stop)
			break;
		pthread_mutex_unlock(&l->mu);
		/* a heartbeat later than the next one is no use */
		status = lease_call(l->c, l->machine, l->job_id, "heartbeat", NULL, 0,
				    l->interval_s > 2 ? l->interval_s : 2, NULL, what, sizeof(what));
		pthread_mutex_lock(&l->mu);
		if (lease_status_lost(status)) {
			snprintf(l->why, sizeof(l->why), "%s", what);
			atomic_store(&l->lost, 1);
			warn_msg("job %ld: heartbeat: %s: the lease is lost, the job is dropped",
				 l->job_id, what);
			break;
		}
		if (status != 200)
			warn_msg("job %ld: heartbeat: %s (trying again in %ld s)", l->job_id, what,
				 l->interval_s);
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

int lease_start(struct lease *l, const struct collect_config *c, const char *machine,
		long job_id, long lease_s)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	int e;

	memset(l, 0, sizeof(*l));
	l->c = c;
	l->machine = machine;
	l->job_id = job_id;
	l->interval_s = lease_s / 3 > 0 ? lease_s / 3 : 1;
	atomic_init(&l->lost, 0);
	pthread_mutex_init(&l->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cv, &ca);
	pthread_condattr_destroy(&ca);
	/* signals (the agent's SIGTERM) go to the main thread, which acts on them */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	e = pthread_create(&l->thread, NULL, beat, l);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e) {
		pthread_cond_destroy(&l->cv);
		pthread_mutex_destroy(&l->mu);
		errno = e;
		return -1;
	}
	l->started = 1;
	return 0;
}

void lease_stop(struct lease *l)
{
	if (!l->started)
		return;
	pthread_mutex_lock(&l->mu);
	l->stop = 1;
	pthread_cond_signal(&l->cv);
	pthread_mutex_unlock(&l->mu);
	pthread_join(l->thread, NULL);
	pthread_cond_destroy(&l->cv);
	pthread_mutex_destroy(&l->mu);
	l->started = 0;
}

int lease_lost(struct lease *l)
{
	return atomic_load(&l->lost);
}
