/*
 * fuzz_ref.c - libFuzzer harness for REF parsing in the read API (api/ref.c,
 * ref_parse: "kernel[:key=value,...]"). server/http.c's reply functions and
 * server/db.c are replaced by doubles, so no daemon is needed: ref_parse must
 * answer 400 exactly when it fails, else give a 1-256 character kernel and
 * string qualifiers.
 */
#include <stdarg.h>
#include <string.h>

#include "api/ref.h"
#include "server/db/db.h"
#include "tests/fuzz/fuzz.h"

/* Test doubles for server/http.c: record the status, check the message. */
void reply_error(struct reply *rp, int status, const char *code, const char *field,
		 const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	FUZZ_CHECK(code && field && msg[0], "an error names its code, field and reason");
	rp->status = status;
}

void reply_db_error(struct reply *rp, PGconn *c, const PGresult *r, const char *what)
{
	(void)c;
	(void)r;
	(void)what;
	FUZZ_CHECK(0, "ref_parse touched the database");
	rp->status = 503;
}

/* Doubles for server/db.c: only ref_resolve queries, and it is not under test. */
PGresult *db_exec(PGconn *c, const char *sql, int n, const char *const *params)
{
	(void)c;
	(void)sql;
	(void)n;
	(void)params;
	FUZZ_CHECK(0, "ref_parse queried the database");
	return NULL;
}

int db_ok(const PGresult *r)
{
	(void)r;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct reply rp;
	struct ref r;
	int rc;

	memcpy(text, data, size);
	text[size] = '\0';
	memset(&rp, 0, sizeof(rp));
	rc = ref_parse(text, &r, &rp, "base");
	if (rc) {
		FUZZ_CHECK(rc == -1 && rp.status == 400, "rc %d, status %d", rc, rp.status);
	} else {
		const char *key;
		json_t *v;
		size_t n = strlen(r.kernel);

		FUZZ_CHECK(rp.status == 0, "answered %d on success", rp.status);
		FUZZ_CHECK(n >= 1 && n <= 256 && !strchr(r.kernel, ':'), "kernel \"%s\"", r.kernel);
		FUZZ_CHECK(!strcmp(r.text, text), "text is the input");
		FUZZ_CHECK(json_is_object(r.qual), "qualifiers are an object");
		json_object_foreach(r.qual, key, v) {
			size_t kl = strlen(key);
			FUZZ_CHECK(kl >= 1 && kl <= 64 && strspn(key, "abcdefghijklmnopqrstuvwxyz"
								  "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
								  "0123456789._-") == kl,
				   "key \"%s\"", key);
			FUZZ_CHECK(json_is_string(v) && strlen(json_string_value(v)) <= 256 &&
					   !strchr(json_string_value(v), ','),
				   "value of %s", key);
		}
	}
	ref_release(&r);
	free(text);
	return 0;
}
