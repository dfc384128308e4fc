/*
 * commit_order.c - a topological sort (Kahn's algorithm) in which, among the
 * commits whose parent has already been placed, the earliest comes first:
 * parents found by binary search over the shas, the ready commits kept in a
 * binary heap, so a trend of thousands of commits orders in O(n log n).
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

static int by_sha(const void *a, const void *b, void *arg)
{
	const struct commit_node *nodes = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(nodes[x].sha, nodes[y].sha);
	return c ? c : (x > y) - (x < y);
}

struct heap {
	const struct commit_node *nodes;
	size_t *v, n;
};

static void heap_push(struct heap *h, size_t i)
{
	size_t k = h->n++;
	while (k && earlier(&h->nodes[i], &h->nodes[h->v[(k - 1) / 2]])) {
		h->v[k] = h->v[(k - 1) / 2];
		k = (k - 1) / 2;
	}
	h->v[k] = i;
}

static size_t heap_pop(struct heap *h)
{
	size_t top = h->v[0], last = h->v[--h->n], k = 0;
	for (;;) {
		size_t c = 2 * k + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && earlier(&h->nodes[h->v[c + 1]], &h->nodes[h->v[c]]))
			c++;
		if (!earlier(&h->nodes[h->v[c]], &h->nodes[last]))
			break;
		h->v[k] = h->v[c];
		k = c;
	}
	if (h->n)
		h->v[k] = last;
	return top;
}

/* The first node (lowest index) other than self whose sha is sha, or n. */
static size_t find_sha(const struct commit_node *nodes, const size_t *sorted, size_t m,
		       const char *sha, size_t self, size_t n)
{
	size_t lo = 0, hi = m;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(nodes[sorted[mid]].sha, sha) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < m && !strcmp(nodes[sorted[lo]].sha, sha); lo++)
		if (sorted[lo] != self)
			return sorted[lo];
	return n;
}

void commit_order(struct commit_node *nodes, size_t n)
{
	size_t cap = n ? n : 1, m = 0, k = 0;
	struct commit_node *out = xmalloc(cap * sizeof(*out));
	size_t *parent = xmalloc(cap * sizeof(*parent));
	size_t *sorted = xmalloc(cap * sizeof(*sorted));
	size_t *first_child = xmalloc((cap + 1) * sizeof(*first_child));
	size_t *children = xmalloc(cap * sizeof(*children));
	char *placed = xcalloc(cap, 1);
	struct heap h = {nodes, xmalloc(cap * sizeof(size_t)), 0};

	for (size_t i = 0; i < n; i++)
		if (nodes[i].sha)
			sorted[m++] = i;
	qsort_r(sorted, m, sizeof(*sorted), by_sha, nodes);
	/* parent[i]: index of i's parent among the nodes, or n */
	for (size_t i = 0; i < n; i++)
		parent[i] = nodes[i].parent ? find_sha(nodes, sorted, m, nodes[i].parent, i, n) : n;
	/* children of each node, grouped (counting sort by parent) */
	memset(first_child, 0, (cap + 1) * sizeof(*first_child));
	for (size_t i = 0; i < n; i++)
		if (parent[i] < n)
			first_child[parent[i] + 1]++;
	for (size_t i = 0; i < n; i++)
		first_child[i + 1] += first_child[i];
	{
		size_t *fill = xmalloc(cap * sizeof(*fill));
		memcpy(fill, first_child, n * sizeof(*fill));
		for (size_t i = 0; i < n; i++)
			if (parent[i] < n)
				children[fill[parent[i]]++] = i;
		free(fill);
	}
	for (size_t i = 0; i < n; i++)
		if (parent[i] == n)
			heap_push(&h, i);
	while (k < n) {
		size_t best;
		if (h.n) {
			best = heap_pop(&h);
		} else { /* a cycle in bad data: place the earliest left */
			best = n;
			for (size_t i = 0; i < n; i++)
				if (!placed[i] && (best == n || earlier(&nodes[i], &nodes[best])))
					best = i;
		}
		placed[best] = 1;
		out[k++] = nodes[best];
		for (size_t c = first_child[best]; c < first_child[best + 1]; c++)
			if (!placed[children[c]])
				heap_push(&h, children[c]);
	}
	memcpy(nodes, out, n * sizeof(*out));
	free(h.v);
	free(out);
	free(parent);
	free(sorted);
	free(first_child);
	free(children);
	free(placed);
}
