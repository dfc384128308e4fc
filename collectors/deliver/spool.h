/*
 * spool.h - the spool directory: runs waiting for the server, one file per
 * run (<run_id>.json, written to a dot-file and renamed, so readers never see
 * half a run), rejected/ for runs the server refused for good (each beside
 * <run_id>.answer holding the server's answer), and the flush that resends
 * them under a lock file so cron and a person can both run it.
 */
#ifndef KPERF_SPOOL_H
#define KPERF_SPOOL_H

#include <stddef.h>

#include "collectors/base/config.h"
#include "collectors/deliver/post.h"

/* The lock file flush holds, inside the spool directory. */
#define SPOOL_LOCK_NAME ".flush.lock"
#define SPOOL_REJECTED_DIR "rejected"

/*
 * Write json (len bytes) as <dir>/<run_id>.json atomically, creating dir.
 * Returns 0 and the path in path (pathsz bytes), or -1 with errno set.
 */
int spool_put(const char *dir, const char *run_id, const char *json, size_t len, char *path,
	      size_t pathsz);

/*
 * Keep a refused run: <dir>/rejected/<run_id>.json and beside it
 * <run_id>.answer ("HTTP <status>" and the answer's body). When from is not
 * NULL that spool file is moved, else json is written. Returns 0 or -1.
 */
int spool_reject(const char *dir, const char *run_id, const char *from, const char *json,
		 size_t len, const struct post_result *r);

struct flush_stats {
	int delivered; /* 200/201: deleted */
	int rejected;  /* 400/409/413: moved to rejected/ */
	int pending;   /* still in the spool: server away, or no answer yet */
};

/*
 * Resend every spooled run, oldest name first. Returns 0 when it ran (see
 * st), 1 when another flush holds the lock (nothing done), -1 when the spool
 * cannot be read. Stops at the first run the server cannot take now.
 */
int spool_flush(const struct collect_config *c, struct flush_stats *st);

#endif
