/*
 * report.h - the end of a plan target: once its jobs, decisions,
 * confirmations and bisections are over, the outcome (a regression at the
 * first bad patch, an improvement, or nothing moved) is recorded and the
 * reply queued in the patch's thread: held for an admin, or sent.
 */
#ifndef KPERF_ROBOT_REPORT_H
#define KPERF_ROBOT_REPORT_H

#include <libpq-fe.h>

struct report_config {
	const char *from;       /* the robot's address */
	const char *public_url; /* kperf's pages, for Closes: */
};

void report_configure(const struct report_config *cfg);

/* Targets ended and reported: their number, or -1. */
int report_sweep(PGconn *c);

/* An admin releases a held reply: 0, 1 when no held reply has that id, -1. */
int report_release(PGconn *c, const char *alert_id);

#endif
