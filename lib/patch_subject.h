/*
 * patch_subject.h - what a mail Subject says about a patch: "[RFC PATCH v2
 * 1/3] mm: foo" gives rfc, version 2, patch 1 of 3 and the stem "mm: foo".
 * Used by the series poller to pick series heads from Atom titles and by
 * the thread reader to order a series' patches. Pure: no I/O, no state.
 */
#ifndef KPERF_PATCH_SUBJECT_H
#define KPERF_PATCH_SUBJECT_H

#include "lib/kperf_limits.h"

struct patch_subject {
	int is_patch; /* a [PATCH ...] or [RFC PATCH ...] / [PATCH RFC ...] / PATCHv2 tag is present */
	int is_reply; /* starts with Re:/RE:/Aw:/Fwd: (any case, repeated) */
	int rfc;      /* RFC in a patch tag */
	int version;  /* vN, 1 when absent */
	int version_given; /* a vN was there */
	int pos, total; /* M/K; 0/0 when there is no counter. M may pass K ("[PATCH
			 * 3/2]", a patch added after the count: b4 takes it too) */
	int bad;      /* the counter is K = 0, M or K > LIMIT_SERIES_PATCHES or not
		       * numbers ("1/x"): then is_patch is 0 */
	char stem[LIMIT_MAIL_SUBJECT + 1]; /* subject without Re: and without the leading
					    * [...] tag(s), trimmed: "mm: per-memcg lru_lock" */
	char tags[256]; /* other words of the patch tag, space-separated, e.g. "mm-unstable"
			 * from [PATCH mm-unstable v3 0/5], "RESEND" (truncated to fit) */
};

/*
 * Fills *ps from subject (NUL-terminated, UTF-8 as mail_parse_* gives it).
 * Every subject parses: one with no tag gives is_patch 0 and the whole
 * trimmed text as stem (cut at LIMIT_MAIL_SUBJECT bytes). Only the tags at
 * the start count ("[PATCH] Re: x" is a patch, "Re: x [PATCH]" is not).
 * Returns 0, or -1 when subject or ps is NULL.
 */
int patch_subject_parse(const char *subject, struct patch_subject *ps);

#endif
