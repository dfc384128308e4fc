/*
 * test_faults.c - kperfd on a Patroni cluster when the cluster itself is in
 * trouble: the etcd member unreachable (with failsafe_mode the leader stays
 * writable; without it Patroni demotes the leader, kperfd refuses writes with
 * 503 and goes on reading from what is readable, and takes writes again once
 * etcd is back), then both nodes down at once (every write a 503 with a JSON
 * error; nothing acknowledged that is not stored once both are back).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tests/ha/ha.h"

#define POSTERS 8
#define READERS 2
#define TTL 10

static struct load fs, nofs, back, down;

/* Wait (at most seconds) until some post was refused since the outage:
 * the seconds that took, or -1. */
static double wait_refused(struct load *l, double seconds)
{
	double end = harness_now() + seconds;

	while (harness_now() < end) {
		struct load_sum s = load_sum(l);
		if (s.last_refused >= 0)
			return harness_now() - l->outage_at;
		ha_sleep(0.1);
	}
	return -1;
}

static void expect_refusals_answered(const struct load_sum *s, const char *phase)
{
	cr_expect_eq(s->r503_bare, 0, "%s: %d refusals without Retry-After and a JSON error",
		     phase, s->r503_bare);
	cr_expect_eq(s->none, 0, "%s: %d posts without an answer (curl %d)", phase, s->none,
		     s->last_curl);
	cr_expect_lt(s->slowest_post, 10.0, "%s: a post took %.1f s", phase, s->slowest_post);
	cr_expect_lt(s->slowest_read, 10.0, "%s: a read took %.1f s", phase, s->slowest_read);
}

Test(patroni_faults, etcd_unreachable_then_both_nodes_down, .timeout = 600)
{
	struct ha c;
	struct kperfd k;
	struct load_sum s;
	double t_demoted, t_back;
	int leader;

	curl_global_init(CURL_GLOBAL_ALL);
	ha_up(&c, "faults", "FAILSAFE=true SYNC=true");
	ha_kperfd(&c, &k, NULL);

	/* 1. failsafe_mode on: both members still see each other, so the leader
	 * keeps its role through an etcd outage twice the leader key's TTL */
	load_start(&fs, &k, "fs", POSTERS, READERS);
	ha_sleep(2);
	load_outage(&fs);
	cr_assert_eq(ha_run(&c, NULL, 0, "etcd-stop"), 0);
	ha_sleep(2 * TTL);
	cr_assert_eq(ha_run(&c, NULL, 0, "etcd-cont"), 0);
	load_stop(&fs);
	s = load_sum(&fs);
	ha_note(&c,
		"ha: etcd stopped %d s, failsafe_mode on: %d posts acknowledged meanwhile, %d refused;"
		" reads %d answered, %d failed",
		2 * TTL, s.acked_after, s.r503 + s.r503_bare + s.none, s.reads_ok, s.reads_failed);
	cr_expect_eq(s.r503 + s.r503_bare + s.none, 0, "failsafe: writes refused with etcd away");
	cr_expect_gt(s.acked_after, POSTERS * 10, "failsafe: writes stopped with etcd away");
	cr_expect_eq(s.reads_failed, 0);
	load_check_stored(&fs, NULL);

	/* 2. failsafe_mode off: Patroni demotes the leader when etcd is away */
	cr_assert_eq(ha_run(&c, NULL, 0, "set failsafe_mode=false"), 0);
	ha_sleep(3); /* every member reads the new setting (loop_wait 1 s) */
	leader = ha_leader(&c);
	cr_assert(leader == 1 || leader == 2);
	load_start(&nofs, &k, "nofs", POSTERS, READERS);
	ha_sleep(2);
	load_outage(&nofs);
	cr_assert_eq(ha_run(&c, NULL, 0, "etcd-stop"), 0);
	t_demoted = wait_refused(&nofs, 3 * TTL);
	cr_assert_geq(t_demoted, 0, "the leader kept taking writes with etcd away, no failsafe");
	ha_sleep(10); /* writes refused, reads go on */
	cr_expect_eq(ha_leader(&c), 0, "a node calls itself primary with etcd away");
	load_stop(&nofs);
	s = load_sum(&nofs);
	ha_note(&c,
		"ha: etcd stopped, failsafe_mode off: first write refused %.1f s after; %d refused "
		"(%d 503 with Retry-After); reads %d answered, %d failed, longest gap %.2f s",
		t_demoted, s.r503 + s.r503_bare + s.none, s.r503, s.reads_ok, s.reads_failed,
		s.longest_read_gap);
	expect_refusals_answered(&s, "etcd away");
	cr_expect_gt(s.reads_ok, 0);
	cr_expect_eq(s.reads_failed, 0, "etcd away: %d reads failed", s.reads_failed);
	cr_expect_lt(s.longest_read_gap, 5.0, "etcd away: reads stopped for %.1f s",
		     s.longest_read_gap);
	/* (checked once a node takes writes again) */

	/* 3. etcd back: a leader again, writes again */
	load_start(&back, &k, "back", POSTERS, READERS);
	ha_sleep(1);
	load_outage(&back);
	cr_assert_eq(ha_run(&c, NULL, 0, "etcd-cont"), 0);
	cr_assert(load_wait_after(&back, 4, 60), "writes did not come back with etcd");
	t_back = harness_now() - back.outage_at;
	load_stop(&back);
	s = load_sum(&back);
	ha_note(&c, "ha: etcd back: every poster writing again %.1f s after", t_back);
	expect_refusals_answered(&s, "etcd back");
	load_check_stored(&nofs, NULL);
	load_check_stored(&back, NULL);

	/* 4. both nodes down at once, then both back */
	cr_assert_eq(ha_run(&c, NULL, 0, "wait-leader 60"), 0);
	leader = ha_leader(&c);
	cr_assert_eq(ha_run(&c, NULL, 0, "wait-replica %d 60", 3 - leader), 0);
	load_start(&down, &k, "down", POSTERS, READERS);
	ha_sleep(2);
	cr_assert_eq(ha_run(&c, NULL, 0, "kill-node %d", 3 - leader), 0);
	cr_assert_eq(ha_run(&c, NULL, 0, "kill-node %d", leader), 0);
	/* from here on, with both postmasters and their backends gone, no write
	 * can be acknowledged until the cluster is back */
	load_outage(&down);
	ha_sleep(5);
	{
		struct load_sum d = load_sum(&down);
		cr_expect_gt(d.r503, 0, "both nodes down, and no write refused");
	}
	cr_assert_eq(ha_run(&c, NULL, 0, "start %d", leader), 0);
	cr_assert_eq(ha_run(&c, NULL, 0, "start %d", 3 - leader), 0);
	cr_assert_eq(ha_run(&c, NULL, 0, "wait-leader 90"), 0, "no leader after both restarted");
	cr_assert(load_wait_after(&down, 4, 90), "writes did not come back after both nodes");
	load_stop(&down);
	s = load_sum(&down);
	ha_note(&c,
		"ha: both nodes SIGKILLed, restarted 5 s later: first write accepted %.1f s after the"
		" kill; %d posts refused (%d 503 with Retry-After, %d without, %d unanswered); "
		"%d acknowledged, all stored once",
		s.first_after, s.r503 + s.r503_bare + s.none, s.r503, s.r503_bare, s.none, s.acked);
	cr_expect_geq(s.first_after, 0, "both nodes down: no poster refused, then acknowledged");
	expect_refusals_answered(&s, "both nodes down");
	load_check_stored(&down, NULL);

	kperfd_stop(&k);
	ha_down(&c);
}
