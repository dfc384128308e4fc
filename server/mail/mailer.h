/*
 * mailer.h - the thread that delivers the outbox over SMTP. Without an SMTP
 * URL messages wait in the outbox (and /healthz says mail is not configured).
 */
#ifndef KPERF_MAILER_H
#define KPERF_MAILER_H

#include <libpq-fe.h>

#include "server/mail/alert.h"
#include "server/mail/smtp.h"

/* Start delivering with these settings (copied). 0 or -1. */
int mailer_start(const struct alert_config *acfg, const struct smtp_server *smtp);
void mailer_stop(void);

/* 1 when an SMTP URL is configured. */
int mailer_configured(void);

/* Deliver at most one due message on c: 1 sent or handled, 0 nothing due, -1 error. */
int mailer_step(PGconn *c);

#endif
