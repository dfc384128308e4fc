/*
 * apply.h - a job's kernel in the agent's git tree (--tree): its commit
 * checked out, or its series applied on its base from the job's inbox
 * with b4 and `git am`, the commits made posted to kperfd. Series come
 * only from the inboxes the agent was given (--inbox): a job naming any
 * other fails, so kperfd cannot have a lab build code of its choosing.
 */
#ifndef KPERF_AGENT_APPLY_H
#define KPERF_AGENT_APPLY_H

#include <stddef.h>

#include "collectors/agent/jobfile.h"
#include "collectors/base/config.h"

/* The committer of applied patches: with the author's dates as committer
 * dates, every lab makes the same shas from the same mails and base. */
#define APPLY_COMMITTER_NAME "kperf lab"
#define APPLY_COMMITTER_EMAIL "lab@kperf.invalid"
/* Seconds b4 or git may take. */
#define APPLY_TIMEOUT_S 600

struct apply_opts {
	const char *tree;            /* the git work tree */
	const char *const *inboxes;  /* inbox URLs series may come from */
	size_t ninboxes;
	const char *work_dir;        /* scratch space (b4's mailbox) */
};

/*
 * Get j's kernel into the tree. 0 with head set to the sha checked out;
 * -1 with why, *final set when no machine could do better (the series does
 * not apply, names an inbox not allowed, its base is missing).
 */
int apply_job(const struct collect_config *c, const struct apply_opts *o, const struct job *j,
	      char head[41], char *why, size_t whylen, int *final);

/* The tree's work tree at sha (detached). 0, or -1 with why. */
int apply_checkout(const struct apply_opts *o, const char *sha, char *why, size_t whylen);

/* The commits from base (exclusive) to the tree's HEAD, oldest first, into
 * shas (at most max): after a series job's apply, patch 1 first. Their
 * number, or -1 when git fails. */
int apply_series_commits(const struct apply_opts *o, const char *base, char (*shas)[41], int max);

#endif
