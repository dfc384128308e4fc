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
	cr_assert(thread_is_head("[PATCH 1/2] mm: x", 1)); /* the thread decides */
	cr_assert_not(thread_is_head("[PATCH 2/3] mm: x", 0));
	cr_assert(thread_is_head("[PATCH] mm: one fix", 0));
	cr_assert(thread_is_head("[PATCH] mm: one fix", 1));
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

/* A thread written here: each message "MSGID|IN-REPLY-TO|REFERENCES|SUBJECT|DIFF"
 * (REFERENCES may hold "\n " for a folded header or "\nReferences: " for a
 * second one; DIFF 1 adds a diff), parsed as public-inbox serves it. */
static struct mail_msg *thread_of(const char *const *rows, size_t nrows, size_t *n)
{
	char *mbox = NULL, err[256];
	size_t len = 0, skipped = 0;
	FILE *f = open_memstream(&mbox, &len);
	struct mail_msg *msgs = NULL;

	for (size_t i = 0; i < nrows; i++) {
		char id[200], irt[200], refs[600], subject[300];
		int diff = 0;
		cr_assert_eq(sscanf(rows[i], "%199[^|]|%199[^|]|%599[^|]|%299[^|]|%d", id, irt, refs,
				    subject, &diff),
			     5, "%s", rows[i]);
		fprintf(f, "From mboxrd@z Thu Jan  1 00:00:00 1970\nFrom: Lab Dev <dev@example.org>\n"
			   "Message-ID: <%s>\nSubject: %s\nDate: Thu, 1 Feb 2024 00:00:0%zu +0000\n",
			id, subject, i % 10);
		if (strcmp(irt, "-"))
			fprintf(f, "In-Reply-To: <%s>\n", irt);
		if (strcmp(refs, "-"))
			fprintf(f, "References: %s\n", refs);
		fprintf(f, "\n%s\n", diff ? "A change.\n\n---\n mm/x.c | 1 +\n\ndiff --git a/mm/x.c b/mm/x.c\n"
					    "--- a/mm/x.c\n+++ b/mm/x.c\n@@ -1 +1,2 @@\n x\n+y\n"
				      : "The cover.\n\n mm/x.c | 1 +\n 1 file changed\n");
	}
	fclose(f);
	cr_assert_eq(mail_parse_mbox(mbox, len, &msgs, n, &skipped, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(*n, nrows);
	free(mbox);
	return msgs;
}

/* The cover says v3, its patches say [PATCH n/2]: b4 takes them as v3. */
Test(robot_thread, patches_without_a_version_take_their_covers)
{
	static const char *const rows[] = {
	    "c@x|-|-|[PATCH v3 0/2] mm: a|0",
	    "p1@x|c@x|<c@x>|[PATCH 1/2] mm: one|1",
	    "p2@x|c@x|<c@x>|[PATCH 2/2] mm: two|1",
	};
	size_t n;
	struct mail_msg *msgs = thread_of(rows, 3, &n);
	struct thread_series s;
	char why[300];

	cr_assert_eq(thread_series(msgs, n, "c@x", &s, why, sizeof(why)), 1, "%s", why);
	cr_assert_eq(s.subj.version, 3);
	cr_assert_eq(s.total, 2);
	cr_assert_str_eq(s.patches[1]->msgid, "p2@x");
	thread_series_release(&s);
	mail_msgs_free(msgs, n);
}

/* "[PATCH 3/2]", a patch added after the count, is the series' third, as in b4. */
Test(robot_thread, a_patch_past_the_count_extends_the_series)
{
	static const char *const rows[] = {
	    "c@x|-|-|[PATCH 0/2] mm: a|0",
	    "p1@x|c@x|<c@x>|[PATCH 1/2] mm: one|1",
	    "p2@x|c@x|<c@x>|[PATCH 2/2] mm: two|1",
	    "p3@x|c@x|<c@x>|[PATCH 3/2] mm: three, forgotten|1",
	};
	size_t n;
	struct mail_msg *msgs = thread_of(rows, 4, &n);
	struct thread_series s;
	char why[300];

	cr_assert_eq(thread_series(msgs, n, "c@x", &s, why, sizeof(why)), 1, "%s", why);
	cr_assert_eq(s.total, 3);
	cr_assert_str_eq(s.patches[2]->msgid, "p3@x");
	thread_series_release(&s);
	mail_msgs_free(msgs, n);
}

/* --thread=deep: each patch replies to the one before; References folded
 * over two lines, or given in two headers, as real LKML mail has them. */
Test(robot_thread, deep_threads_and_folded_or_repeated_references)
{
	static const char *const rows[] = {
	    "c@x|-|-|[PATCH v2 0/3] mm: a|0",
	    "p1@x|c@x|<c@x>|[PATCH v2 1/3] mm: one|1",
	    "p2@x|p1@x|<c@x>\n <p1@x>|[PATCH v2 2/3] mm: two|1",
	    "p3@x|p2@x|<c@x>\nReferences: <p1@x> <p2@x>|[PATCH v2 3/3] mm: three|1",
	};
	size_t n;
	struct mail_msg *msgs = thread_of(rows, 4, &n);
	struct thread_series s;
	char why[300];

	cr_assert_eq(thread_series(msgs, n, "c@x", &s, why, sizeof(why)), 1, "%s", why);
	cr_assert_eq(s.total, 3);
	cr_assert_str_eq(s.patches[0]->msgid, "p1@x");
	cr_assert_str_eq(s.patches[1]->msgid, "p2@x");
	cr_assert_str_eq(s.patches[2]->msgid, "p3@x");
	thread_series_release(&s);
	mail_msgs_free(msgs, n);
}

/* Replies that start a series, and replies that are patches of another. */
Test(robot_thread, a_patch_sent_as_a_reply_starts_a_series_unless_its_cover_has_it)
{
	static const char *const rows[] = {
	    "bug@x|-|-|mm: a crash in folio_mark_accessed|0",
	    "fix@x|bug@x|<bug@x>|[PATCH] mm/swap: fix the crash|1",
	    "c@x|-|-|[PATCH 0/2] mm: a|0",
	    "p1@x|c@x|<c@x>|[PATCH 1/2] mm: one|1",
	    "p2@x|c@x|<c@x>|[PATCH 2/2] mm: two|1",
	    "v2p1@x|p1@x|<c@x> <p1@x>|[PATCH v2 1/2] mm: one|1",
	    "v2p2@x|v2p1@x|<c@x> <p1@x> <v2p1@x>|[PATCH v2 2/2] mm: two|1",
	    "fixup@x|p2@x|<c@x> <p2@x>|[PATCH] mm: two, fixed up|1",
	    "rfc@x|-|-|[RFC] mm: an idea|0",
	    "rp@x|rfc@x|<rfc@x>|[PATCH 1/1] mm: the idea|1",
	};
	size_t n;
	struct mail_msg *msgs = thread_of(rows, 10, &n);
	struct thread_series s;
	char why[300];

	/* a fix in reply to a bug report */
	cr_assert_eq(thread_series(msgs, n, "fix@x", &s, why, sizeof(why)), 1, "%s", why);
	cr_assert_eq(s.total, 1);
	cr_assert_str_eq(s.patches[0]->msgid, "fix@x");
	thread_series_release(&s);
	/* patch 1 of a cover's series is no head */
	cr_assert_eq(thread_series(msgs, n, "p1@x", &s, why, sizeof(why)), -1);
	cr_assert_str_eq(why, "a patch of the series its cover letter starts (<c@x>)");
	/* v2 sent with --in-reply-to v1's patch 1 */
	cr_assert_eq(thread_series(msgs, n, "v2p1@x", &s, why, sizeof(why)), 1, "%s", why);
	cr_assert_eq(s.subj.version, 2);
	cr_assert_eq(s.total, 2);
	cr_assert_str_eq(s.patches[1]->msgid, "v2p2@x");
	thread_series_release(&s);
	/* an uncounted patch in reply to a patch of its version: a follow-up */
	cr_assert_eq(thread_series(msgs, n, "fixup@x", &s, why, sizeof(why)), -1);
	cr_assert(strstr(why, "a follow-up, not a series"), "%s", why);
	/* a patch in reply to a cover with no [PATCH 0/N] tag */
	cr_assert_eq(thread_series(msgs, n, "rp@x", &s, why, sizeof(why)), 1, "%s", why);
	thread_series_release(&s);
	mail_msgs_free(msgs, n);
}
