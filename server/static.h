/*
 * static.h - the dashboard's files from cfg.static_dir: GET / and
 * GET /static/<path>, never outside that directory.
 */
#ifndef KPERF_STATIC_H
#define KPERF_STATIC_H

#include "http.h"

/* Serve rq->arg (a path under the static directory), or index.html for "/". */
void static_serve(struct request *rq, struct reply *rp);

/* Serve the page of a dashboard URL: /trend -> trend.html, /runs/X -> run.html... */
void static_page(struct request *rq, struct reply *rp);

#endif
