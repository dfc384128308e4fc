/*
 * commit_order.c - a topological sort (Kahn's algorithm) in which, among the
 * commits whose parent has already been placed, the earliest comes first.
 */
#include <stdlib.h>
#include <string.h>

#include "commit_order.h"
#include "util.h"

static int earlier(const struct commit_node *a, const struct commit_node *b)
{
	if (a->when != b->when)
		return a->when < b->when;
	return a->index < b->index;
}

void commit_order(struct commit_node *nodes, size_t n)
{
	struct commit_node *out = xmalloc((n ? n : 1) * sizeof(*out));
	size_t *parent = xmalloc((n ? n : 1) * sizeof(*parent));
	char *placed = xcalloc(n ? n : 1, 1);

	/* parent[i]: index of i's parent among the nodes, or n */
	for (size_t i = 0; i < n; i++) {
		parent[i] = n;
		for (size_t j = 0; nodes[i].parent && j < n; j++)
			if (j != i && nodes[j].sha && !strcmp(nodes[j].sha, nodes[i].parent)) {
				parent[i] = j;
				break;
			}
	}
	for (size_t k = 0; k < n; k++) {
		size_t best = n;
		for (size_t i = 0; i < n; i++) {
			if (placed[i] || (parent[i] < n && !placed[parent[i]]))
				continue;
			if (best == n || earlier(&nodes[i], &nodes[best]))
				best = i;
		}
		if (best == n) { /* a cycle in bad data: place the earliest left */
			for (size_t i = 0; i < n; i++)
				if (!placed[i] && (best == n || earlier(&nodes[i], &nodes[best])))
					best = i;
		}
		placed[best] = 1;
		out[k] = nodes[best];
	}
	memcpy(nodes, out, n * sizeof(*out));
	free(out);
	free(parent);
	free(placed);
}
