/*
 * static.h - the dashboard's files, read into memory once at start-up from
 * cfg.static_dir: served with ETag / 304, gzip when the client accepts it,
 * and never from anywhere else (no disk access, so no traversal, at request
 * time).
 */
#ifndef KPERF_STATIC_H
#define KPERF_STATIC_H

#include "server/http/http.h"

/* Load every regular file under dir (symlinks leaving it are skipped).
 * Returns the number of files, or -1 when dir cannot be read. */
int static_load(const char *dir);

/* Free what static_load read. */
void static_unload(void);

/* Serve rq->arg (a path under the static directory), or index.html for "/". */
void static_serve(struct request *rq, struct reply *rp);

/* Serve the page of a dashboard URL: /trend -> trend.html, /runs/X -> run.html... */
void static_page(struct request *rq, struct reply *rp);

#endif
