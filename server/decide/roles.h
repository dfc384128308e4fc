/*
 * roles.h - the role (metric_role.h) of decisions stored before kperfd set
 * it with each decision: set at start, by the table kperfd is built with.
 */
#ifndef KPERF_ROLES_H
#define KPERF_ROLES_H

#include <libpq-fe.h>
#include <stddef.h>

/* Set role and kpi of every decision not yet checked; the number of
 * (test, metric) pairs set, or -1 with err. */
long roles_refresh(PGconn *c, char *err, size_t errlen);

#endif
