/*
 * static.c - file serving for the dashboard. A path is refused when any
 * segment is "..", when it resolves outside the static directory (symlinks
 * included), or when it is not a regular file.
 */
#include <limits.h>
#include <linux/limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "static.h"
#include "util.h"

#define STATIC_FILE_MAX (16L * 1024 * 1024)

static const char *mime_of(const char *path)
{
	static const char *const map[][2] = {
		{".html", "text/html; charset=utf-8"},
		{".js", "text/javascript; charset=utf-8"},
		{".mjs", "text/javascript; charset=utf-8"},
		{".css", "text/css; charset=utf-8"},
		{".json", "application/json"},
		{".svg", "image/svg+xml"},
		{".png", "image/png"},
		{".ico", "image/x-icon"},
		{".yaml", "text/yaml; charset=utf-8"},
		{".map", "application/json"},
	};
	const char *dot = strrchr(path, '.');
	for (size_t i = 0; dot && i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(dot, map[i][0]))
			return map[i][1];
	return "application/octet-stream";
}

static int safe_relative(const char *p)
{
	const char *seg = p;

	if (!*p || *p == '/')
		return 0;
	for (;;) {
		size_t n = strcspn(seg, "/");
		if (n == 0 || (n == 2 && !strncmp(seg, "..", 2)) || (n == 1 && *seg == '.'))
			return 0;
		if (!seg[n])
			return 1;
		seg += n + 1;
	}
}

static void serve_file(struct request *rq, struct reply *rp, const char *rel);

void static_serve(struct request *rq, struct reply *rp)
{
	serve_file(rq, rp, rq->arg && *rq->arg ? rq->arg : "index.html");
}

void static_page(struct request *rq, struct reply *rp)
{
	/* the view's state lives in the URL; the page reads it in the browser */
	static const char *const pages[][2] = {
		{"/trend", "trend.html"},	  {"/compare", "compare.html"},
		{"/lru-lock", "lru-lock.html"},	  {"/mglru", "mglru.html"},
		{"/series/", "series.html"},	  {"/runs/", "run.html"},
		{"/regressions/", "regression.html"}, {"/subscriptions", "subscriptions.html"},
	};
	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		size_t n = strlen(pages[i][0]);
		if (!strncmp(rq->path, pages[i][0], n)) {
			serve_file(rq, rp, pages[i][1]);
			return;
		}
	}
	reply_error(rp, 404, "not_found", NULL, "no such page");
}

static void serve_file(struct request *rq, struct reply *rp, const char *rel)
{
	(void)rq; /* ETag and gzip negotiation come here */
	char want[PATH_MAX], root[PATH_MAX], real[PATH_MAX];
	struct stat st;
	FILE *f = NULL;
	size_t rootlen;

	if (!safe_relative(rel) || strchr(rel, '\\')) {
		reply_error(rp, 404, "not_found", NULL, "no such file");
		return;
	}
	if (!realpath(cfg.static_dir, root) ||
	    (size_t)snprintf(want, sizeof(want), "%s/%s", root, rel) >= sizeof(want) ||
	    !realpath(want, real)) {
		reply_error(rp, 404, "not_found", NULL, "no such file");
		return;
	}
	rootlen = strlen(root);
	if (strncmp(real, root, rootlen) || real[rootlen] != '/' || stat(real, &st) ||
	    !S_ISREG(st.st_mode) || st.st_size > STATIC_FILE_MAX || !(f = fopen(real, "rb"))) {
		reply_error(rp, 404, "not_found", NULL, "no such file");
		return;
	}
	{
		char chunk[65536];
		size_t n;
		while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
			buf_append(&rp->body, chunk, n);
	}
	fclose(f);
	rp->status = 200;
	rp->content_type = mime_of(real);
	rp->cache_control = "no-cache";
}
