/*
 * test_readcache.c - the read cache's bookkeeping, without a database: an
 * answer is served only under the snapshot it was stored with, the least
 * recently used answers go first when the byte limit is reached, one answer
 * may take at most a quarter of it, a new answer replaces the old one of its
 * key, and an answer evicted while a response still holds it stays readable
 * until that response releases it. (tests/integration/test_readcache.c
 * checks it against real writes.)
 */
#include <criterion/criterion.h>
#include <string.h>

#include "server/reads/readcache.h"
#include "lib/util.h"

static size_t entries(void)
{
	size_t n, bytes;
	unsigned long h, m;
	readcache_stats(&n, &bytes, &h, &m);
	return n;
}

static int get(const char *key, const char *snap, const char *want)
{
	struct readcache_answer *a = readcache_get(key, snap);
	size_t len;
	const char *body;

	if (!a)
		return 0;
	body = readcache_body(a, &len);
	cr_assert_eq(len, strlen(want));
	cr_assert(!memcmp(body, want, len), "%.*s", (int)len, body);
	cr_assert_str_eq(readcache_content_type(a), "application/json");
	cr_assert_eq(readcache_etag(a), hash64(want, strlen(want)));
	readcache_release(a);
	return 1;
}

static void put(const char *key, const char *snap, const char *body)
{
	struct readcache_answer *a =
		readcache_put(key, snap, "application/json", xstrdup(body), strlen(body));
	cr_assert_eq(readcache_etag(a), hash64(body, strlen(body)));
	readcache_release(a);
}

Test(readcache, serves_an_answer_only_under_its_snapshot_and_evicts_the_oldest)
{
	struct readcache_answer *held;
	const char *bytes;
	size_t len;
	char big[300];

	readcache_limit(1000);
	put("/trend?a", "10:12:", "{\"a\":1}");
	cr_assert(get("/trend?a", "10:12:", "{\"a\":1}"));
	cr_assert_not(get("/trend?a", "10:13:", "{\"a\":1}"), "another snapshot must miss");
	cr_assert_not(get("/trend?b", "10:12:", ""), "another key must miss");
	cr_assert_not(get("/trend?", "10:12:", ""), "a prefix of a key must miss");

	/* a new answer replaces its key's old one, which a response still holds */
	held = readcache_get("/trend?a", "10:12:");
	cr_assert_not_null(held);
	put("/trend?a", "10:13:", "{\"a\":2}");
	cr_assert_eq(entries(), 1);
	cr_assert_not(get("/trend?a", "10:12:", "{\"a\":1}"));
	cr_assert(get("/trend?a", "10:13:", "{\"a\":2}"));
	bytes = readcache_body(held, &len);
	cr_assert_eq(len, 7);
	cr_assert(!memcmp(bytes, "{\"a\":1}", 7), "the held answer is intact");
	readcache_release(held);

	/* more than a quarter of the limit is not kept, but still sent */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	held = readcache_put("/compare?big", "10:13:", "application/json", xstrdup(big),
			     strlen(big));
	cr_assert_eq(entries(), 1);
	cr_assert_eq(readcache_body(held, &len)[0], 'x');
	cr_assert_eq(len, strlen(big));
	readcache_release(held);
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

	/* the ETag is XXH64, seed 0: the published test vectors */
	cr_assert_eq(hash64("", 0), 0xef46db3751d8e999ull);
	cr_assert_eq(hash64("a", 1), 0xd24ec4f1a98c6e5bull);
	cr_assert_eq(hash64("abc", 3), 0x44bc2cf5ad770999ull);
}
