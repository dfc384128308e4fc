/*
 * mailer.c - outbox delivery. A message is claimed and marked "sending" in a
 * short transaction, sent outside it, then marked sent or failed; a kperfd
 * that dies between SMTP acceptance and marking re-sends it later with the
 * same Message-ID (claims older than ten minutes are taken again).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/counters.h"
#include "server/db/db.h"
#include "server/mail/mailer.h"
#include "lib/util.h"

#define MAILER_POLL_US 250000

static struct alert_config acfg;
static struct smtp_server scfg;
static pthread_t thread;
static atomic_int stopping;
static int running;

int mailer_configured(void)
{
	return scfg.url && *scfg.url;
}

int mailer_step(PGconn *c)
{
	struct alert_claimed a;
	char err[1024];
	int rc;

	if (db_do(c, "BEGIN", 0, NULL))
		return -1;
	rc = alert_claim(c, &acfg, &a);
	if (rc < 0 || db_do(c, "COMMIT", 0, NULL)) {
		if (PQstatus(c) == CONNECTION_OK)
			PQclear(PQexec(c, "ROLLBACK"));
		alert_claimed_release(&a);
		return -1;
	}
	if (rc != 1)
		return rc == 2 ? 1 : 0;
	if (smtp_send(&scfg, acfg.from, a.rcpt, a.message, a.len, err, sizeof(err)) == 0) {
		log_info("alert %s sent to \"%s\"", a.id, a.rcpt);
		counters.alerts_sent++;
		rc = alert_mark_sent(c, a.id) ? -1 : 1;
	} else {
		log_error("alert %s to \"%s\" not sent (attempt %ld): %s", a.id, a.rcpt, a.attempts,
			  err);
		counters.alerts_failed++;
		rc = alert_mark_failed(c, &acfg, &a, err) ? -1 : 1;
	}
	alert_claimed_release(&a);
	return rc;
}

static void *mailer_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&stopping)) {
		PGconn *c = db_get();
		int rc = c ? mailer_step(c) : -1;
		if (rc <= 0)
			usleep(rc < 0 ? 4 * MAILER_POLL_US : MAILER_POLL_US);
	}
	db_release();
	return NULL;
}

int mailer_start(const struct alert_config *a, const struct smtp_server *s)
{
	acfg = *a;
	scfg = *s;
	if (!mailer_configured()) {
		log_info("mail not configured (KPERF_SMTP_URL): alerts wait in the outbox");
		return 0;
	}
	atomic_store(&stopping, 0);
	if (pthread_create(&thread, NULL, mailer_main, NULL))
		return -1;
	running = 1;
	return 0;
}

void mailer_stop(void)
{
	if (!running)
		return;
	atomic_store(&stopping, 1);
	pthread_join(thread, NULL);
	running = 0;
}
