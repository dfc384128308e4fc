/*
 * inboxes.c - /api/v1/inboxes: the mailing-list archives (public-inbox)
 * kperfd polls for patch series, with each one's last poll and the next.
 */
#include <string.h>

#include "api/api.h"
#include "api/body.h"
#include "lib/kperf_limits.h"
#include "server/db/db.h"
#include "server/robot/inbox.h"

static int url_ok(const char *u)
{
	size_t n = strlen(u);
	const char *host = !strncmp(u, "http://", 7) ? u + 7 : !strncmp(u, "https://", 8) ? u + 8 : NULL;

	if (!host || !*host || *host == '/' || u[n - 1] != '/' || !strchr(host, '/'))
		return 0;
	for (const char *p = u; *p; p++)
		if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f || strchr("\"<>\\^`{|}", *p))
			return 0;
	return 1;
}

static int name_ok(const char *s)
{
	return strlen(s) <= 64 &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
		       strlen(s);
}

void api_inboxes_post(struct request *rq, struct reply *rp)
{
	static const char *const known[] = {"name", "url", "list", "query", "poll_s", NULL};
	const char *name, *url, *list, *query;
	long poll_s = 300;
	struct buf out = BUF_INIT;
	json_t *o = body_object(rq, rp, known, "an inbox");
	PGconn *c;
	int rc;

	if (!o)
		return;
	if (body_string(o, "name", 64, &name, rp) < 0 || body_string(o, "url", 1024, &url, rp) < 0 ||
	    body_string(o, "list", 254, &list, rp) < 0 ||
	    body_string(o, "query", LIMIT_TEXT, &query, rp) < 0 ||
	    body_long(o, "poll_s", 1, 86400, &poll_s, rp) < 0)
		goto out;
	if (!name || !name_ok(name)) {
		reply_error(rp, 400, "invalid", "name", "name must be 1-64 of A-Za-z0-9._-");
		goto out;
	}
	if (!url || !url_ok(url)) {
		reply_error(rp, 400, "invalid", "url",
			    "url must be an http:// or https:// inbox URL ending in /, like"
			    " https://lore.kernel.org/linux-mm/");
		goto out;
	}
	if (list && !body_email_ok(list)) {
		reply_error(rp, 400, "invalid", "list", "list must be an address like linux-mm@kvack.org");
		goto out;
	}
	if (!(c = db_get())) {
		reply_unavailable(rp);
		goto out;
	}
	rc = inbox_add(c, name, url, list, query, poll_s, &out);
	if (rc < 0)
		reply_db_status(rp, 503, "adding the inbox");
	else if (rc == 1)
		reply_error(rp, 409, "conflict", "name", "an inbox named \"%s\" exists", name);
	else
		reply_json(rp, 201, out.data);
out:
	buf_release(&out);
	json_decref(o);
}

void api_inboxes_list(struct request *rq, struct reply *rp)
{
	(void)rq;
	body_reply_list(rp, inbox_list_json, "listing inboxes");
}
