/*
 * commits.c - kernel commits from `git log` to POST /api/v1/commits. Fields
 * are separated by \x1f and commits by \x1e so subjects and bodies need no
 * escaping; --name-only lists the files after each commit's fields.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "collectors/commits.h"
#include "collectors/run/run.h"
#include "collectors/base/cutil.h"
#include "collectors/base/progress.h"
#include "collectors/base/runcmd.h"
#include "collectors/deliver/post.h"

/* %x1e starts a commit; sha, parents, subject, author, committer date, body. */
#define COMMITS_GIT_FORMAT "%x1e%H%x1f%P%x1f%s%x1f%an <%ae>%x1f%cI%x1f%b%x1f"
/* The server's limits on a commit. */
#define COMMIT_TEXT_MAX 1024
#define COMMIT_FILES_MAX 10000

static json_t *text_value(const char *s, size_t max)
{
	char *t = xstrndup(s, strnlen(s, max));
	json_t *v;

	/* cut on a character boundary so the value stays UTF-8 */
	for (size_t n = strlen(t); !(v = json_string(t)) && n > 0; n--)
		t[n - 1] = '\0';
	free(t);
	return v;
}

char *commits_message_id(const char *body)
{
	const char *line = body;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		char *l = xstrndup(line, n), *s = str_trim(l), *id = NULL;

		if (!strncasecmp(s, "Message-Id:", 11)) {
			char *v = str_trim(s + 11);
			if (*v)
				id = *v == '<' ? xstrdup(v) : NULL;
			if (*v && !id) {
				struct buf b = BUF_INIT;
				buf_printf(&b, "<%s>", v);
				id = buf_detach(&b, NULL);
			}
		} else if (!strncasecmp(s, "Link:", 5)) {
			/* https://lore.kernel.org/r/<id> or .../<list>/<id>/ or https://lkml.kernel.org/r/<id> */
			char *url = str_trim(s + 5), *at = strchr(url, '@'), *start, *end;
			if (at && strstr(url, "://")) {
				start = at;
				while (start > url && start[-1] != '/')
					start--;
				end = at;
				while (*end && *end != '/' && !isspace((unsigned char)*end))
					end++;
				if (end > at + 1 && start < at) {
					struct buf b = BUF_INIT;
					buf_printf(&b, "<%.*s>", (int)(end - start), start);
					id = buf_detach(&b, NULL);
				}
			}
		}
		free(l);
		if (id)
			return id;
		line = nl ? nl + 1 : NULL;
	}
	return NULL;
}

