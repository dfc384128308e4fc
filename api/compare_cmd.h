/*
 * compare_cmd.h - the benchmark command lines of a compare's sides, per
 * suite: what differs, and the suites whose work arguments (command.h)
 * differ between the base and a target, whose rows are then not judged as
 * a kernel change.
 */
#ifndef KPERF_COMPARE_CMD_H
#define KPERF_COMPARE_CMD_H

#include <libpq-fe.h>

#include "lib/buf.h"
#include "api/compare_req.h"

/* Read the commands of q's sides into q->cmds. 0, or -1 (logged). */
int compare_cmd_load(PGconn *c, struct compare_req *q);

/* Why rows of suite against target t are not judged, or NULL. */
const char *compare_cmd_not_judged(const struct compare_req *q, const char *suite, int t);

/* environment_diff entries ("command", "command_args") after *first ones. */
void compare_cmd_env(const struct compare_req *q, struct buf *b, int *first);

/* Release q->cmds. */
void compare_cmd_release(struct compare_req *q);

#endif
