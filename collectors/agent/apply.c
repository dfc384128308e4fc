/*
 * apply.c - a job's kernel in the agent's git tree (see apply.h).
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collectors/agent/apply.h"
#include "collectors/base/runcmd.h"
#include "collectors/deliver/post.h"
#include "lib/buf.h"
#include "lib/kperf_limits.h"

#define APPLY_OUTPUT_MAX (64 * 1024)

/* Run argv in the tree; 0, or its exit status with its output in out. */
static int git(const struct apply_opts *o, const char *const *argv, const char *const *env,
	       struct buf *out)
{
	struct runcmd r;
	int st;

	runcmd_init(&r);
	r.argv = argv;
	r.env = env;
	r.dir = o->tree;
	r.in = RUNCMD_IN_NULL;
	r.out = RUNCMD_OUT_CAPTURE;
	r.err = RUNCMD_OUT_MERGE;
	r.out_buf = out;
	r.cap = APPLY_OUTPUT_MAX;
	r.keep_tail = 1;
	r.timeout_ms = APPLY_TIMEOUT_S * 1000L;
	r.new_group = 1;
	st = runcmd_run(&r);
	if (st < 0) {
		buf_printf(out, "cannot run %s: %s", argv[0], strerror(errno));
		return 127;
	}
	if (r.timed_out)
		buf_printf(out, "\n%s did not end within %d s", argv[0], APPLY_TIMEOUT_S);
	return st;
}

/* The last non-empty line of text, at most max bytes, into out. */
static void last_lines(const char *text, size_t max, char *out, size_t cap)
{
	size_t n = text ? strlen(text) : 0;

	while (n && (text[n - 1] == '\n' || text[n - 1] == ' '))
		n--;
	if (n > max) {
		text += n - max;
		n = max;
	}
	snprintf(out, cap, "%.*s", (int)n, text ? text : "");
	for (char *p = out; *p; p++)
		if (*p == '\n')
			*p = ' ';
}

static int inbox_allowed(const struct apply_opts *o, const char *url)
{
	size_t n = strlen(url);

	for (size_t i = 0; i < o->ninboxes; i++) {
		size_t m = strlen(o->inboxes[i]);
		if (!strcmp(o->inboxes[i], url) ||
		    (m + 1 == n && url[m] == '/' && !strncmp(o->inboxes[i], url, m)))
			return 1;
	}
	return 0;
}

static int checkout(const struct apply_opts *o, const char *sha, char *why, size_t whylen,
		    int *final, int is_base)
{
	char rev[64], tail[400];
	const char *exists[] = {"git", "cat-file", "-e", rev, NULL};
	const char *abort_am[] = {"git", "am", "--abort", NULL};
	const char *co[] = {"git", "checkout", "-q", "-f", "--detach", sha, NULL};
	struct buf out = BUF_INIT;
	int st;

	snprintf(rev, sizeof(rev), "%s^{commit}", sha);
	if (git(o, exists, NULL, &out)) {
		snprintf(why, whylen, "%s %s does not exist in the tree %s", is_base ? "base" : "commit",
			 sha, o->tree);
		*final = is_base;
		buf_release(&out);
		return -1;
	}
	buf_reset(&out);
	git(o, abort_am, NULL, &out); /* a failed `git am` before: its state goes */
	buf_reset(&out);
	st = git(o, co, NULL, &out);
	if (st) {
		last_lines(buf_str(&out), 300, tail, sizeof(tail));
		snprintf(why, whylen, "git checkout %s in %s exited %d: %s", sha, o->tree, st, tail);
	}
	buf_release(&out);
	return st ? -1 : 0;
}

/* The one .mbx b4 wrote into dir, into path. */
static int find_mbx(const char *dir, char *path, size_t cap)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strlen(e->d_name) > 4 && !strcmp(e->d_name + strlen(e->d_name) - 4, ".mbx")) {
			if ((size_t)snprintf(path, cap, "%s/%s", dir, e->d_name) >= cap)
				found++; /* a path cut short: not the one file */
			found++;
		}
	closedir(d);
	return found == 1 ? 0 : -1;
}

