/*
 * rundoc.c - building and delivering run documents. Everything the server's
 * validator checks (lib/ingest_decode.c) is made true here: name charsets,
 * string values, UTF-8 text, output_tail and metric limits.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "lib/buf.h"
#include "collectors/base/cutil.h"
#include "collectors/host/kernel.h"
#include "collectors/host/knobs.h"
#include "collectors/host/machine.h"
#include "collectors/parse/metrics.h"
#include "collectors/deliver/post.h"
#include "collectors/base/progress.h"
#include "lib/ingest_decode.h"
#include "lib/jsonw.h"
#include "collectors/deliver/rundoc.h"
#include "collectors/deliver/spool.h"

void rundoc_time(time_t t, char out[32])
{
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void rundoc_run_id(const char *machine, char *out, size_t outsz)
{
	unsigned char r[4] = {0};
	char stamp[32];
	struct tm tm;
	time_t t = time(NULL);

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		/* no entropy source: time and pid still make collisions unlikely */
		unsigned v = (unsigned)getpid() ^ (unsigned)clock();
		memcpy(r, &v, sizeof(r));
	}
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(out, outsz, "%.64s-%s-%02x%02x%02x%02x", machine, stamp, r[0], r[1], r[2], r[3]);
}


char *rundoc_utf8_tail(const char *s, size_t len, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t start = len > max ? len - max : 0;
	struct buf b = BUF_INIT;

	while (start < len && (p[start] & 0xc0) == 0x80)
		start++;
	for (size_t i = start; i < len;) {
		size_t n = p[i] ? jsonw_utf8_len(p + i, len - i) : 0; /* a NUL ends it too */
		if (n) {
			buf_append(&b, p + i, n);
			i += n;
		} else {
			buf_putc(&b, '?');
			i++;
		}
	}
	return buf_detach(&b, NULL);
}

json_t *rundoc_new(const struct collect_config *c, const struct run_meta *meta, char *err,
		   size_t errsz)
{
	struct machine_facts m;
	struct kernel_facts k;
	json_t *doc, *kernel, *test, *variant, *series;
	char run_id[160], when[32];

	if (ingest_check_pattern(meta->suite, 64, "._-")) {
		snprintf(err, errsz, "suite \"%s\" must be 1-64 of A-Za-z0-9._-", meta->suite);
		return NULL;
	}
	if (meta->commit && ingest_check_hex40(meta->commit)) {
		snprintf(err, errsz, "commit \"%s\" must be a full sha of 40 hex digits",
			 meta->commit);
		return NULL;
	}
	if (machine_facts_read(&m, c->machine)) {
		snprintf(err, errsz, "machine name \"%s\" has no usable character", c->machine);
		return NULL;
	}
	kernel_facts_read(&k);
	doc = json_object();
	rundoc_run_id(m.name, run_id, sizeof(run_id));
	json_object_set_new(doc, "run_id", json_string(run_id));
	json_object_set_new(doc, "machine", machine_json(&m));

	kernel = json_object();
	if (meta->commit)
		json_object_set_new(kernel, "commit", json_string(meta->commit));
	if (meta->release) {
		char rel[KERNEL_RELEASE_MAX + 1];
		size_t o = 0;
		for (const char *r = meta->release; *r && o < KERNEL_RELEASE_MAX; r++)
			if ((unsigned char)*r > 0x20 && (unsigned char)*r < 0x7f)
				rel[o++] = *r;
		rel[o] = '\0';
		json_object_set_new(kernel, "release", json_string(o ? rel : k.release));
	} else {
		json_object_set_new(kernel, "release", json_string(k.release));
	}
	if (meta->series && (series = json_string(meta->series)))
		json_object_set_new(kernel, "series", series);
	if (k.cmdline) {
		char *t = rundoc_utf8_tail(k.cmdline, strlen(k.cmdline), 16384);
		json_object_set_new(kernel, "cmdline", json_string(t));
		free(t);
	}
	if (k.config && json_object_size(k.config))
		json_object_set(kernel, "config", k.config);
	json_object_set_new(doc, "kernel", kernel);

	variant = knobs_variant();
	if (meta->variant)
		json_object_update(variant, meta->variant);
	json_object_set_new(doc, "variant", variant);

	test = json_object();
	json_object_set_new(test, "suite", json_string(meta->suite));
	if (meta->params && json_object_size(meta->params))
		json_object_set(test, "params", meta->params);
	json_object_set_new(doc, "test", test);
	if (meta->job_id > 0)
		json_object_set_new(doc, "job", json_pack("{s:I}", "id", (json_int_t)meta->job_id));

	rundoc_time(time(NULL), when);
	json_object_set_new(doc, "started_at", json_string(when));
	json_object_set_new(doc, "environment", knobs_environment(k.version));
	json_object_set_new(doc, "metrics", json_object());
	json_object_set_new(doc, "units", json_object());
	json_object_set_new(doc, "directions", json_object());
	kernel_facts_release(&k);
	return doc;
}

