/*
 * test_robot_thread.c - server/robot/thread.c on a thread a real
 * public-inbox served (tests/fixtures/mail/thread.mbox: the cover, three
 * patches and a reply), and on threads cut short or mixed with others.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/mail.h"
#include "server/robot/thread.h"

#define COVER "cover.1796190058.git.dev@example.org"
#define BASE "3deccb86187f61247c8f8b59cd49885af68e903f"
#define P1 "33637fef98d0f027afe2ea2d37408c94971198fc.1796190058.git.dev@example.org"
#define P2 "533e77ddc3d1778e8d6f02a86a65f81d21083169.1796190058.git.dev@example.org"
#define P3 "1dbf86ac99b21787d5a3107cf31f4b5a3a052a6f.1796190058.git.dev@example.org"

static struct mail_msg *load(size_t *n)
{
	FILE *f = fopen("tests/fixtures/mail/thread.mbox", "rb");
	struct mail_msg *msgs = NULL;
	size_t skipped = 0;
	char err[256], *buf;
	long len;

	cr_assert_not_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)len);
	cr_assert_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	cr_assert_eq(mail_parse_mbox(buf, (size_t)len, &msgs, n, &skipped, err, sizeof(err)), 0,
		     "%s", err);
	free(buf);
	return msgs;
}

Test(robot_thread, heads_by_subject)
{
	cr_assert(thread_is_head("[PATCH v2 0/3] mm: per-memcg lru_lock", 0));
	cr_assert(thread_is_head("[PATCH v3 0/3] mm: per-memcg lru_lock", 1)); /* a cover in reply to v2 */
	cr_assert(thread_is_head("[PATCH 1/2] mm: x", 0));
	cr_assert_not(thread_is_head("[PATCH 1/2] mm: x", 1));
	cr_assert_not(thread_is_head("[PATCH 2/3] mm: x", 0));
	cr_assert(thread_is_head("[PATCH] mm: one fix", 0));
	cr_assert_not(thread_is_head("[PATCH] mm: one fix", 1));
	cr_assert(thread_is_head("[PATCH v2] mm: one fix", 1));
	cr_assert(thread_is_head("[RFC PATCH v4 00/12] mm: mglru", 0));
	cr_assert_not(thread_is_head("Re: [PATCH v2 0/3] mm: per-memcg lru_lock", 1));
	cr_assert_not(thread_is_head("[PATCH 7/3] mm: numbered past its count", 0));
	cr_assert_not(thread_is_head("mm: no tag at all", 0));
}

Test(robot_thread, the_v2_series_of_a_real_thread)
{
	size_t n = 0;
	struct mail_msg *msgs = load(&n);
	struct thread_series s;
	char why[300], key[1200];

	cr_assert_eq(n, 5); /* cover, 3 patches, a reply */
	cr_assert_eq(thread_series(msgs, n, COVER, &s, why, sizeof(why)), 1, "%s", why);
	cr_assert_eq(s.total, 3);
	cr_assert(s.has_cover);
	cr_assert_eq(s.subj.version, 2);
	cr_assert_str_eq(s.subj.stem, "mm: per-memcg lru_lock");
	cr_assert_str_eq(s.patches[0]->msgid, P1);
	cr_assert_str_eq(s.patches[1]->msgid, P2);
	cr_assert_str_eq(s.patches[2]->msgid, P3);
	cr_assert_str_eq(s.base, BASE);
	cr_assert_null(s.change_id);
	thread_series_key(&s, key, sizeof(key));
	cr_assert_str_eq(key, "mm: per-memcg lru_lock <dev@example.org>");
	thread_series_release(&s);
	/* a patch is no head; a missing one is no series */
	cr_assert_eq(thread_series(msgs, n, P2, &s, why, sizeof(why)), -1);
	cr_assert_eq(thread_series(msgs, n, "nosuch@x", &s, why, sizeof(why)), 0);
	mail_msgs_free(msgs, n);
}

Test(robot_thread, patches_not_arrived_yet)
{
	size_t n = 0;
	struct mail_msg *msgs = load(&n);
	struct thread_series s;
	char why[300];

	/* the thread without patch 3 (the cover and patches came in one by one) */
	for (size_t i = 0; i < n; i++)
		if (msgs[i].msgid && !strcmp(msgs[i].msgid, P3)) {
			free(msgs[i].subject);
			msgs[i].subject = strdup("Re: [PATCH v2 3/3] mm: remove pgdat->lru_lock");
		}
	cr_assert_eq(thread_series(msgs, n, COVER, &s, why, sizeof(why)), 0);
	cr_assert_str_eq(why, "1 of 3 patches not in the thread yet");
	mail_msgs_free(msgs, n);
}

Test(robot_thread, kperf_own_reports_are_no_series)
{
	size_t n = 0;
	struct mail_msg *msgs = load(&n);
	struct thread_series s;
	char why[300];

	for (size_t i = 0; i < n; i++)
		if (msgs[i].msgid && !strcmp(msgs[i].msgid, COVER))
			msgs[i].x_kperf = strdup("regression");
	cr_assert_eq(thread_series(msgs, n, COVER, &s, why, sizeof(why)), -1);
	cr_assert_str_eq(why, "a report of kperf's own");
	mail_msgs_free(msgs, n);
}