/* The Message-IDs of the mailbox's messages, in order, into ids (n of them). */
static int mbx_ids(const char *path, char ids[][1000], int max)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int n = 0, headers = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "From ", 5)) {
			headers = 1;
			continue;
		}
		if (headers && (line[0] == '\n' || (line[0] == '\r' && line[1] == '\n'))) {
			headers = 0;
			continue;
		}
		if (headers && !strncasecmp(line, "Message-ID:", 11) && n < max) {
			char *lt = strchr(line, '<'), *gt = lt ? strchr(lt, '>') : NULL;
			if (lt && gt) {
				snprintf(ids[n++], 1000, "%.*s", (int)(gt - lt - 1), lt + 1);
			}
		}
	}
	fclose(f);
	return n;
}

/* The commits base..HEAD as kperfd's commits, with their patches' ids. */
static json_t *made_commits(const struct apply_opts *o, const struct job *j, char ids[][1000],
			    int nids, json_t **shas, char *why, size_t whylen)
{
	char range[100];
	const char *log[] = {"git", "log", "--reverse", "--format=%H%x1f%P%x1f%s%x1f%an <%ae>%x1f%aI",
			     range, NULL};
	struct buf out = BUF_INIT;
	json_t *list = json_array();
	char series[1100];
	int i = 0;

	*shas = json_array();
	snprintf(range, sizeof(range), "%s..HEAD", j->series.base);
	snprintf(series, sizeof(series), "%s v%ld", j->series.name, j->series.version);
	if (git(o, log, NULL, &out)) {
		snprintf(why, whylen, "git log %s failed", range);
		goto bad;
	}
	for (char *line = out.data ? out.data : "", *next; *line; line = next, i++) {
		char *f[5] = {0};
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = '\0';
		f[0] = line;
		for (int k = 1; k < 5 && f[k - 1]; k++) {
			char *sep = strchr(f[k - 1], '\x1f');
			if (sep) {
				*sep = '\0';
				f[k] = sep + 1;
			}
		}
		if (!f[4] || i >= nids) {
			snprintf(why, whylen, "the tree holds other commits on %s than the %ld patches",
				 j->series.base, j->series.patches);
			goto bad;
		}
		json_array_append_new(list, json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "sha", f[0],
						      "parent", f[1], "subject", f[2], "author", f[3],
						      "date", f[4], "series", series, "message_id",
						      ids[i]));
		json_array_append_new(*shas, json_string(f[0]));
	}
	if (i != j->series.patches) {
		snprintf(why, whylen, "%d commits were made, not %ld", i, j->series.patches);
		goto bad;
	}
	buf_release(&out);
	return list;
bad:
	buf_release(&out);
	json_decref(list);
	json_decref(*shas);
	*shas = NULL;
	return NULL;
}

static int post(const struct collect_config *c, const char *path, json_t *doc, char *why,
		size_t whylen)
{
	char *text = json_dumps(doc, JSON_COMPACT);
	struct post_result r;
	long st = post_request(c, "POST", path, text, strlen(text), c->timeout_s, NULL, NULL, &r);

	if (st != 200 && st != 201)
		snprintf(why, whylen, "POST %s answered %ld: %.300s", path, st,
			 st ? r.body : r.error);
	post_result_release(&r);
	free(text);
	return st == 200 || st == 201 ? 0 : -1;
}

