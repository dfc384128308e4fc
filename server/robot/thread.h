/*
 * thread.h - one posted series version read out of its thread: the head
 * (cover letter, or first patch) and patches 1..total in order, each a
 * [PATCH] mail of the head's version and count with a diff, sent in reply
 * to the head. Replies, mails without a diff and kperf's own mails are
 * not patches.
 */
#ifndef KPERF_ROBOT_THREAD_H
#define KPERF_ROBOT_THREAD_H

#include <stddef.h>

#include "lib/mail.h"
#include "lib/patch_subject.h"

struct thread_series {
	const struct mail_msg *head;     /* borrowed from the thread's messages */
	const struct mail_msg **patches; /* [total], position i + 1; malloc'd */
	struct patch_subject subj;       /* of the head */
	int total;
	int has_cover;
	const char *base;        /* base-commit: of the head, else of patch 1; NULL */
	const char *base_other;  /* without base: a base-commit: value that is no sha; NULL */
	const char *change_id;   /* change-id: of the head, else of patch 1; NULL */
	char **prereq;           /* borrowed */
	size_t nprereq;
};

/* A head's subject: a [PATCH] mail that is a 0/N cover, a 1/N or an
 * uncounted patch, a reply or not (whether a reply starts a series, its
 * thread tells: thread_series), never kperf's own. */
int thread_is_head(const char *subject, int is_reply);

/*
 * The series headed by head_msgid among msgs: 1 (out filled; free with
 * thread_series_release), 0 when patches are still missing, -1 when the
 * head is no series head; why says what is missing or wrong.
 */
int thread_series(const struct mail_msg *msgs, size_t n, const char *head_msgid,
		  struct thread_series *out, char *why, size_t whylen);
void thread_series_release(struct thread_series *s);

/* The key versions of one series share: "change-id:ID", else the subject
 * stem and the author's address, lower case. */
void thread_series_key(const struct thread_series *s, char *out, size_t cap);

#endif
