/*
 * mmtests.c - directory formats: an mmtests results tree walked for the
 * logs a shellpack leaves (sysbench-raw-<threads>-<i> for sysbench), each
 * log parsed by the matching output parser into a run of its own.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/buf.h"
#include "collectors/base/cutil.h"
#include "collectors/parse/mmtests.h"
#include "collectors/parse/parse.h"

/* Directory levels below DIR searched (work/log/<run>/iter-N/sysbench/logs is 5). */
#define MMTESTS_DEPTH_MAX 8
/* Logs read from one tree. */
#define MMTESTS_FILES_MAX 100000
/* Largest log read. */
#define MMTESTS_LOG_MAX (64u * 1024u * 1024u)
/* Largest thread count, iteration and iter-N taken from a name. */
#define MMTESTS_NUMBER_MAX 999999999

const struct dir_format dir_formats[] = {
	{"mmtests-sysbench", "sysbench", mmtests_sysbench_read,
	 "mmtests results directory for sysbench (DIR; one run per sysbench-raw log)"},
	{NULL, NULL, NULL, NULL},
};

const struct dir_format *dir_format_find(const char *name)
{
	for (const struct dir_format *f = dir_formats; f->format; f++)
		if (!strcmp(f->format, name))
			return f;
	return NULL;
}

void dir_runs_init(struct dir_runs *r)
{
	r->runs = json_array();
	r->units = json_object();
	r->directions = json_object();
}

void dir_runs_release(struct dir_runs *r)
{
	json_decref(r->runs);
	json_decref(r->units);
	json_decref(r->directions);
	r->runs = r->units = r->directions = NULL;
}

struct found {
	char *path;
	int64_t iter, threads, inst;
};

struct walk {
	struct found *v;
	size_t n, cap;
	char *err;
	size_t errsz;
};

/* "<prefix><digits>" -> 0 and the number; -1 otherwise. */
static int number_after(const char *name, const char *prefix, int64_t *out)
{
	size_t pl = strlen(prefix);
	const char *p = name + pl;

	if (strncmp(name, prefix, pl) || !*p || strspn(p, "0123456789") != strlen(p))
		return -1;
	return cparse_int64(p, 0, MMTESTS_NUMBER_MAX, out);
}

/* "sysbench-raw-<threads>-<i>" (suffix ".gz" noted in *gz); 0 or -1. */
static int raw_name(const char *name, int64_t *threads, int64_t *inst, int *gz)
{
	static const char prefix[] = "sysbench-raw-";
	char buf[64];
	size_t n = strlen(name);
	char *dash;

	*gz = n > 3 && !strcmp(name + n - 3, ".gz");
	if (*gz)
		n -= 3;
	if (n >= sizeof(buf) || strncmp(name, prefix, sizeof(prefix) - 1))
		return -1;
	snprintf(buf, sizeof(buf), "%.*s", (int)(n - (sizeof(prefix) - 1)),
		 name + sizeof(prefix) - 1);
	dash = strchr(buf, '-');
	if (!dash || dash == buf || strchr(dash + 1, '-'))
		return -1;
	*dash = '\0';
	if (strspn(buf, "0123456789") != strlen(buf) ||
	    strspn(dash + 1, "0123456789") != strlen(dash + 1) ||
	    cparse_int64(buf, 0, MMTESTS_NUMBER_MAX, threads) ||
	    cparse_int64(dash + 1, 0, MMTESTS_NUMBER_MAX, inst))
		return -1;
	return 0;
}

static int walk_dir(struct walk *w, const char *dir, int depth, int64_t iter)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (!d) {
		snprintf(w->err, w->errsz, "%s: %s", dir, strerror(errno));
		return -1;
	}
	while (!rc && (e = readdir(d))) {
		struct buf path = BUF_INIT;
		struct stat st;
		int64_t threads, inst, n;
		int gz;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		buf_printf(&path, "%s/%s", dir, e->d_name);
		if (lstat(buf_str(&path), &st)) {
			/* vanished while we looked: not ours to judge */
		} else if (S_ISDIR(st.st_mode)) {
			if (depth < MMTESTS_DEPTH_MAX)
				rc = walk_dir(w, buf_str(&path), depth + 1,
					      number_after(e->d_name, "iter-", &n) ? iter : n);
		} else if (S_ISREG(st.st_mode) && !raw_name(e->d_name, &threads, &inst, &gz)) {
			if (gz) {
				snprintf(w->err, w->errsz,
					 "%s: compressed logs are not read (gunzip -r the directory)",
					 buf_str(&path));
				rc = -1;
			} else if (w->n == MMTESTS_FILES_MAX) {
				snprintf(w->err, w->errsz, "%s: more than %d sysbench logs", dir,
					 MMTESTS_FILES_MAX);
				rc = -1;
			} else {
				if (w->n == w->cap) {
					w->cap = w->cap ? 2 * w->cap : 16;
					w->v = xrealloc(w->v, w->cap * sizeof(*w->v));
				}
				w->v[w->n].path = xstrdup(buf_str(&path));
				w->v[w->n].iter = iter;
				w->v[w->n].threads = threads;
				w->v[w->n].inst = inst;
				w->n++;
			}
		}
		buf_release(&path);
	}
	closedir(d);
	return rc;
}

