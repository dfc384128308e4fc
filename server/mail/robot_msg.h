/*
 * robot_msg.h - the robot's reply in a patch's thread, in the order and
 * form of the kernel test robot's performance reports: headline, commit,
 * base, patch link and subject, test, suggested tags, the LKP table, the
 * bisection, how to reproduce. Also a clean report to a cover letter, a
 * build report to the patch that breaks the build (in the form of the
 * robot's "auto build test ERROR" mail), and the tree-commit form for branch
 * heads.
 */
#ifndef KPERF_ROBOT_MSG_H
#define KPERF_ROBOT_MSG_H

#include "lib/buf.h"

struct robot_facts {
	const char *kind;        /* "regression", "improvement", "clean" or "build" */
	const char *from, *to, *cc, *date, *message_id;
	const char *in_reply_to; /* the patch's (or cover's) Message-ID, with <> */
	const char *references;  /* "<cover> <patch>" */
	const char *reply_subject; /* the patch's subject (replies), or NULL for the tree form */
	/* headline */
	const char *metric, *change; /* "vm-scalability.throughput", "-11.5%" */
	const char *ci;              /* "95% CI -13.0% .. -10.1% (Welch)" or NULL */
	/* what was tested */
	const char *sha, *commit_subject, *base, *patch_url, *patch_subject;
	const char *branch, *area;   /* tree form: "[BRANCH] [AREA] SHA12: ..." */
	const char *suite, *params;  /* params: JSON object */
	const char *machine;         /* "<name>: 4 CPUs, 1 socket, 7976 MB, <cpu model>" */
	const char *report_url;      /* the kperf page of the decision */
	const char *tested;          /* clean: what was tested (lines) */
	const char *lkp_table;
	const char *bisection;       /* lines, or NULL */
	const char *reproduce;       /* lines */
	int regzbot;                 /* add "#regzbot introduced: SHA" (tree form) */
	/* "build": a patch that does not build */
	const char *build_error;     /* "make bzImage exited with status 2: mm/swap.c:469:28: ..." */
	const char *compiler, *config; /* "gcc (Debian 12.2.0-14) 12.2.0", "4255... (tinyconfig ...)" */
	const char *build_lines;     /* the compiler's error lines, one a line */
	const char *position;        /* "3/3": the patch that breaks the build */
};

/* The subject line (without "Subject: "), into out. */
void robot_subject(const struct robot_facts *f, struct buf *out);

/* The whole message (headers and body, CRLF line ends) into out. */
void robot_message(const struct robot_facts *f, struct buf *out);

#endif
