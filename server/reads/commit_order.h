/*
 * commit_order.h - the order of a trend's commits: first-parent order along
 * a branch where parents are known, commit date (then arrival) elsewhere.
 */
#ifndef KPERF_COMMIT_ORDER_H
#define KPERF_COMMIT_ORDER_H

#include <stddef.h>

struct commit_node {
	const char *sha;    /* NULL for a release-only kernel */
	const char *parent; /* NULL when unknown */
	double when;        /* commit date (epoch seconds), else first arrival */
	size_t index;       /* the caller's index, carried along */
};

/*
 * Sort nodes in place: every commit after its parent when both are present,
 * otherwise by when, then by index. O(n log n).
 */
void commit_order(struct commit_node *nodes, size_t n);

#endif