static int cmp_i64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

static int cmp_found(const void *pa, const void *pb)
{
	const struct found *a = pa, *b = pb;
	int c = cmp_i64(a->iter, b->iter);

	if (!c)
		c = cmp_i64(a->threads, b->threads);
	if (!c)
		c = cmp_i64(a->inst, b->inst);
	return c ? c : strcmp(a->path, b->path);
}

/* The run of one log into out; 0 or -1 with err set. */
static int read_one(const struct found *f, const char *tag, struct dir_runs *out, char *err,
		    size_t errsz)
{
	const struct parser *p = parser_find("sysbench");
	struct parse_ctx pc;
	char threads[24];
	size_t len;
	char *text = read_file(f->path, MMTESTS_LOG_MAX, &len);
	json_t *run;

	if (!text) {
		snprintf(err, errsz, "%s: %s", f->path, strerror(errno));
		return -1;
	}
	parse_ctx_init(&pc, f->path);
	if (parse_run(p, &pc, text, len)) {
		snprintf(err, errsz, "%s", pc.err);
		parse_ctx_release(&pc);
		free(text);
		return -1;
	}
	snprintf(threads, sizeof(threads), "%lld", (long long)f->threads);
	run = json_pack("{s:s, s:{s:s}, s:O}", "tag", tag, "params", "nr_threads", threads,
			"metrics", parse_metrics(&pc));
	json_array_append_new(out->runs, run);
	json_object_update(out->units, pc.units);
	json_object_update(out->directions, pc.directions);
	parse_ctx_release(&pc);
	free(text);
	return 0;
}

int mmtests_sysbench_read(const char *dir, struct dir_runs *out, char *err, size_t errsz)
{
	struct walk w = {NULL, 0, 0, err, errsz};
	json_t *seen = json_object(), *run;
	int64_t iter = 0;
	const char *base = strrchr(dir, '/');
	size_t i;
	int rc;

	/* DIR may itself be an iter-N directory */
	if (number_after(base ? base + 1 : dir, "iter-", &iter))
		iter = 0;
	json_array_foreach(out->runs, i, run)
		json_object_set_new(seen, json_string_value(json_object_get(run, "tag")),
				    json_string("an earlier directory"));
	rc = walk_dir(&w, dir, 0, iter);
	if (!rc && !w.n) {
		snprintf(err, errsz,
			 "%s: no sysbench-raw-<threads>-<iteration> logs under it (an mmtests "
			 "results directory: work/log/<run>)",
			 dir);
		rc = -1;
	}
	if (!rc)
		qsort(w.v, w.n, sizeof(*w.v), cmp_found);
	for (i = 0; !rc && i < w.n; i++) {
		char tag[64];
		json_t *before;

		snprintf(tag, sizeof(tag), "iter%lld-t%lld-%lld", (long long)w.v[i].iter,
			 (long long)w.v[i].threads, (long long)w.v[i].inst);
		if ((before = json_object_get(seen, tag))) {
			snprintf(err, errsz,
				 "%s: the same iteration as %s (iter-%lld, %lld threads, run %lld): "
				 "give one mmtests run directory at a time",
				 w.v[i].path, json_string_value(before), (long long)w.v[i].iter,
				 (long long)w.v[i].threads, (long long)w.v[i].inst);
			rc = -1;
			break;
		}
		json_object_set_new(seen, tag, json_string(w.v[i].path));
		rc = read_one(&w.v[i], tag, out, err, errsz);
	}
	for (i = 0; i < w.n; i++)
		free(w.v[i].path);
	free(w.v);
	json_decref(seen);
	return rc;
}
