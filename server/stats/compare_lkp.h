/*
 * compare_lkp.h - LKP's ncompare text for a loaded comparison: one block per
 * (machine, test, variant) that the base and a target both ran. Used by the
 * compare API and by alert mail.
 */
#ifndef KPERF_COMPARE_LKP_H
#define KPERF_COMPARE_LKP_H

#include "lib/buf.h"
#include "server/stats/compare.h"
#include "server/stats/stats_lkp.h"

/* Append the blocks of set (keys sorted) to out; kernels[side] names each side. */
void cmp_render_lkp(const struct cmp_set *set, const struct lkp_kernel *kernels, struct buf *out);

#endif
