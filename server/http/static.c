/*
 * static.c - file serving for the dashboard from an in-memory table built at
 * start-up: each file with its MIME type, a content hash for ETag and, for
 * text, a gzip copy. A request names a table entry or gets 404.
 */
#include <dirent.h>
#include <limits.h>
#include <microhttpd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "server/http/static.h"
#include "lib/util.h"

#define STATIC_FILE_MAX (16L * 1024 * 1024)
#define STATIC_FILES_MAX 4096
#define STATIC_GZIP_MIN 1024

struct static_file {
	char *path; /* relative to the static directory */
	char *data, *gz;
	size_t len, gzlen;
	const char *mime;
	char etag[24];
};

static struct static_file *files;
static size_t nfiles;

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
		{".txt", "text/plain; charset=utf-8"},
	};
	const char *dot = strrchr(path, '.');
	for (size_t i = 0; dot && i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(dot, map[i][0]))
			return map[i][1];
	return "application/octet-stream";
}

static int compressible(const char *mime)
{
	return !strncmp(mime, "text/", 5) || !strcmp(mime, "application/json") ||
	       !strcmp(mime, "image/svg+xml");
}

/* gzip (RFC 1952) of data; NULL when it would not be smaller. */
static char *gzip_of(const char *data, size_t len, size_t *out)
{
	z_stream z;
	size_t cap = len + len / 1000 + 64;
	char *buf = xmalloc(cap);

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(buf);
		return NULL;
	}
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)buf;
	z.avail_out = (uInt)cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END || z.total_out >= len) {
		deflateEnd(&z);
		free(buf);
		return NULL;
	}
	*out = z.total_out;
	deflateEnd(&z);
	return buf;
}

static void add_file(const char *rel, const char *full, off_t size)
{
	struct static_file *f;
	FILE *in;

	if (nfiles >= STATIC_FILES_MAX || size > STATIC_FILE_MAX || !(in = fopen(full, "rb")))
		return;
	files = xrealloc(files, (nfiles + 1) * sizeof(*files));
	f = &files[nfiles];
	memset(f, 0, sizeof(*f));
	f->data = xmalloc((size_t)size + 1);
	f->len = fread(f->data, 1, (size_t)size, in);
	fclose(in);
	f->path = xstrdup(rel);
	f->mime = mime_of(rel);
	snprintf(f->etag, sizeof(f->etag), "\"%016llx\"",
		 (unsigned long long)hash64(f->data, f->len));
	if (compressible(f->mime) && f->len >= STATIC_GZIP_MIN)
		f->gz = gzip_of(f->data, f->len, &f->gzlen);
	nfiles++;
}

static void walk(const char *root, const char *rel, int depth)
{
	char dir[PATH_MAX];
	DIR *d;
	struct dirent *e;

	if (depth > 8 ||
	    (size_t)snprintf(dir, sizeof(dir), "%s%s%s", root, *rel ? "/" : "", rel) >= sizeof(dir))
		return;
	if (!(d = opendir(dir)))
		return;
	while ((e = readdir(d))) {
		char full[PATH_MAX], sub[PATH_MAX], real[PATH_MAX];
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(full, sizeof(full), "%s/%s", dir, e->d_name) >= sizeof(full) ||
		    (size_t)snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", e->d_name) >=
			    sizeof(sub) ||
		    !realpath(full, real) || strncmp(real, root, strlen(root)) || stat(real, &st))
			continue;
		if (S_ISDIR(st.st_mode))
			walk(root, sub, depth + 1);
		else if (S_ISREG(st.st_mode))
			add_file(sub, real, st.st_size);
	}
	closedir(d);
}

int static_load(const char *dir)
{
	char root[PATH_MAX];

	static_unload();
	if (!realpath(dir, root))
		return -1;
	walk(root, "", 0);
	return (int)nfiles;
}

void static_unload(void)
{
	for (size_t i = 0; i < nfiles; i++) {
		free(files[i].path);
		free(files[i].data);
		free(files[i].gz);
	}
	free(files);
	files = NULL;
	nfiles = 0;
}

static const struct static_file *find(const char *rel)
{
	for (size_t i = 0; i < nfiles; i++)
		if (!strcmp(files[i].path, rel))
			return &files[i];
	return NULL;
}

static int accepts_gzip(struct request *rq)
{
	const char *ae = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_ACCEPT_ENCODING);
	return ae && strstr(ae, "gzip");
}

static void serve_file(struct request *rq, struct reply *rp, const char *rel)
{
	const struct static_file *f = find(rel);
	const char *inm;

	if (!f) {
		reply_error(rp, 404, "not_found", NULL, "no such file");
		return;
	}
	rp->etag = f->etag;
	rp->content_type = f->mime;
	rp->vary_encoding = f->gz != NULL;
	/* third-party code from npm changes only with a new build: cache a day */
	rp->cache_control = !strncmp(rel, "vendor/", 7) ? "public, max-age=86400" : "no-cache";
	inm = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
	if (inm && (!strcmp(inm, f->etag) || strstr(inm, f->etag))) {
		rp->status = 304;
		return;
	}
	rp->status = 200;
	if (f->gz && accepts_gzip(rq)) {
		buf_append(&rp->body, f->gz, f->gzlen);
		rp->encoding = "gzip";
	} else {
		buf_append(&rp->body, f->data, f->len);
	}
}

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
		{"/jobs", "jobs.html"},
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
