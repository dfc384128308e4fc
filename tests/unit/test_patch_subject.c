/*
 * test_patch_subject.c - the [PATCH ...] tags of real kernel subjects (and
 * the public-inbox.md poller's list): version, counter, RFC, extra words,
 * reply prefixes, bad counters and subjects with no tag. One row a case.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "lib/patch_subject.h"

struct ps_row {
	const char *subject;
	int is_patch, is_reply, rfc, version, pos, total, bad;
	const char *stem, *tags;
};

static const struct ps_row rows[] = {
	{"[PATCH] mm: fix a leak", 1, 0, 0, 1, 0, 0, 0, "mm: fix a leak", ""},
	{"[PATCH v18 00/32] mm: MGLRU", 1, 0, 0, 18, 0, 32, 0, "mm: MGLRU", ""},
	{"[PATCH 1/3] mm: add lru_lock", 1, 0, 0, 1, 1, 3, 0, "mm: add lru_lock", ""},
	{"[RFC PATCH v2 2/3] x86: y", 1, 0, 1, 2, 2, 3, 0, "x86: y", ""},
	{"[PATCH RFC v2 1/4] x86: y", 1, 0, 1, 2, 1, 4, 0, "x86: y", ""},
	{"[PATCHv2 1/2] net: z", 1, 0, 0, 2, 1, 2, 0, "net: z", ""},
	{"[PATCH mm-unstable v3 0/5] mm: a", 1, 0, 0, 3, 0, 5, 0, "mm: a", "mm-unstable"},
	{"Re: [PATCH v2 0/3] mm: per-memcg lru_lock", 1, 1, 0, 2, 0, 3, 0,
	 "mm: per-memcg lru_lock", ""},
	{"RE: Re: AW: [PATCH 2/2] b", 1, 1, 0, 1, 2, 2, 0, "b", ""},
	{"Fwd: [PATCH] c", 1, 1, 0, 1, 0, 0, 0, "c", ""},
	{"[PATCH 007/123] zero padded", 1, 0, 0, 1, 7, 123, 0, "zero padded", ""},
	{"[PATCH 6.1 000/123] 6.1.5-rc1 review", 1, 0, 0, 1, 0, 123, 0, "6.1.5-rc1 review", "6.1"},
	{"[PATCH 7/3] numbered past the end", 1, 0, 0, 1, 7, 3, 0, "numbered past the end", ""},
	{"[PATCH 501/3] past the limit", 0, 0, 0, 1, 0, 0, 1, "past the limit", ""},
	{"[PATCH 1/501] too many", 0, 0, 0, 1, 0, 0, 1, "too many", ""},
	{"[PATCH 1/0] none", 0, 0, 0, 1, 0, 0, 1, "none", ""},
	{"[PATCH 1/x] not a number", 0, 0, 0, 1, 0, 0, 1, "not a number", ""},
	{"[PATCH 99999/99999] huge", 0, 0, 0, 1, 0, 0, 1, "huge", ""},
	{"[PATCH RESEND v2 0/3] again", 1, 0, 0, 2, 0, 3, 0, "again", "RESEND"},
	{"[RFC][PATCH v4 0/2] split tags", 1, 0, 1, 4, 0, 2, 0, "split tags", ""},
	{"[PATCH v2 1/3] [net-next] two tags", 1, 0, 0, 2, 1, 3, 0, "two tags", "net-next"},
	{"[GIT PULL] mm fixes", 0, 0, 0, 1, 0, 0, 0, "mm fixes", ""},
	{"[RFC] only an rfc", 0, 0, 0, 1, 0, 0, 0, "only an rfc", ""},
	{"mm: a subject with no tag", 0, 0, 0, 1, 0, 0, 0, "mm: a subject with no tag", ""},
	{"Re: no tag either", 0, 1, 0, 1, 0, 0, 0, "no tag either", ""},
	{"   [patch v5] lower case  ", 1, 0, 0, 5, 0, 0, 0, "lower case", ""},
	{"[PATCH v2 2/3] mm/vmscan: use lruvec->lru_lock in shrink_lruvec", 1, 0, 0, 2, 2, 3, 0,
	 "mm/vmscan: use lruvec->lru_lock in shrink_lruvec", ""},
	{"[PATCH 1/2", 0, 0, 0, 1, 0, 0, 0, "[PATCH 1/2", ""},
	{"", 0, 0, 0, 1, 0, 0, 0, "", ""},
	{"x [PATCH] late tag", 0, 0, 0, 1, 0, 0, 0, "x [PATCH] late tag", ""},
};

Test(patch_subject, rows)
{
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct ps_row *r = &rows[i];
		struct patch_subject ps;
		cr_assert_eq(patch_subject_parse(r->subject, &ps), 0);
		cr_expect_eq(ps.is_patch, r->is_patch, "is_patch of \"%s\"", r->subject);
		cr_expect_eq(ps.is_reply, r->is_reply, "is_reply of \"%s\"", r->subject);
		cr_expect_eq(ps.rfc, r->rfc, "rfc of \"%s\"", r->subject);
		cr_expect_eq(ps.version, r->version, "version of \"%s\": %d", r->subject, ps.version);
		cr_expect_eq(ps.pos, r->pos, "pos of \"%s\": %d", r->subject, ps.pos);
		cr_expect_eq(ps.total, r->total, "total of \"%s\": %d", r->subject, ps.total);
		cr_expect_eq(ps.bad, r->bad, "bad of \"%s\"", r->subject);
		cr_expect_str_eq(ps.stem, r->stem, "stem of \"%s\"", r->subject);
		cr_expect_str_eq(ps.tags, r->tags, "tags of \"%s\"", r->subject);
	}
}

Test(patch_subject, long_subject_is_cut_not_overrun)
{
	static char s[10 * 1024 + 1];
	struct patch_subject ps;

	memset(s, 'a', sizeof(s) - 1);
	memcpy(s, "[PATCH v3 1/2] ", 15);
	cr_assert_eq(patch_subject_parse(s, &ps), 0);
	cr_expect_eq(ps.version, 3);
	cr_expect_eq(strlen(ps.stem), LIMIT_MAIL_SUBJECT);
}

Test(patch_subject, long_tag_words_fit_tags)
{
	static char s[4096];
	struct patch_subject ps;
	size_t i, n = 0;

	n += (size_t)snprintf(s + n, sizeof(s) - n, "[PATCH");
	for (i = 0; i < 100; i++)
		n += (size_t)snprintf(s + n, sizeof(s) - n, " word%zu", i);
	snprintf(s + n, sizeof(s) - n, " v2 1/2] x");
	cr_assert_eq(patch_subject_parse(s, &ps), 0);
	cr_expect_eq(ps.version, 2);
	cr_expect(strlen(ps.tags) < sizeof(ps.tags));
	cr_expect(strncmp(ps.tags, "word0 word1 ", 12) == 0);
	cr_expect_eq(patch_subject_parse(NULL, &ps), -1);
}
