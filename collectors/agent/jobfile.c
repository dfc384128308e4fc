/*
 * jobfile.c - jobs as kperfd sends them and the agent's state file
 * (jobfile.h). A claim's answer is input like any other: every field is
 * checked before the agent acts on it, and a bad one is named.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectors/base/cutil.h"
#include "collectors/agent/jobfile.h"
#include "collectors/agent/kswitch.h"

/* Bytes of a state file: a job object is small. */
#define JOBFILE_MAX (1u << 20)
/* Keys of a job's params or variant: kperfd's limit on a map. */
#define JOB_MAP_KEYS 1000

static const char *const phase_names[] = {"claimed", "hook", "booting", "running"};

const char *job_phase_name(enum job_phase ph)
{
	return phase_names[ph];
}

int job_int(const json_t *v, long min, long max, long *out)
{
	double d;

	if (!json_is_number(v))
		return -1;
	d = json_number_value(v);
	if (d != floor(d) || d < (double)min || d > (double)max)
		return -1;
	*out = (long)d;
	return 0;
}

/* A copy of an object of strings with keys and values as kperfd's, or NULL. */
static json_t *string_map(json_t *v)
{
	const char *k;
	json_t *x;

	if (!v || json_is_null(v))
		return json_object();
	if (!json_is_object(v) || json_object_size(v) > JOB_MAP_KEYS)
		return NULL;
	json_object_foreach(v, k, x)
		if (!*k || strlen(k) > CATALOGUE_KEY_MAX || !json_is_string(x) ||
		    json_string_length(x) > CATALOGUE_VALUE_MAX)
			return NULL;
	return json_deep_copy(v);
}

static int bad(struct job *j, char *err, size_t errsz, const char *msg)
{
	snprintf(err, errsz, "%s", msg);
	job_release(j);
	return -1;
}

static int printable(const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0;

	if (!n || n > max)
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s == 0x7f)
			return 0;
	return 1;
}

/* job.series, when present: 0 (s filled or absent), -1 with err. */
static int series_parse(json_t *v, struct job_series *s, char *err, size_t errsz)
{
	const char *inbox, *msgid, *base, *name;
	long patches, version;

	memset(s, 0, sizeof(*s));
	if (!v || json_is_null(v))
		return 0;
	inbox = json_string_value(json_object_get(v, "inbox"));
	msgid = json_string_value(json_object_get(v, "message_id"));
	base = json_string_value(json_object_get(v, "base"));
	name = json_string_value(json_object_get(v, "name"));
	if (!json_is_object(v) || !printable(inbox, sizeof(s->inbox) - 1) ||
	    (strncmp(inbox, "http://", 7) && strncmp(inbox, "https://", 8)))
		return snprintf(err, errsz, "job.series.inbox: expected an http(s) URL"), -1;
	if (!printable(msgid, sizeof(s->message_id) - 1) || strchr(msgid, '<') ||
	    strchr(msgid, '>') || *msgid == '-')
		return snprintf(err, errsz, "job.series.message_id: expected a Message-ID"), -1;
	if (!base || !kswitch_hex40(base))
		return snprintf(err, errsz, "job.series.base: expected 40 hex digits"), -1;
	if (!name || !*name || strlen(name) >= sizeof(s->name))
		return snprintf(err, errsz, "job.series.name: expected the series' name"), -1;
	if (job_int(json_object_get(v, "patches"), 1, 500, &patches) ||
	    job_int(json_object_get(v, "version"), 1, 1000, &version))
		return snprintf(err, errsz, "job.series.patches, version: expected whole numbers"), -1;
	s->present = 1;
	snprintf(s->inbox, sizeof(s->inbox), "%s", inbox);
	snprintf(s->message_id, sizeof(s->message_id), "%s", msgid);
	for (int i = 0; i < 40; i++)
		s->base[i] = (char)(base[i] | 0x20);
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->patches = patches;
	s->version = version;
	return 0;
}

