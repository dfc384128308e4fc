/*
 * compare.h - one GET /api/v1/compare request: its refs and filters, the
 * samples loaded per side, and the text renderings (LKP, mmtests, CSV).
 */
#ifndef KPERF_API_COMPARE_H
#define KPERF_API_COMPARE_H

#include "lib/buf.h"
#include "server/stats/compare.h"
#include "api/ref.h"

struct compare_req {
	struct ref refs[COMPARE_SIDES_MAX]; /* [0] is the base */
	int nrefs;
	const char *metric_glob;  /* as given, NULL when absent */
	const char *operand;      /* mmtests operand param, NULL: the default */
	int significant;
	struct cmp_set set;       /* keys sorted after loading */
	size_t runs[COMPARE_SIDES_MAX];
	char *run_ids[COMPARE_SIDES_MAX]; /* bigint[] literal of each side's runs */
	struct compare_cmd *cmds;         /* per suite and side (compare_cmd.h) */
	size_t ncmds;
};

/* A suite's distinct commands on one side, and their work arguments. */
struct compare_cmd {
	char *suite;
	int side;
	char **commands, **work; /* ncommands each, work sorted and distinct */
	size_t ncommands, nwork;
	char *not_judged;        /* targets: why rows are not judged, or NULL */
};

/* The LKP ncompare text of every (machine, test, variant) block. */
void compare_render_lkp(const struct compare_req *q, struct buf *out);

/*
 * The mmtests compare-kernels text, one table per metric (and machine, test,
 * variant), operands from the q->operand param (default nr_threads, threads
 * or clients). Returns 0, or -1 with a message in err when q->operand names
 * a param no run has.
 */
int compare_render_mmtests(const struct compare_req *q, struct buf *out, char *err,
			   size_t errlen);

/* One CSV line per row (header first); rows filtered as the JSON rows are. */
void compare_render_csv(const struct compare_req *q, struct buf *out);

/* 1 when the row is to be shown under q's significant= filter. */
static inline int compare_row_shown(const struct compare_req *q, const struct cmp_row *row)
{
	return !q->significant || row->verdict != VERDICT_NOISE;
}

#endif
