/*
 * commit_order.c - a topological sort (Kahn's algorithm) in which, among the
 * commits whose parent has already been placed, the earliest comes first:
 * parents found in a hash table of the shas, the ready commits kept in a
 * binary heap, so a trend of thousands of commits orders in O(n log n).
 */
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "server/reads/commit_order.h"
#include "lib/util.h"

static int earlier(const struct commit_node *a, const struct commit_node *b)
{
	if (a->when != b->when)
		return a->when < b->when;
	return a->index < b->index;
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

/*
 * The nodes by sha: an open-addressing table of the lowest index of each sha,
 * and per node the next higher index with the same sha (duplicates are rare
 * but allowed). Hashing each sha once beats sorting them: a kernel branch's
 * shas can share long prefixes, which every comparison would walk again.
 */
struct sha_index {
	size_t *slot, mask; /* node index + 1, 0 empty */
	size_t *next;       /* next node with the same sha, or n */
};

static size_t sha_hash(const char *s)
{
	return (size_t)XXH3_64bits(s, strlen(s));
}

static void sha_index_build(struct sha_index *x, const struct commit_node *nodes, size_t n)
{
	size_t size = 16;

	while (size < 2 * n)
		size *= 2;
	x->mask = size - 1;
	x->slot = xcalloc(size, sizeof(*x->slot));
	x->next = xmalloc((n ? n : 1) * sizeof(*x->next));
	for (size_t i = 0; i < n; i++) {
		size_t h;

		x->next[i] = n;
		if (!nodes[i].sha)
			continue;
		for (h = sha_hash(nodes[i].sha) & x->mask; x->slot[h]; h = (h + 1) & x->mask)
			if (!strcmp(nodes[x->slot[h] - 1].sha, nodes[i].sha))
				break;
		if (!x->slot[h]) {
			x->slot[h] = i + 1;
		} else { /* a duplicate: at the end of its chain, in index order */
			size_t j = x->slot[h] - 1;
			while (x->next[j] < n)
				j = x->next[j];
			x->next[j] = i;
		}
	}
}

/* The first node (lowest index) other than self whose sha is sha, or n. */
static size_t find_sha(const struct sha_index *x, const struct commit_node *nodes,
		       const char *sha, size_t self, size_t n)
{
	for (size_t h = sha_hash(sha) & x->mask; x->slot[h]; h = (h + 1) & x->mask) {
		size_t j = x->slot[h] - 1;
		if (strcmp(nodes[j].sha, sha))
			continue;
		for (; j < n; j = x->next[j])
			if (j != self)
				return j;
		return n;
	}
	return n;
}

/* 1 when the nodes are in order already: dates ascending and each parent
 * before its children, as commits by id usually are. The earliest unplaced
 * commit is then always ready, so the order is the input's. */
static int in_order(const struct commit_node *nodes, const size_t *parent, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((parent[i] < n && parent[i] > i) || (i && !earlier(&nodes[i - 1], &nodes[i])))
			return 0;
	return 1;
}

void commit_order(struct commit_node *nodes, size_t n)
{
	size_t cap = n ? n : 1, k = 0;
	size_t *parent = xmalloc(cap * sizeof(*parent));
	struct sha_index shas;
	struct commit_node *out;
	size_t *first_child, *children;
	char *placed;
	struct heap h = {nodes, NULL, 0};

	sha_index_build(&shas, nodes, n);
	/* parent[i]: index of i's parent among the nodes, or n */
	for (size_t i = 0; i < n; i++)
		parent[i] = nodes[i].parent ? find_sha(&shas, nodes, nodes[i].parent, i, n) : n;
	free(shas.slot);
	free(shas.next);
	if (in_order(nodes, parent, n)) {
		free(parent);
		return;
	}
	out = xmalloc(cap * sizeof(*out));
	first_child = xmalloc((cap + 1) * sizeof(*first_child));
	children = xmalloc(cap * sizeof(*children));
	placed = xcalloc(cap, 1);
	h.v = xmalloc(cap * sizeof(size_t));
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
	free(first_child);
	free(children);
	free(placed);
}