int job_parse(json_t *o, struct job *j, char *err, size_t errsz)
{
	json_t *v;
	const char *s;

	memset(j, 0, sizeof(*j));
	j->lease_s = 1800;
	if (!json_is_object(o))
		return bad(j, err, errsz, "job: expected an object");
	if (job_int(json_object_get(o, "id"), 1, 9007199254740991L, &j->id))
		return bad(j, err, errsz, "job.id: expected a whole number from 1");
	v = json_object_get(o, "commit");
	if (v && !json_is_null(v)) {
		if (!json_is_string(v) || !kswitch_hex40(json_string_value(v)))
			return bad(j, err, errsz, "job.commit: expected 40 hex digits or null");
		for (int i = 0; i < 40; i++)
			j->commit[i] = (char)(json_string_value(v)[i] | 0x20);
	}
	v = json_object_get(o, "release");
	if (v && !json_is_null(v)) {
		if (!json_is_string(v) || !kswitch_release_ok(json_string_value(v)))
			return bad(j, err, errsz,
				   "job.release: expected 1-128 printable characters or null");
		snprintf(j->release, sizeof(j->release), "%s", json_string_value(v));
	}
	if (series_parse(json_object_get(o, "series"), &j->series, err, errsz)) {
		job_release(j);
		return -1;
	}
	if (!j->commit[0] && !j->release[0] && !j->series.present)
		return bad(j, err, errsz, "job.commit: neither a commit nor a release is given");
	s = json_string_value(json_object_get(o, "suite"));
	if (!s || !*s || strlen(s) > CATALOGUE_NAME_MAX ||
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
		    strlen(s))
		return bad(j, err, errsz, "job.suite: expected 1-64 of A-Za-z0-9._-");
	snprintf(j->suite, sizeof(j->suite), "%s", s);
	if (!(j->params = string_map(json_object_get(o, "params"))))
		return bad(j, err, errsz, "job.params: expected an object of short strings");
	if (!(j->variant = string_map(json_object_get(o, "variant"))))
		return bad(j, err, errsz, "job.variant: expected an object of short strings");
	if (job_int(json_object_get(o, "runs"), 0, 100, &j->runs))
		return bad(j, err, errsz, "job.runs: expected a whole number from 0 to 100");
	v = json_object_get(o, "lease_s");
	if (v && !json_is_null(v) && job_int(v, 2, 86400, &j->lease_s))
		return bad(j, err, errsz, "job.lease_s: expected a whole number from 2 to 86400");
	j->json = json_deep_copy(o);
	return 0;
}

void job_release(struct job *j)
{
	json_decref(j->params);
	json_decref(j->variant);
	json_decref(j->json);
	memset(j, 0, sizeof(*j));
}

void job_text(const struct job *j, char *out, size_t outsz)
{
	snprintf(out, outsz, "commit %s (release %s)", j->commit[0] ? j->commit : "unknown",
		 j->release[0] ? j->release : "unknown");
}

int jobfile_save(const struct jobfile *f, const struct job *j, enum job_phase ph)
{
	json_t *s = json_pack("{s:i,s:s,s:s,s:s,s:O}", "version", 1, "server", f->server,
			      "machine", f->machine, "phase", phase_names[ph], "job", j->json);
	char *text = json_dumps(s, JSON_INDENT(1));
	int rc = write_file_atomic(f->path, text, strlen(text));

	if (rc)
		err_msg("state %s: %s", f->path, strerror(errno));
	free(text);
	json_decref(s);
	return rc;
}

void jobfile_remove(const struct jobfile *f)
{
	if (unlink(f->path) && errno != ENOENT)
		err_msg("state %s: %s", f->path, strerror(errno));
}

enum jobfile_load jobfile_load(const struct jobfile *f, struct job *j, enum job_phase *ph)
{
	enum jobfile_load rc = JOBFILE_BROKEN;
	json_error_t je;
	json_t *s, *v;
	const char *p, *srv, *mach;
	char why[300];
	size_t len, i;
	char *text = read_file(f->path, JOBFILE_MAX, &len);

	memset(j, 0, sizeof(*j));
	if (!text) {
		if (errno == ENOENT)
			return JOBFILE_NONE;
		err_msg("state %s: %s", f->path, strerror(errno));
		return JOBFILE_BROKEN;
	}
	s = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	free(text);
	if (!s) {
		err_msg("state %s:%d: %s; remove it to start afresh", f->path, je.line, je.text);
		return JOBFILE_BROKEN;
	}
	p = json_string_value(json_object_get(s, "phase"));
	srv = json_string_value(json_object_get(s, "server"));
	mach = json_string_value(json_object_get(s, "machine"));
	v = json_object_get(s, "version");
	for (i = 0; p && i < sizeof(phase_names) / sizeof(*phase_names); i++)
		if (!strcmp(p, phase_names[i]))
			break;
	if (!json_is_integer(v) || json_integer_value(v) != 1 || !srv || !mach || !p ||
	    i == sizeof(phase_names) / sizeof(*phase_names)) {
		err_msg("state %s: not a version 1 agent state (version, server, machine, phase); "
			"remove it to start afresh",
			f->path);
		goto out;
	}
	*ph = (enum job_phase)i;
	if (job_parse(json_object_get(s, "job"), j, why, sizeof(why))) {
		err_msg("state %s: %s; remove it to start afresh", f->path, why);
		goto out;
	}
	if (strcmp(srv, f->server) || strcmp(mach, f->machine)) {
		err_msg("state %s holds job %ld of machine %s at %s, and this agent is %s at %s: "
			"remove the file or give another --state",
			f->path, j->id, mach, srv, f->machine, f->server);
		job_release(j);
		rc = JOBFILE_FOREIGN;
		goto out;
	}
	rc = JOBFILE_FOUND;
out:
	json_decref(s);
	return rc;
}
