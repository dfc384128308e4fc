/*
 * test_readcache.c - the read cache's bookkeeping, without a database: an
 * answer is served only under the snapshot it was stored with, the least
 * recently used answers go first when the byte limit is reached, one answer
 * may take at most a quarter of it, and a new answer replaces the old one of
 * its key. (test_readcache in tests/integration checks it against writes.)
 */
#include <criterion/criterion.h>
#include <string.h>

#include "buf.h"
#include "readcache.h"
#include "util.h"

static size_t entries(void)
{
	size_t n, bytes;
	unsigned long h, m;
	readcache_stats(&n, &bytes, &h, &m);
	return n;
}

static int get(const char *key, const char *snap, const char *want)
{
	struct buf b = BUF_INIT;
	const char *ct = NULL;
	uint64_t tag = 0;
	int hit = readcache_get(key, snap, &b, &ct, &tag);

	if (hit) {
		cr_assert_str_eq(buf_str(&b), want);
		cr_assert_str_eq(ct, "application/json");
		cr_assert_eq(tag, hash_fnv1a64(want, strlen(want)));
	}
	buf_release(&b);
	return hit;
}

static void put(const char *key, const char *snap, const char *body)
{
	uint64_t tag;
	readcache_put(key, snap, "application/json", body, strlen(body), &tag);
	cr_assert_eq(tag, hash_fnv1a64(body, strlen(body)));
}

Test(readcache, serves_an_answer_only_under_its_snapshot_and_evicts_the_oldest)
{
	char big[300];

	readcache_limit(1000);
	put("/trend?a", "10:12:", "{\"a\":1}");
	cr_assert(get("/trend?a", "10:12:", "{\"a\":1}"));
	cr_assert_not(get("/trend?a", "10:13:", "{\"a\":1}"), "another snapshot must miss");
	cr_assert_not(get("/trend?b", "10:12:", ""), "another key must miss");
	cr_assert_not(get("/trend?", "10:12:", ""), "a prefix of a key must miss");

	/* a new answer replaces its key's old one */
	put("/trend?a", "10:13:", "{\"a\":2}");
	cr_assert_eq(entries(), 1);
	cr_assert_not(get("/trend?a", "10:12:", "{\"a\":1}"));
	cr_assert(get("/trend?a", "10:13:", "{\"a\":2}"));

	/* more than a quarter of the limit is not kept */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	put("/compare?big", "10:13:", big);
	cr_assert_eq(entries(), 1);
	cr_assert_not(get("/compare?big", "10:13:", big));

	/* a, then three answers of 248 bytes: 759 of 1,000; a fourth evicts the least recently used */
	big[240] = '\0';
	put("/trend?b", "10:13:", big);
	put("/trend?c", "10:13:", big);
	put("/trend?d", "10:13:", big);
	cr_assert(get("/trend?a", "10:13:", "{\"a\":2}")); /* now a is the most recent */
	put("/trend?e", "10:13:", big);
	cr_assert_eq(entries(), 4);
	cr_assert_not(get("/trend?b", "10:13:", big), "b was the least recently used");
	cr_assert(get("/trend?a", "10:13:", "{\"a\":2}"));
	cr_assert(get("/trend?e", "10:13:", big));

	/* the ETag is FNV-1a 64: the published test vectors */
	cr_assert_eq(hash_fnv1a64("", 0), 0xcbf29ce484222325ull);
	cr_assert_eq(hash_fnv1a64("a", 1), 0xaf63dc4c8601ec8cull);
	cr_assert_eq(hash_fnv1a64("foobar", 6), 0x85944171f73967e8ull);
}