static int is_sha(const char *s, size_t n)
{
	if (n != 40)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

json_t *commits_parse(const char *text, size_t len, const struct commits_opts *o, char *err,
		      size_t errsz)
{
	json_t *list = json_array();
	const char *p = text, *end = text + len;
	size_t no = 0;

	while (p < end) {
		const char *rec = memchr(p, '\x1e', (size_t)(end - p)), *next;
		const char *f[6];
		size_t flen[6];
		const char *q;
		json_t *c, *files;
		char *body, *mid;

		if (!rec)
			break;
		rec++;
		next = memchr(rec, '\x1e', (size_t)(end - rec));
		if (!next)
			next = end;
		no++;
		q = rec;
		for (int i = 0; i < 6; i++) {
			const char *us = memchr(q, '\x1f', (size_t)(next - q));
			if (!us) {
				snprintf(err, errsz, "git log output: commit %zu has %d fields, not 6",
					 no, i);
				json_decref(list);
				return NULL;
			}
			f[i] = q;
			flen[i] = (size_t)(us - q);
			q = us + 1;
		}
		if (!is_sha(f[0], flen[0])) {
			snprintf(err, errsz, "git log output: commit %zu has no sha", no);
			json_decref(list);
			return NULL;
		}
		c = json_object();
		json_object_set_new(c, "sha", json_stringn(f[0], 40));
		if (flen[1] >= 40 && is_sha(f[1], 40))
			json_object_set_new(c, "parent", json_stringn(f[1], 40));
		{
			char *s = xstrndup(f[2], flen[2]);
			json_t *v = text_value(s, COMMIT_TEXT_MAX);
			if (v)
				json_object_set_new(c, "subject", v);
			free(s);
			s = xstrndup(f[3], flen[3]);
			if ((v = text_value(s, COMMIT_TEXT_MAX)))
				json_object_set_new(c, "author", v);
			free(s);
		}
		if (flen[4] >= 19)
			json_object_set_new(c, "date", json_stringn(f[4], flen[4]));
		if (o->branch)
			json_object_set_new(c, "branch", json_string(o->branch));
		if (o->series)
			json_object_set_new(c, "series", json_string(o->series));
		body = xstrndup(f[5], flen[5]);
		mid = commits_message_id(body);
		if (mid) {
			json_t *v = text_value(mid, COMMIT_TEXT_MAX);
			if (v)
				json_object_set_new(c, "message_id", v);
		}
		free(mid);
		free(body);
		/* the files: NUL- or newline-separated names after the fields */
		files = json_array();
		while (q < next && json_array_size(files) < COMMIT_FILES_MAX) {
			const char *e = q;
			while (e < next && *e != '\0' && *e != '\n')
				e++;
			if (e > q && (size_t)(e - q) <= 4096) {
				json_t *v = json_stringn(q, (size_t)(e - q));
				if (v)
					json_array_append_new(files, v);
			}
			q = e + 1;
		}
		json_object_set_new(c, "files", files);
		/* git log prints newest first: insert at the front for oldest first */
		json_array_insert_new(list, 0, c);
		p = next;
	}
	return list;
}

/* `git -C dir log ...` output into out; returns 0 or -1 with a message. */
static int git_log(const struct commits_opts *o, struct buf *out)
{
	const char *argv[] = {"git", "-C", o->git_dir, "log", "-z", "--first-parent",
			      "--name-only", "--no-renames", "--format=" COMMITS_GIT_FORMAT,
			      o->range, "--", NULL};
	struct runcmd c;
	int st;

	runcmd_init(&c);
	c.argv = argv;
	c.out = RUNCMD_OUT_CAPTURE;
	c.out_buf = out;
	c.exec_error_prefix = "kperf-collect: ";
	st = runcmd_run(&c);
	if (st < 0)
		return -1;
	if (st) {
		err_msg("git log %s in %s failed with status %d", o->range, o->git_dir, st);
		return -1;
	}
	return 0;
}

int commits_command(const struct collect_config *c, const struct commits_opts *o)
{
	struct buf log = BUF_INIT;
	json_t *list;
	char err[256];
	size_t n;
	int rc = 0;

	if (git_log(o, &log)) {
		buf_release(&log);
		return EXIT_USAGE;
	}
	list = commits_parse(buf_str(&log), log.len, o, err, sizeof(err));
	buf_release(&log);
	if (!list) {
		err_msg("%s", err);
		return EXIT_USAGE;
	}
	n = json_array_size(list);
	if (!n) {
		progress_say("no commits in %s", o->range);
		json_decref(list);
		return 0;
	}
	if (!o->dry_run)
		progress_say("%zu commits in %s (first parent), %zu per request", n, o->range,
			     (size_t)COMMITS_PER_POST);
	for (size_t i = 0; i < n && !rc; i += COMMITS_PER_POST) {
		json_t *chunk = json_array(), *body = json_object();
		struct post_result r;
		char *s;

		for (size_t j = i; j < n && j < i + COMMITS_PER_POST; j++)
			json_array_append(chunk, json_array_get(list, j));
		json_object_set_new(body, "commits", chunk);
		s = json_dumps(body, JSON_COMPACT | (o->dry_run ? JSON_INDENT(2) : 0));
		if (o->dry_run) {
			printf("%s\n", s);
		} else {
			switch (post_json(c, "/api/v1/commits", s, strlen(s), &r)) {
			case DELIVERY_OK:
				progress_done("%zu commits stored (HTTP %ld): %zu of %zu",
					      json_array_size(chunk), r.status,
					      i + json_array_size(chunk), n);
				break;
			case DELIVERY_REJECTED:
				err_msg("commits rejected (HTTP %ld): %s", r.status, r.body);
				rc = EXIT_REJECTED;
				break;
			case DELIVERY_RETRY:
				err_msg("commits not delivered: %s",
					r.status ? r.body : r.error);
				rc = EXIT_LOST;
				break;
			}
			post_result_release(&r);
		}
		free(s);
		json_decref(body);
	}
	json_decref(list);
	return rc;
}
