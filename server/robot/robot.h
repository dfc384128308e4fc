/*
 * robot.h - the robot's thread: polls the inboxes whose turn it is, and
 * once a second finds new branch heads for plans, queues jobs machines can
 * now take, and reports the targets whose work has ended.
 */
#ifndef KPERF_ROBOT_H
#define KPERF_ROBOT_H

#include <libpq-fe.h>

#include "server/robot/report.h"

/* One pass (tests drive it too): polls, plans, reports. 0 or -1. */
int robot_step(PGconn *c);

int robot_start(const struct report_config *cfg);
void robot_stop(void);

#endif
