/*
 * test_review_api.c - the small things a reviewer's first hour met: an
 * unknown subscription key is named, a subscription without filters warns,
 * an invalidated run says so, a short sha is called short, a tag as git
 * describe names it resolves, and an agent restarted with a smaller
 * catalogue offers only what it lists.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/integration/harness.h"

static struct kperfd K;

static void setup(void)
{
	kperfd_start(&K, NULL);
}

static void teardown(void)
{
	kperfd_stop(&K);
}

TestSuite(review_api, .init = setup, .fini = teardown, .timeout = 120);

static const char *str(json_t *j, const char *k)
{
	return json_string_value(json_object_get(j, k));
}

Test(review_api, subscriptions_name_unknown_keys_and_warn_when_catch_all)
{
	json_t *j = NULL;
	long st;

	st = harness_call(&K, "POST", "/api/v1/subscriptions", TOKEN_ADMIN,
			  "{\"address\":\"a@example.org\",\"suite\":\"fio\"}", &j);
	cr_assert_eq(st, 400);
	cr_expect_str_eq(str(j, "field"), "address");
	cr_expect(strstr(str(j, "message"), "unknown key \"address\"") != NULL, "%s", str(j, "message"));
	cr_expect(strstr(str(j, "message"), "email") != NULL, "%s", str(j, "message"));
	json_decref(j);

	st = harness_call(&K, "POST", "/api/v1/subscriptions", TOKEN_ADMIN,
			  "{\"email\":\"a@example.org\"}", &j);
	cr_assert_eq(st, 201);
	cr_expect(strstr(str(j, "warning"), "catch-all") != NULL);
	json_decref(j);
	st = harness_call(&K, "POST", "/api/v1/subscriptions", TOKEN_ADMIN,
			  "{\"email\":\"a@example.org\",\"suite\":\"fio\"}", &j);
	cr_assert_eq(st, 201);
	cr_expect_null(json_object_get(j, "warning"));
	json_decref(j);
}

Test(review_api, refs_invalid_runs_and_offers)
{
	json_t *j = NULL;
	long st;

	st = harness_call(&K, "POST", "/api/v1/commits", TOKEN_COLLECTOR,
			  "[{\"sha\":\"09f2aa11bb22cc33dd44ee55ff6677889900aabb\",\"subject\":\"Linux"
			  " 6.4-rc4\",\"describe\":\"v6.4-rc4\"},"
			  "{\"sha\":\"f1989218504dfe1ab4bdad3b8c0422f57c7698db\",\"parent\":"
			  "\"09f2aa11bb22cc33dd44ee55ff6677889900aabb\",\"subject\":\"pagevec\"}]",
			  NULL);
	cr_assert_eq(st, 201);
	for (int i = 0; i < 2; i++) {
		char body[512];
		snprintf(body, sizeof(body),
			 "{\"run_id\":\"ra-%d\",\"machine\":{\"name\":\"ra-box\"},\"kernel\":{\"commit\":"
			 "\"%s\"},\"test\":{\"suite\":\"memtier\"},\"metrics\":{\"memtier.ops/s\":[%d]}}",
			 i, i ? "f1989218504dfe1ab4bdad3b8c0422f57c7698db"
			      : "09f2aa11bb22cc33dd44ee55ff6677889900aabb",
			 100 + i);
		cr_assert_eq(harness_call(&K, "POST", "/api/v1/runs", TOKEN_COLLECTOR, body, NULL), 201);
	}
	/* a tag as git describe names it */
	st = harness_call(&K, "GET", "/api/v1/compare?base=v6.4-rc4&target=f1989218504d", NULL, NULL,
			  &j);
	cr_expect_eq(st, 200);
	cr_expect_str_eq(str(json_object_get(j, "base"), "commit"),
			 "09f2aa11bb22cc33dd44ee55ff6677889900aabb");
	json_decref(j);
	/* four hex digits are no sha */
	st = harness_call(&K, "GET", "/api/v1/compare?base=09f2&target=f1989218504d", NULL, NULL, &j);
	cr_expect_eq(st, 400);
	cr_expect_str_eq(str(j, "field"), "base");
	cr_expect(strstr(str(j, "message"), "7 or more hex digits") != NULL, "%s", str(j, "message"));
	json_decref(j);

	/* an invalidated run says so; a valid one is as posted */
	st = harness_call(&K, "GET", "/api/v1/runs/ra-0", NULL, NULL, &j);
	cr_assert_eq(st, 200);
	cr_expect_null(json_object_get(j, "valid"));
	json_decref(j);
	cr_assert_eq(harness_call(&K, "DELETE", "/api/v1/runs/ra-0", TOKEN_ADMIN, NULL, NULL), 200);
	st = harness_call(&K, "GET", "/api/v1/runs/ra-0", NULL, NULL, &j);
	cr_assert_eq(st, 200);
	cr_expect(json_is_false(json_object_get(j, "valid")));
	cr_expect(json_is_string(json_object_get(j, "invalidated_at")));
	json_decref(j);

	/* what an agent offers is what its last claim listed */
	st = harness_call(&K, "POST", "/api/v1/jobs/claim", TOKEN_COLLECTOR,
			  "{\"machine\":\"ra-box\",\"running\":{\"commit\":null,\"release\":\"x\"},"
			  "\"tests\":[{\"suite\":\"memtier\"},{\"suite\":\"fio\"}],\"wait_s\":0}",
			  NULL);
	cr_assert(st == 200 || st == 204, "%ld", st);
	st = harness_call(&K, "GET", "/api/v1/agents", NULL, NULL, &j);
	cr_assert_eq(st, 200);
	cr_expect_eq(json_array_size(json_object_get(json_array_get(json_object_get(j, "items"), 0),
						     "tests")),
		     2);
	json_decref(j);
	st = harness_call(&K, "POST", "/api/v1/jobs/claim", TOKEN_COLLECTOR,
			  "{\"machine\":\"ra-box\",\"running\":{\"commit\":null,\"release\":\"x\"},"
			  "\"tests\":[{\"suite\":\"fio\"}],\"wait_s\":0}",
			  NULL);
	cr_assert(st == 200 || st == 204, "%ld", st);
	st = harness_call(&K, "GET", "/api/v1/agents", NULL, NULL, &j);
	{
		json_t *tests = json_object_get(json_array_get(json_object_get(j, "items"), 0), "tests");
		cr_expect_eq(json_array_size(tests), 1);
		cr_expect_str_eq(str(json_array_get(tests, 0), "suite"), "fio");
	}
	json_decref(j);
}
