/*
 * ha.h - a Patroni cluster of a test's own (tests/ha/cluster.sh: one etcd
 * member, two Patroni / PostgreSQL 15 nodes on free loopback ports, from
 * the templates of packaging/patroni/), and kperfd pointed at both nodes the
 * way README's "Running on Patroni" says.
 */
#ifndef KPERF_HA_H
#define KPERF_HA_H

#include "tests/integration/harness_load.h"

struct ha {
	char dir[512];
	int etcd, peer, pg[2], api[2];
	char write_url[700]; /* both nodes, target_session_attrs=read-write, no dbname */
	char read_env[900];  /* KPERF_READ_DATABASE_URL=... (once kperfd has a database) */
};

/* Bring a cluster up (asserts it came up); env: "FAILSAFE=false" etc. or NULL.
 * Makes the role kperf (LOGIN CREATEDB), as README's setup does. */
void ha_up(struct ha *c, const char *name, const char *env);
/* cluster.sh VERB with args (a printf format): its exit status, and its
 * stdout's first line into out when out is not NULL. */
int ha_run(const struct ha *c, char *out, size_t outsz, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The leader's node number (1, 2), or 0 when none leads. */
int ha_leader(const struct ha *c);
/* The PostgreSQL port of node n (1, 2). */
int ha_port(const struct ha *c, int n);
void ha_down(struct ha *c);

/* kperfd on a new database of the cluster: writes over write_url, reads over
 * both nodes with target_session_attrs=prefer-standby; extra: more NAME=value
 * settings (NULL-terminated, or NULL). */
void ha_kperfd(struct ha *c, struct kperfd *k, const char *const *extra);

/* A line of measured figures for test-ha.sh's summary (DIR/times). */
void ha_note(const struct ha *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void ha_sleep(double seconds);

#endif