static int apply_series(const struct collect_config *c, const struct apply_opts *o,
			const struct job *j, char *why, size_t whylen, int *final)
{
	char dir[4200], mbx[4400], range[32], version[24], mask[1100], tail[600];
	char (*ids)[1000] = NULL;
	const char *env[] = {"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=b4.midmask", mask,
			     "GIT_CONFIG_KEY_1=b4.attestation-policy", "GIT_CONFIG_VALUE_1=off",
			     "GIT_COMMITTER_NAME=" APPLY_COMMITTER_NAME,
			     "GIT_COMMITTER_EMAIL=" APPLY_COMMITTER_EMAIL, NULL};
	const char *b4[] = {"b4", "-n", "am", "-C", "-T", "-v", version, "-P", range, "-o", dir,
			    j->series.message_id, NULL};
	const char *am[] = {"git", "am", "--committer-date-is-author-date", mbx, NULL};
	const char *abort_am[] = {"git", "am", "--abort", NULL};
	struct buf out = BUF_INIT;
	json_t *commits = NULL, *shas = NULL, *doc;
	int st, n, rc = -1;
	size_t len = strlen(j->series.inbox);

	/* b4's midmask names the message by path under the inbox: "URL/%s" */
	snprintf(mask, sizeof(mask), "GIT_CONFIG_VALUE_0=%s%s%%s", j->series.inbox,
		 len && j->series.inbox[len - 1] == '/' ? "" : "/");
	snprintf(range, sizeof(range), "1-%ld", j->series.patches);
	snprintf(version, sizeof(version), "%ld", j->series.version);
	snprintf(dir, sizeof(dir), "%s/b4.%ld", o->work_dir, j->id);
	{
		const char *rm[] = {"rm", "-rf", dir, NULL};
		git(o, rm, NULL, &out);
		buf_reset(&out);
	}
	if (mkdir(dir, 0700)) {
		snprintf(why, whylen, "cannot make %s: %s", dir, strerror(errno));
		return -1;
	}
	st = git(o, b4, env, &out);
	if (st || find_mbx(dir, mbx, sizeof(mbx))) {
		last_lines(buf_str(&out), 400, tail, sizeof(tail));
		snprintf(why, whylen, "b4 am %s from %s exited %d: %s", j->series.message_id,
			 j->series.inbox, st, tail);
		goto out;
	}
	ids = calloc(LIMIT_SERIES_PATCHES, sizeof(*ids));
	n = ids ? mbx_ids(mbx, ids, LIMIT_SERIES_PATCHES) : -1;
	buf_reset(&out);
	st = git(o, am, env, &out);
	if (st) {
		last_lines(buf_str(&out), 500, tail, sizeof(tail));
		snprintf(why, whylen, "does not apply on %.12s: git am says: %s", j->series.base, tail);
		*final = 1;
		buf_reset(&out);
		git(o, abort_am, NULL, &out);
		goto out;
	}
	if (!(commits = made_commits(o, j, ids, n, &shas, why, whylen)))
		goto out;
	if (post(c, "/api/v1/commits", commits, why, whylen))
		goto out;
	{
		char path[64];
		snprintf(path, sizeof(path), "/api/v1/jobs/%ld/applied", j->id);
		doc = json_pack("{s:O}", "commits", shas);
		rc = post(c, path, doc, why, whylen);
		json_decref(doc);
	}
out:
	free(ids);
	json_decref(commits);
	json_decref(shas);
	buf_release(&out);
	return rc;
}

int apply_job(const struct collect_config *c, const struct apply_opts *o, const struct job *j,
	      char head[41], char *why, size_t whylen, int *final)
{
	const char *rev[] = {"git", "rev-parse", "HEAD", NULL};
	struct buf out = BUF_INIT;
	int rc;

	*final = 0;
	head[0] = '\0';
	if (!j->series.present) {
		if (!j->commit[0]) {
			snprintf(why, whylen, "the job names no commit to check out in %s", o->tree);
			return -1;
		}
		if (checkout(o, j->commit, why, whylen, final, 0))
			return -1;
		snprintf(head, 41, "%s", j->commit);
		return 0;
	}
	if (!inbox_allowed(o, j->series.inbox)) {
		snprintf(why, whylen, "the job's series comes from %s, which is none of this agent's"
			 " --inbox", j->series.inbox);
		*final = 1;
		return -1;
	}
	if (checkout(o, j->series.base, why, whylen, final, 1) ||
	    apply_series(c, o, j, why, whylen, final))
		return -1;
	rc = git(o, rev, NULL, &out);
	if (rc || out.len < 40) {
		snprintf(why, whylen, "git rev-parse HEAD failed in %s", o->tree);
		buf_release(&out);
		return -1;
	}
	snprintf(head, 41, "%.40s", out.data);
	buf_release(&out);
	if (j->commit[0] && strcmp(head, j->commit)) {
		snprintf(why, whylen, "applying %ld patches on %.12s made %s, not the job's %s",
			 j->series.patches, j->series.base, head, j->commit);
		return -1;
	}
	return 0;
}

int apply_checkout(const struct apply_opts *o, const char *sha, char *why, size_t whylen)
{
	int final = 0;

	return checkout(o, sha, why, whylen, &final, 0);
}

int apply_series_commits(const struct apply_opts *o, const char *base, char (*shas)[41], int max)
{
	char range[96];
	const char *argv[] = {"git", "rev-list", "--reverse", range, NULL};
	struct buf out = BUF_INIT;
	const char *p;
	int n = 0;

	snprintf(range, sizeof(range), "%.40s..HEAD", base);
	if (git(o, argv, NULL, &out)) {
		buf_release(&out);
		return -1;
	}
	for (p = buf_str(&out); *p && n < max; n++) {
		size_t len = strcspn(p, "\n");
		if (len != 40)
			break;
		snprintf(shas[n], 41, "%.40s", p);
		p += len + (p[len] == '\n');
	}
	buf_release(&out);
	return n;
}
