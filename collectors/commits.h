/*
 * commits.h - `kperf-collect commits --git DIR RANGE`: describe a kernel
 * tree's commits (first-parent order, parent, subject, author, date, files,
 * Message-ID from Link:/Message-Id: trailers) and POST them to
 * /api/v1/commits, so ordering and file-based subscriptions need no hand work.
 */
#ifndef KPERF_COMMITS_H
#define KPERF_COMMITS_H

#include <jansson.h>

#include "collectors/base/config.h"

struct commits_opts {
	const char *git_dir; /* the tree */
	const char *range;   /* anything `git log` takes: v5.9..HEAD, a sha, ... */
	const char *series;  /* "name vN" for every commit, or NULL */
	const char *branch;  /* or NULL */
	int dry_run;         /* print the JSON instead of posting */
};

/* Commits POSTed per request: far below the server's 10,000 and 4 MiB. */
#define COMMITS_PER_POST 500

/*
 * Parse `git log -z --first-parent --name-only` output made with
 * COMMITS_GIT_FORMAT into a new array of commit objects, oldest first.
 * Returns NULL with err set when the text is not such output.
 */
json_t *commits_parse(const char *text, size_t len, const struct commits_opts *o, char *err,
		      size_t errsz);

/* The message id of a commit message's Link:/Message-Id: trailer (malloc'd), or NULL. */
char *commits_message_id(const char *body);

/* Run it; returns the exit status (0, EXIT_USAGE, EXIT_LOST, EXIT_REJECTED). */
int commits_command(const struct collect_config *c, const struct commits_opts *o);

#endif
