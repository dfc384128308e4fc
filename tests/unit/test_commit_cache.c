/*
 * test_commit_cache.c - the commit cache's generations, without a database
 * (results built with libpq's PQsetvalue): commits are found under the epoch
 * they were kept with; a newer epoch starts empty while a reader of the old
 * one still reads what it found; a reader with an older epoch (one that raced
 * an update) gets a generation of its own and never fills the shared one.
 * (tests/integration/test_reads.c checks it against real updates.)
 */
#include <criterion/criterion.h>
#include <endian.h>
#include <string.h>

#include "server/reads/commit_cache.h"
#include "lib/kperf_limits.h"

/* A binary result of COMMIT_CACHE_COLUMNS: one commit per id, sha "s<id>"
 * (NULL for odd ids' parent), committed_at id * 10 (none for id 3). */
static PGresult *commits(const long *ids, int n)
{
	PGresult *r = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
	PGresAttDesc attrs[6];
	static const char *const names[6] = {"id",	"sha",	   "parent_sha",
					     "release", "subject", "committed_at"};

	memset(attrs, 0, sizeof(attrs));
	for (int c = 0; c < 6; c++) {
		attrs[c].name = (char *)names[c];
		attrs[c].format = 1;
	}
	cr_assert(PQsetResultAttrs(r, 6, attrs));
	for (int i = 0; i < n; i++) {
		uint64_t id = htobe64((uint64_t)ids[i]), when = htobe64((uint64_t)ids[i] * 10);
		char sha[16], subject[32];

		snprintf(sha, sizeof(sha), "s%ld", ids[i]);
		snprintf(subject, sizeof(subject), "mm: commit %ld", ids[i]);
		cr_assert(PQsetvalue(r, i, 0, (char *)&id, 8));
		cr_assert(PQsetvalue(r, i, 1, sha, (int)strlen(sha)));
		cr_assert(PQsetvalue(r, i, 2, ids[i] % 2 ? NULL : "p", ids[i] % 2 ? -1 : 1));
		cr_assert(PQsetvalue(r, i, 3, NULL, -1));
		cr_assert(PQsetvalue(r, i, 4, subject, (int)strlen(subject)));
		cr_assert(PQsetvalue(r, i, 5, ids[i] == 3 ? NULL : (char *)&when, ids[i] == 3 ? -1 : 8));
	}
	return r;
}

static size_t missing(struct commit_gen *g, const long *ids, size_t n,
		      const struct commit_info **out)
{
	return commit_cache_find(g, ids, n, out);
}

Test(commit_cache, generations_by_epoch)
{
	static const long ids[3] = {2, 3, 5};
	const struct commit_info *found[3], *again[3];
	struct commit_gen *a = commit_cache_take(100), *b, *old, *newer;
	PGresult *r = commits(ids, 3);

	cr_expect_eq(missing(a, ids, 3, found), 3);
	commit_cache_add(a, r);
	PQclear(r); /* kept as copies */
	cr_assert_eq(missing(a, ids, 3, found), 0);
	cr_expect_str_eq(found[0]->sha, "s2");
	cr_expect_str_eq(found[0]->parent, "p");
	cr_expect_null(found[1]->parent);
	cr_expect_null(found[2]->release);
	cr_expect_str_eq(found[2]->subject, "mm: commit 5");
	cr_expect(found[0]->has_date && found[0]->committed == 20);
	cr_expect(!found[1]->has_date);
	/* the members a trend point shows, made once (dates: PostgreSQL's epoch) */
	cr_expect_eq(found[0]->json_len, strlen(found[0]->json));
	cr_expect_str_eq(found[0]->json, "\"commit\":\"s2\",\"parent\":\"p\",\"release\":null,"
					 "\"subject\":\"mm: commit 2\",\"date\":\"2000-01-01T00:00:00Z\"");
	cr_expect_str_eq(found[1]->json, "\"commit\":\"s3\",\"parent\":null,\"release\":null,"
					 "\"subject\":\"mm: commit 3\",\"date\":null");

	/* the same epoch: the same commits */
	b = commit_cache_take(100);
	cr_expect_eq(missing(b, ids, 3, again), 0);
	cr_expect_eq(again[2], found[2]);
	commit_cache_put(b);

	/* an older epoch: a generation of its own, empty, filled apart */
	old = commit_cache_take(99);
	cr_expect_eq(missing(old, ids, 3, again), 3);
	r = commits(ids + 2, 1);
	commit_cache_add(old, r);
	PQclear(r);
	cr_expect_eq(missing(old, ids, 3, again), 2);
	commit_cache_put(old);
	b = commit_cache_take(100); /* still the shared one, untouched */
	cr_expect_eq(missing(b, ids, 3, again), 0);
	cr_expect_eq(again[2], found[2]);
	commit_cache_put(b);

	/* a newer epoch starts empty; what a holds stays readable */
	newer = commit_cache_take(101);
	cr_expect_eq(missing(newer, ids, 3, again), 3);
	cr_expect_str_eq(found[1]->sha, "s3");
	cr_expect_str_eq(found[2]->subject, "mm: commit 5");
	commit_cache_put(a);
	b = commit_cache_take(101);
	cr_expect_eq(b, newer);
	commit_cache_put(b);
	commit_cache_put(newer);
}

Test(commit_cache, many_commits_and_repeats)
{
	enum { N = 5000 };
	long *ids = calloc(N, sizeof(*ids));
	const struct commit_info **out = calloc(N, sizeof(*out));
	struct commit_gen *g = commit_cache_take(7);
	PGresult *r;

	for (int i = 0; i < N; i++)
		ids[i] = 1000003L * (i + 1); /* spread over the table */
	r = commits(ids, N);
	commit_cache_add(g, r);
	commit_cache_add(g, r); /* again: nothing added twice */
	PQclear(r);
	cr_assert_eq(missing(g, ids, N, out), 0);
	for (int i = 0; i < N; i++) {
		char sha[24];
		snprintf(sha, sizeof(sha), "s%ld", ids[i]);
		cr_assert_eq(out[i]->id, ids[i]);
		cr_assert_str_eq(out[i]->sha, sha);
	}
	ids[0] = 42;
	cr_expect_eq(missing(g, ids, 1, out), 1);
	cr_expect_null(out[0]);
	commit_cache_put(g);
	free(ids);
	free(out);
}

/* A generation that fills up still takes what its holder reads (the holder
 * finds every commit it read), and the next reader of the same epoch
 * starts an empty one. */
Test(commit_cache, a_full_generation_is_replaced)
{
	enum { N = LIMIT_COMMIT_CACHE + 5 };
	long *ids = calloc(N, sizeof(*ids));
	const struct commit_info **out = calloc(N, sizeof(*out));
	struct commit_gen *g = commit_cache_take(9), *next;
	PGresult *r;

	for (int i = 0; i < N; i++)
		ids[i] = i + 1;
	r = commits(ids, N);
	commit_cache_add(g, r);
	PQclear(r);
	cr_expect_eq(missing(g, ids, N, out), 0); /* past the limit, all there */
	cr_expect_str_eq(out[0]->sha, "s1");
	next = commit_cache_take(9);
	cr_expect_neq(next, g);
	cr_expect_eq(missing(next, ids, 1, out + N - 1), 1);
	cr_expect_str_eq(out[0]->sha, "s1"); /* still readable */
	commit_cache_put(g);
	commit_cache_put(next);
	free(ids);
	free(out);
}
