/*
 * smtp.h - one message over SMTP with libcurl: smtp:// (STARTTLS when the
 * server offers it) or smtps://, optional login.
 */
#ifndef KPERF_SMTP_H
#define KPERF_SMTP_H

#include <stddef.h>

struct smtp_server {
	const char *url;      /* smtp://host:25, smtps://host:465 */
	const char *user;     /* NULL: no login */
	const char *password;
	long timeout_s;
};

/*
 * Send msg (a whole RFC 5322 message with CRLF line ends) from `from` to `to`
 * (one address, or several separated by commas).
 * Returns 0 once the server accepted it, or -1 with the server's reply or
 * libcurl's reason in err.
 */
int smtp_send(const struct smtp_server *s, const char *from, const char *to, const char *msg,
	      size_t len, char *err, size_t errlen);

#endif
