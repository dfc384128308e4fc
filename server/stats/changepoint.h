/*
 * changepoint.h - steps in a trend's history, where each commit has one or a
 * few runs: binary segmentation with a windowed test of commit means against
 * the history's own noise. Pure: samples in, change points out; kperfd stores
 * them when data arrives and GET /api/v1/trend shows them.
 */
#ifndef KPERF_CHANGEPOINT_H
#define KPERF_CHANGEPOINT_H

#include <stddef.h>

#include "server/stats/stats.h"

/*
 * The method. Commit i's level is the mean of its finite samples, with
 * weight n[i]; its noise is s^2 / n[i]. s is the larger of (a) the robust
 * spread of successive level differences, each scaled by
 * sqrt(1/n[i-1] + 1/n[i]) (1.4826 * MAD, df ~ 0.37 per difference: steps
 * and slow drift barely move it, and it includes noise between commits, such
 * as boot to boot) and (b) the within-commit noise of
 * verdict_noise_from_history (times the median level), when commits have
 * several samples. Binary segmentation: a segment is scanned at every split
 * k that leaves min_seg commits on each side, comparing the weighted mean of
 * `window` commits after k with `window` before (more commits while a side
 * holds fewer than window_samples samples, never past the segment) by a t
 * statistic with s. The best split is a change point when its p,
 * Bonferroni-adjusted for the splits scanned, is below alpha and the shift
 * is at least min_pct of the level before; both halves are then scanned in
 * turn. The windows keep slow drift from adding up to a false step. A final
 * pass moves each point to the least-squares position of one step in the
 * region around it (the sliding windows blur the position), re-measures it
 * between its neighbours, and drops the weakest point that no longer passes
 * until all do.
 * The defaults were chosen with tests/bench/detect.c (`make bench-detect`,
 * its "TUNING the change points" table): on 1,500 simulated trends of 40-120
 * commits, 1-10 runs, four noise shapes and slow drift, window 15 at 0.01
 * finds 78% of the steps within one commit (99.6% of those >= 3 sigma) with
 * 1.1 false points per 1,000 commits; window 30 finds 1% more at 1.5 times
 * the false points, most of them on drifting trends.
 */

#define CP_ALPHA 0.01        /* family-wise level of one segment's scan */
#define CP_MIN_PCT 1.0       /* smallest step worth reporting, % of the level */
#define CP_WINDOW 15         /* commits compared on each side of a split ... */
#define CP_WINDOW_SAMPLES 30 /* ... or more commits, to hold this many samples */
#define CP_MIN_SEG 2         /* commits needed on each side of a step */
#define CP_MAX_COMMITS 1000000

struct cp_config {
	double alpha;          /* 0 < alpha < 1 */
	double min_pct;        /* >= 0 */
	size_t window;         /* >= min_seg */
	size_t window_samples; /* 0: windows are `window` commits exactly */
	size_t min_seg;        /* >= 1 */
};

/* The defaults above. */
void cp_config_init(struct cp_config *cfg);

struct cp_point {
	size_t index;                /* the first commit after the step (with samples) */
	size_t prev;                 /* the last commit before it with samples: the step
	                              * happened in (prev, index], usually prev = index - 1 */
	double before;               /* weighted mean level of the commits before (window) */
	double after;                /* and after */
	double shift_pct;            /* 100 (after - before) / |before| */
	double ci_lo_pct, ci_hi_pct; /* its 95% CI, in percent of before */
	double p;                    /* two-sided, Bonferroni-adjusted for the scan */
};

/*
 * Finds the change points of a history: commit i (in commit order) has
 * samples[i][0..n[i]); a commit without samples (n[i] == 0, samples[i] may
 * be NULL) is skipped, non-finite values are ignored. cfg NULL means the
 * defaults. On success returns 0, sets *out to an array of *nout points in
 * index order, allocated with malloc (the caller frees it; NULL when
 * *nout == 0). A history with fewer than max(3, 2 * min_seg) commits with
 * samples has no points.
 * Returns -1 (with *out = NULL, *nout = 0) on a NULL argument, an invalid
 * cfg or more than CP_MAX_COMMITS commits.
 */
int changepoint_detect(const double *const *samples, const size_t *n, size_t ncommits,
                       const struct cp_config *cfg, struct cp_point **out, size_t *nout);
/* The same with archived runs: arch NULL, or arch[i] the summaries of commit
 * i's archived runs (n 0 when none), counted in its level and noise. */
int changepoint_detect_ex(const double *const *samples, const size_t *n,
                          const struct stats_moments *arch, size_t ncommits,
                          const struct cp_config *cfg, struct cp_point **out, size_t *nout);

#endif
