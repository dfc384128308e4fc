/*
 * robot.c - the robot's thread (see robot.h).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "lib/util.h"
#include "server/db/db.h"
#include "server/robot/inbox.h"
#include "server/robot/plan.h"
#include "server/robot/robot.h"

#define ROBOT_POLL_US 200000
#define ROBOT_SWEEP_US 1000000

static pthread_t thread;
static atomic_int stopping;
static int running;

static int sweep(PGconn *c)
{
	int rc;

	if (db_do(c, "BEGIN", 0, NULL))
		return -1;
	rc = plan_sweep(c);
	if (rc < 0 || db_do(c, "COMMIT", 0, NULL)) {
		PQclear(PQexec(c, "ROLLBACK"));
		return -1;
	}
	return report_sweep(c) < 0 ? -1 : 0;
}

int robot_step(PGconn *c)
{
	int polled, rc = 0;

	while ((polled = inbox_poll_step(c)) > 0 && !atomic_load(&stopping))
		;
	if (polled < 0)
		rc = -1;
	if (sweep(c) < 0)
		rc = -1;
	return rc;
}

static void *robot_main(void *arg)
{
	int64_t swept = 0;

	(void)arg;
	while (!atomic_load(&stopping)) {
		PGconn *c = db_get();
		int rc = c ? inbox_poll_step(c) : -1;
		if (c && now_us() - swept >= ROBOT_SWEEP_US) {
			swept = now_us();
			if (sweep(c) < 0)
				rc = -1;
		}
		if (rc < 0)
			log_error("the robot's pass failed; trying again in a second");
		if (rc <= 0)
			usleep(rc < 0 ? 5 * ROBOT_POLL_US : ROBOT_POLL_US);
	}
	db_release();
	return NULL;
}

int robot_start(const struct report_config *cfg)
{
	report_configure(cfg);
	atomic_store(&stopping, 0);
	if (pthread_create(&thread, NULL, robot_main, NULL))
		return -1;
	running = 1;
	return 0;
}

void robot_stop(void)
{
	if (!running)
		return;
	atomic_store(&stopping, 1);
	pthread_join(thread, NULL);
	running = 0;
}
