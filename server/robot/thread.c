/*
 * thread.c - a posted series out of its thread's messages (see thread.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "server/robot/thread.h"

int thread_is_head(const char *subject, int is_reply)
{
	struct patch_subject ps;

	if (patch_subject_parse(subject, &ps) || !ps.is_patch || ps.bad)
		return 0;
	if (ps.is_reply)
		return 0;
	(void)is_reply; /* a reply may start a series too: the thread decides (thread_series) */
	return ps.total == 0 || ps.pos == 0 || ps.pos == 1;
}

/*
 * A head that replies to another mail starts a series unless it is a patch
 * of the series it replies into: patch 1 (or an uncounted patch) in reply to
 * a cover of its version and count, or an uncounted patch in reply to a
 * patch of its version (a follow-up). A fix in reply to a bug report, a v2
 * sent in reply to v1's patch, a patch in reply to a cover without a [PATCH
 * 0/N] tag: each starts one, as `b4 am` on it takes it. NULL, or why not.
 */
static const char *reply_not_head(const struct mail_msg *msgs, size_t n,
				  const struct mail_msg *head, const struct patch_subject *hs)
{
	const struct mail_msg *parent = NULL;
	struct patch_subject ps;

	if (!head->in_reply_to || (hs->pos == 0 && hs->total > 0)) /* a cover starts one */
		return NULL;
	for (size_t i = 0; i < n && !parent; i++)
		if (msgs[i].msgid && !strcmp(msgs[i].msgid, head->in_reply_to))
			parent = &msgs[i];
	if (!parent || !parent->subject || patch_subject_parse(parent->subject, &ps) ||
	    !ps.is_patch || ps.bad || ps.is_reply)
		return NULL;
	if (ps.pos == 0 && ps.total > 0 && (ps.total == hs->total || hs->total == 0) &&
	    (ps.version == hs->version || !hs->version_given))
		return "a patch of the series its cover letter starts";
	if (parent->has_diff && hs->total == 0 && ps.version == hs->version)
		return "a patch in reply to a patch of its version: a follow-up, not a series";
	return NULL;
}

static int replies_to(const struct mail_msg *m, const char *msgid)
{
	if (m->in_reply_to && !strcmp(m->in_reply_to, msgid))
		return 1;
	for (size_t i = 0; i < m->nrefs; i++)
		if (!strcmp(m->refs[i], msgid))
			return 1;
	return 0;
}

static const struct mail_msg *find(const struct mail_msg *msgs, size_t n, const char *msgid)
{
	for (size_t i = 0; i < n; i++)
		if (msgs[i].msgid && !strcmp(msgs[i].msgid, msgid))
			return &msgs[i];
	return NULL;
}

/*
 * Whether m is a patch of the series headed by head (s: its subject and
 * count so far): a [PATCH] mail with a diff, in reply to the head, of the
 * head's version and count, numbered 1 or more. A patch with no vN in reply
 * to a cover that has one is of the cover's version (b4 takes it so: "[PATCH
 * v3 0/4]" with "[PATCH 1/4]".."[PATCH 4/4]" is v3). ps: its subject.
 */
static int series_patch(const struct mail_msg *m, const struct mail_msg *head,
			const struct thread_series *s, struct patch_subject *ps)
{
	int version;

	if (m == head || !m->subject || m->x_kperf || !m->has_diff || !replies_to(m, head->msgid))
		return 0;
	if (patch_subject_parse(m->subject, ps) || !ps->is_patch || ps->bad || ps->is_reply)
		return 0;
	version = ps->version_given || !s->has_cover ? ps->version : s->subj.version;
	return version == s->subj.version && ps->total == s->subj.total && ps->pos >= 1 &&
	       ps->pos <= LIMIT_SERIES_PATCHES;
}

int thread_series(const struct mail_msg *msgs, size_t n, const char *head_msgid,
		  struct thread_series *out, char *why, size_t whylen)
{
	const struct mail_msg *head = find(msgs, n, head_msgid);
	int missing = 0;

	memset(out, 0, sizeof(*out));
	if (!head)
		return snprintf(why, whylen, "the thread does not hold <%s>", head_msgid), 0;
	if (head->x_kperf)
		return snprintf(why, whylen, "a report of kperf's own"), -1;
	if (patch_subject_parse(head->subject ? head->subject : "", &out->subj) ||
	    !out->subj.is_patch || out->subj.bad)
		return snprintf(why, whylen, "\"%.200s\" is not a [PATCH] subject",
				head->subject ? head->subject : ""),
		       -1;
	if (!thread_is_head(head->subject, head->in_reply_to != NULL))
		return snprintf(why, whylen, "\"%.200s\" does not start a series", head->subject), -1;
	{
		const char *no = reply_not_head(msgs, n, head, &out->subj);
		if (no)
			return snprintf(why, whylen, "%s (<%.200s>)", no, head->in_reply_to), -1;
	}
	out->head = head;
	out->has_cover = out->subj.pos == 0 && out->subj.total > 0;
	out->total = out->subj.total ? out->subj.total : 1;
	if (out->total > LIMIT_SERIES_PATCHES)
		return snprintf(why, whylen, "%d patches: more than %d", out->total,
				LIMIT_SERIES_PATCHES),
		       -1;
	/* patches numbered past the count ("[PATCH 3/2]", added later) extend it, as b4 does */
	for (size_t i = 0; i < n; i++) {
		struct patch_subject ps;
		if (series_patch(&msgs[i], head, out, &ps) && ps.pos > out->total)
			out->total = ps.pos;
	}
	out->patches = xcalloc((size_t)out->total, sizeof(*out->patches));
	if (!out->has_cover)
		out->patches[0] = head;
	for (size_t i = 0; i < n; i++) {
		const struct mail_msg *m = &msgs[i];
		struct patch_subject ps;
		if (!series_patch(m, head, out, &ps) || out->patches[ps.pos - 1])
			continue;
		out->patches[ps.pos - 1] = m;
	}
	for (int i = 0; i < out->total; i++)
		if (!out->patches[i] || !out->patches[i]->has_diff)
			missing++;
	if (missing) {
		snprintf(why, whylen, "%d of %d patches not in the thread yet", missing, out->total);
		thread_series_release(out);
		return 0;
	}
	out->base = head->base_commit ? head->base_commit : out->patches[0]->base_commit;
	if (!out->base)
		out->base_other = head->base_other ? head->base_other : out->patches[0]->base_other;
	out->change_id = head->change_id ? head->change_id : out->patches[0]->change_id;
	if (head->nprereq) {
		out->prereq = head->prereq;
		out->nprereq = head->nprereq;
	} else {
		out->prereq = out->patches[0]->prereq;
		out->nprereq = out->patches[0]->nprereq;
	}
	return 1;
}

void thread_series_release(struct thread_series *s)
{
	free(s->patches);
	memset(s, 0, sizeof(*s));
}

void thread_series_key(const struct thread_series *s, char *out, size_t cap)
{
	size_t i;

	if (s->change_id)
		snprintf(out, cap, "change-id:%s", s->change_id);
	else
		snprintf(out, cap, "%s <%s>", s->subj.stem,
			 s->head->from_email ? s->head->from_email : "");
	for (i = 0; out[i]; i++)
		out[i] = (char)tolower((unsigned char)out[i]);
}
