/*
 * test_commit_order.c - commit_order against the plain O(n^2) statement of
 * its rule (among commits whose parent is placed, the earliest first; in a
 * cycle, the earliest left), on chains, forks, duplicates, cycles and
 * unknown parents, inputs in order already (or all but one), and a branch
 * of 20,000 commits.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/reads/commit_order.h"

static int earlier(const struct commit_node *a, const struct commit_node *b)
{
	if (a->when != b->when)
		return a->when < b->when;
	return a->index < b->index;
}

static void reference(struct commit_node *nodes, size_t n)
{
	struct commit_node *out = malloc(n * sizeof(*out));
	size_t *parent = malloc(n * sizeof(*parent));
	char *placed = calloc(n, 1);

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
		if (best == n)
			for (size_t i = 0; i < n; i++)
				if (!placed[i] && (best == n || earlier(&nodes[i], &nodes[best])))
					best = i;
		placed[best] = 1;
		out[k] = nodes[best];
	}
	memcpy(nodes, out, n * sizeof(*out));
	free(out);
	free(parent);
	free(placed);
}

static char shas[400][24];

Test(commit_order, equals_the_rule_on_random_graphs)
{
	struct commit_node a[400], b[400];
	unsigned seed = 12345;

	for (int round = 0; round < 300; round++) {
		size_t n = 1 + (size_t)(rand_r(&seed) % 400);
		/* 0 chain-ish, 1 forks, 2 duplicates + cycles, 3 sparse, 4 in order
		 * already (dates ascending with ties, parents earlier), 5 the same
		 * with one parent or one date out of order */
		int shapes = round % 6;
		for (size_t i = 0; i < n; i++) {
			int r = rand_r(&seed);
			snprintf(shas[i], sizeof(shas[i]), "%zx", shapes == 2 ? i % (n / 2 + 1) : i);
			a[i].sha = r % 17 == 0 ? NULL : shas[i];
			if (shapes == 0)
				a[i].parent = i && r % 5 ? shas[i - 1] : NULL;
			else if (shapes == 3)
				a[i].parent = r % 3 ? "ffffff" : shas[(size_t)r % n];
			else if (shapes >= 4)
				a[i].parent = i && r % 4 ? shas[(size_t)(r / 4) % i] : NULL;
			else
				a[i].parent = r % 7 ? shas[(size_t)(r / 7) % n] : NULL;
			if (shapes >= 4)
				a[i].when = (double)(i / 3);
			else
				a[i].when = (double)(rand_r(&seed) % (shapes == 1 ? 5 : 1000));
			a[i].index = i;
		}
		if (shapes == 5 && n > 2) {
			size_t i = 1 + (size_t)rand_r(&seed) % (n - 1);
			if (round % 12 == 5)
				a[i - 1].when = a[i].when + 1; /* a date out of order */
			else
				a[i - 1].parent = shas[i]; /* a parent after its child */
		}
		memcpy(b, a, n * sizeof(*a));
		commit_order(a, n);
		reference(b, n);
		for (size_t i = 0; i < n; i++)
			cr_assert_eq(a[i].index, b[i].index, "round %d (n %zu): position %zu: %zu, want %zu",
				     round, n, i, a[i].index, b[i].index);
	}
}

Test(commit_order, a_long_branch_follows_its_parents_not_its_dates)
{
	enum { N = 20000 };
	struct commit_node *a = calloc(N, sizeof(*a));
	char (*sha)[16] = calloc(N, sizeof(*sha));

	for (size_t i = 0; i < N; i++)
		snprintf(sha[i], sizeof(sha[i]), "c%05zu", i);
	for (size_t i = 0; i < N; i++) {
		size_t slot = (i * 7919) % N; /* shuffled input */
		a[slot].sha = sha[i];
		a[slot].parent = i ? sha[i - 1] : NULL;
		a[slot].when = (double)(N - i); /* dates say the opposite order */
		a[slot].index = slot;
	}
	commit_order(a, N);
	for (size_t i = 0; i < N; i++)
		cr_assert_str_eq(a[i].sha, sha[i], "position %zu", i);
	free(a);
	free(sha);
}
