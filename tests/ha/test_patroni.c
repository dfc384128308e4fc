/*
 * test_patroni.c - kperfd on a real Patroni cluster (one etcd, two
 * PostgreSQL 15 nodes, synchronous_mode on) under a 16-client ingest and
 * page reads, through three failovers Patroni makes by itself: the leader's
 * postmaster SIGKILLed, the leader's Patroni and postmaster SIGKILLed
 * together (a node crash), and a planned `patronictl switchover`. kperfd
 * goes on without a restart; no run answered 201 is lost or stored twice;
 * refused posts get 503 with Retry-After, none hangs; reads go on; the old
 * leader comes back as the synchronous standby.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/ha/ha.h"

#define POSTERS 16
#define READERS 2
/* no request may wait longer than this for its answer (a hang) */
#define SLOWEST_S 10.0

static void expect_alive(const struct kperfd *k, const char *round)
{
	int status = 0;

	cr_assert_eq(waitpid(k->pid, &status, WNOHANG), 0, "%s: kperfd died; see %s", round,
		     k->log);
}

/* /healthz's writes_to names node n's port and says how many switches. */
static void expect_writes_to(const struct kperfd *k, const struct ha *c, int n, long switches)
{
	json_t *h = harness_get_json(k, "/healthz", 200), *w = json_object_get(h, "writes_to");
	char port[16];

	snprintf(port, sizeof(port), "%d", ha_port(c, n));
	cr_expect_str_eq(json_string_value(json_object_get(w, "port")), port,
			 "writes_to is not node%d", n);
	cr_expect_eq((long)json_number_value(json_object_get(w, "switches")), switches);
	json_decref(h);
}

enum round_kind { KILL_POSTMASTER, KILL_NODE, SWITCHOVER };
static const char *const round_name[] = {"SIGKILL leader postmaster",
					  "SIGKILL leader Patroni + postmaster (node crash)",
					  "patronictl switchover"};

static void failover_round(struct ha *c, struct kperfd *k, enum round_kind kind, int nround)
{
	static struct load l;
	struct load_sum s;
	char prefix[16];
	int old = ha_leader(c), now;
	double t_leader = -1, t_rejoin;

	cr_assert(old == 1 || old == 2, "no leader before round %d", nround);
	snprintf(prefix, sizeof(prefix), "pt%d", nround);
	load_start(&l, k, prefix, POSTERS, READERS);
	ha_sleep(2);
	load_outage(&l);
	switch (kind) {
	case KILL_POSTMASTER:
		cr_assert_eq(ha_run(c, NULL, 0, "kill-pm %d", old), 0);
		break;
	case KILL_NODE:
		cr_assert_eq(ha_run(c, NULL, 0, "kill-node %d", old), 0);
		break;
	case SWITCHOVER:
		cr_assert_eq(ha_run(c, NULL, 0, "switchover"), 0, "switchover failed; %s/log",
			     c->dir);
		break;
	}
	/* Patroni promotes the replica by itself */
	for (double end = harness_now() + 60; harness_now() < end; ha_sleep(0.1)) {
		if (ha_leader(c) == 3 - old) {
			t_leader = harness_now() - l.outage_at;
			break;
		}
	}
	cr_assert_geq(t_leader, 0, "%s: node%d never became the leader", round_name[kind], 3 - old);
	if (kind == KILL_NODE) { /* the crashed node boots again 3 s later */
		ha_sleep(3);
		cr_assert_eq(ha_run(c, NULL, 0, "start %d", old), 0);
	}
	cr_assert(load_wait_after(&l, 4, 60), "%s: writes did not come back within 60 s",
		  round_name[kind]);
	/* the old leader rejoins as the synchronous standby (pg_rewind if needed) */
	cr_assert_eq(ha_run(c, NULL, 0, "wait-replica %d 120", old), 0,
		     "%s: node%d did not rejoin as the sync standby; see %s/log", round_name[kind],
		     old, c->dir);
	t_rejoin = harness_now() - l.outage_at;
	ha_sleep(1); /* writes with the standby back */
	load_stop(&l);
	now = ha_leader(c);
	cr_assert_eq(now, 3 - old, "%s: the leader moved again", round_name[kind]);
	expect_alive(k, round_name[kind]);
	s = load_sum(&l);
	load_check_stored(&l, NULL);
	cr_expect_eq(harness_count(k, "SELECT count(*) FROM run"),
		     harness_count(k, "SELECT count(DISTINCT run_id) FROM run"),
		     "%s: a run stored twice", round_name[kind]);
	ha_note(c,
		"ha: %s: new leader %.1f s, first write accepted %.1f s, last refusal %.1f s after the fault; "
		"meanwhile %d posts refused (%d 503 with Retry-After, %d 503 without, %d unanswered"
		" (curl %d)), "
		"slowest post %.2f s; reads %d answered, %d failed, longest gap %.2f s; "
		"old leader sync standby again %.1f s after; %d runs acknowledged, all stored once",
		round_name[kind], t_leader, s.first_after, s.last_refused,
		s.r503 + s.r503_bare + s.none, s.r503, s.r503_bare, s.none, s.last_curl, s.slowest_post, s.reads_ok, s.reads_failed,
		s.longest_read_gap, t_rejoin, s.acked);
	cr_expect_eq(s.r503_bare, 0, "%s: 503 without Retry-After or JSON error", round_name[kind]);
	cr_expect_eq(s.none, 0, "%s: posts left without an answer", round_name[kind]);
	cr_expect_lt(s.slowest_post, SLOWEST_S, "%s: a post took %.1f s", round_name[kind],
		     s.slowest_post);
	cr_expect_lt(s.slowest_read, SLOWEST_S, "%s: a read took %.1f s", round_name[kind],
		     s.slowest_read);
	cr_expect_gt(s.reads_ok, 0);
	cr_expect_eq(s.reads_failed, 0, "%s: %d reads failed", round_name[kind], s.reads_failed);
	expect_writes_to(k, c, now, nround + 1);
}

Test(patroni, three_failovers_under_load, .timeout = 600)
{
	struct ha c;
	struct kperfd k;

	curl_global_init(CURL_GLOBAL_ALL);
	ha_up(&c, "patroni", "SYNC=true");
	ha_kperfd(&c, &k, NULL);
	expect_writes_to(&k, &c, 1, 0);
	failover_round(&c, &k, KILL_POSTMASTER, 0);
	failover_round(&c, &k, KILL_NODE, 1);
	failover_round(&c, &k, SWITCHOVER, 2);
	kperfd_stop(&k);
	ha_down(&c);
}
