/*
 * spool.c - runs kept on disk until the server takes them. Every write is
 * write-to-dot-file + fsync + rename (cutil.c), so a crash leaves either the
 * whole run or none; flush takes an flock on a lock file, so two flushes
 * never send the same run at once (the server's idempotency covers the rest).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/buf.h"
#include "collectors/base/cutil.h"
#include "collectors/deliver/spool.h"

static int mkdir_p(const char *dir)
{
	char *p = xstrdup(dir);
	int rc = 0;

	for (char *s = p + 1; *s && !rc; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) && errno != EEXIST)
			rc = -1;
		*s = '/';
	}
	if (!rc && mkdir(p, 0755) && errno != EEXIST)
		rc = -1;
	free(p);
	return rc;
}

int spool_put(const char *dir, const char *run_id, const char *json, size_t len, char *path,
	      size_t pathsz)
{
	if (mkdir_p(dir))
		return -1;
	if ((size_t)snprintf(path, pathsz, "%s/%s.json", dir, run_id) >= pathsz) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return write_file_atomic(path, json, len);
}

int spool_reject(const char *dir, const char *run_id, const char *from, const char *json,
		 size_t len, const struct post_result *r)
{
	struct buf rej = BUF_INIT, to = BUF_INIT, answer = BUF_INIT, ans_path = BUF_INIT;
	int rc = -1;

	buf_printf(&rej, "%s/%s", dir, SPOOL_REJECTED_DIR);
	if (mkdir_p(buf_str(&rej)))
		goto out;
	buf_printf(&answer, "HTTP %ld\n%s\n", r->status, r->body ? r->body : "");
	buf_printf(&ans_path, "%s/%s.answer", buf_str(&rej), run_id);
	if (write_file_atomic(buf_str(&ans_path), answer.data, answer.len))
		goto out;
	buf_printf(&to, "%s/%s.json", buf_str(&rej), run_id);
	if (from)
		rc = rename(from, buf_str(&to));
	else
		rc = write_file_atomic(buf_str(&to), json, len);
out:
	buf_release(&rej);
	buf_release(&to);
	buf_release(&answer);
	buf_release(&ans_path);
	return rc;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The spooled runs' file names, sorted; NULL-terminated, caller frees all. */
static char **list_runs(const char *dir)
{
	size_t n = 0, cap = 16;
	char **names = xmalloc(cap * sizeof(char *));
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d) {
		free(names);
		return NULL;
	}
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (e->d_name[0] == '.' || len < 6 || strcmp(e->d_name + len - 5, ".json"))
			continue;
		if (n + 1 >= cap)
			names = xrealloc(names, (cap *= 2) * sizeof(char *));
		names[n++] = xstrdup(e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(char *), by_name);
	names[n] = NULL;
	return names;
}

int spool_flush(const struct collect_config *c, struct flush_stats *st)
{
	struct buf lock = BUF_INIT;
	char **names;
	int fd, stop = 0;

	memset(st, 0, sizeof(*st));
	if (mkdir_p(c->spool)) {
		err_msg("spool %s: %s", c->spool, strerror(errno));
		return -1;
	}
	buf_printf(&lock, "%s/%s", c->spool, SPOOL_LOCK_NAME);
	fd = open(buf_str(&lock), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		err_msg("lock file %s: %s", buf_str(&lock), strerror(errno));
		buf_release(&lock);
		return -1;
	}
	buf_release(&lock);
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		close(fd);
		return 1;
	}
	names = list_runs(c->spool);
	if (!names) {
		err_msg("spool %s: %s", c->spool, strerror(errno));
		close(fd);
		return -1;
	}
	for (char **n = names; *n; n++) {
		struct buf path = BUF_INIT;
		struct post_result r;
		char *run_id, *json;
		size_t len;

		if (stop) {
			st->pending++;
			continue;
		}
		buf_printf(&path, "%s/%s", c->spool, *n);
		json = read_file(buf_str(&path), 256u << 20, &len);
		if (!json) {
			/* another process took it meanwhile */
			buf_release(&path);
			continue;
		}
		run_id = xstrndup(*n, strlen(*n) - 5);
		switch (post_json(c, "/api/v1/runs", json, len, &r)) {
		case DELIVERY_OK:
			unlink(buf_str(&path));
			st->delivered++;
			printf("kperf-collect: delivered %s (HTTP %ld)\n", run_id, r.status);
			break;
		case DELIVERY_REJECTED:
			if (spool_reject(c->spool, run_id, buf_str(&path), NULL, 0, &r))
				err_msg("%s: cannot move to %s/: %s", buf_str(&path),
					SPOOL_REJECTED_DIR, strerror(errno));
			st->rejected++;
			err_msg("%s rejected (HTTP %ld): %s; kept in %s/%s/", run_id, r.status, r.body,
				c->spool, SPOOL_REJECTED_DIR);
			break;
		case DELIVERY_RETRY:
			st->pending++;
			if (r.status)
				err_msg("%s not taken now (HTTP %ld): %s", run_id, r.status, r.body);
			else
				err_msg("%s not sent: %s", run_id, r.error);
			stop = 1;
			break;
		}
		post_result_release(&r);
		free(run_id);
		free(json);
		buf_release(&path);
	}
	for (char **n = names; *n; n++)
		free(*n);
	free(names);
	close(fd); /* releases the lock */
	return 0;
}