size_t rundoc_enforce_limits(json_t *doc)
{
	json_t *metrics = json_object_get(doc, "metrics");
	size_t dropped = 0;

	while (json_object_size(metrics) > RUNDOC_METRICS_MAX ||
	       metrics_nvalues(metrics) > RUNDOC_VALUES_MAX) {
		/* jansson keeps insertion order: the last key was added last */
		const char *last = NULL, *key;
		json_t *v;
		json_object_foreach(metrics, key, v)
			last = key;
		if (!last)
			break;
		json_object_del(metrics, last);
		dropped++;
	}
	if (dropped)
		warn_msg("%zu metrics left out: a run holds at most %d metrics and %d values",
			 dropped, RUNDOC_METRICS_MAX, RUNDOC_VALUES_MAX);
	return dropped;
}

int rundoc_check(const char *json, size_t len, char *err, size_t cap)
{
	struct decode_error derr;
	struct ingest in;

	if (ingest_decode_runs(json, len, &in, &derr)) {
		snprintf(err, cap, "%.1100s%s%.500s", derr.field, *derr.field ? ": " : "", derr.message);
		return -1;
	}
	ingest_release(&in);
	return 0;
}

enum outcome rundoc_deliver(const struct collect_config *c, json_t *doc)
{
	const char *run_id = json_string_value(json_object_get(doc, "run_id"));
	char *json = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17));
	size_t len = strlen(json);
	struct post_result r;
	enum outcome out;
	char path[4096], why[1700];

	/* kperfd's own decoder: a run it would refuse is neither sent nor spooled */
	if (rundoc_check(json, len, why, sizeof(why))) {
		err_msg("run %s breaks kperfd's ingest contract (%s): not sent", run_id, why);
		free(json);
		return OUTCOME_REJECTED;
	}

	switch (post_json(c, "/api/v1/runs", json, len, &r)) {
	case DELIVERY_OK:
		progress_done("run %s stored (HTTP %ld)", run_id, r.status);
		out = OUTCOME_DELIVERED;
		break;
	case DELIVERY_REJECTED:
		err_msg("run %s rejected (HTTP %ld): %s", run_id, r.status, r.body);
		if (spool_reject(c->spool, run_id, NULL, json, len, &r))
			err_msg("cannot keep it in %s/%s/: %s", c->spool, SPOOL_REJECTED_DIR,
				strerror(errno));
		else
			err_msg("kept in %s/%s/%s.json", c->spool, SPOOL_REJECTED_DIR, run_id);
		out = OUTCOME_REJECTED;
		break;
	default:
		if (spool_put(c->spool, run_id, json, len, path, sizeof(path))) {
			err_msg("server unavailable (%s) and spool %s unwritable: %s; run %s lost",
				r.status ? "5xx" : r.error, c->spool, strerror(errno), run_id);
			out = OUTCOME_LOST;
		} else {
			if (r.status)
				err_msg("server answered HTTP %ld: %s", r.status, r.body);
			else
				err_msg("server unavailable: %s", r.error);
			err_msg("run %s spooled to %s; `kperf-collect flush` delivers it", run_id,
				path);
			out = OUTCOME_SPOOLED;
		}
		break;
	}
	post_result_release(&r);
	free(json);
	return out;
}
