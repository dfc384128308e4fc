/*
 * test_review_api.c - the small things a reviewer's first hour met: an
 * unknown subscription key is named, a subscription without filters warns,
 * an invalidated run says so, a short sha is called short, a tag as git
 * describe names it resolves, an agent restarted with a smaller
 * catalogue offers only what it lists, and the mglru focus (one rule for
 * the regressions list and subscriptions) keeps the KPIs and the reclaim
 * counters of MGLRU runs.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* A subscription whose COMMIT fails (a deferred constraint trigger here) is
 * not answered 201, and is not there after. */
Test(review_api, a_subscription_whose_commit_fails_is_not_acknowledged)
{
	PGconn *c = harness_db(&K);
	json_t *j = NULL;
	long st;

	PQclear(PQexec(c, "CREATE FUNCTION refuse_late() RETURNS trigger LANGUAGE plpgsql AS"
			  " $$BEGIN RAISE EXCEPTION 'refused at COMMIT'; END$$"));
	PQclear(PQexec(c, "CREATE CONSTRAINT TRIGGER refuse_late AFTER INSERT ON subscription"
			  " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_late()"));
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM pg_trigger WHERE tgname = 'refuse_late'"),
		     1);
	st = harness_call(&K, "POST", "/api/v1/subscriptions", TOKEN_ADMIN,
			  "{\"email\":\"late@example.org\",\"suite\":\"fio\"}", &j);
	cr_expect_geq(st, 500, "answered %ld", st);
	cr_expect(str(j, "error") != NULL, "no JSON error");
	json_decref(j);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM subscription"), 0);
	PQclear(PQexec(c, "DROP TRIGGER refuse_late ON subscription"));
	st = harness_call(&K, "POST", "/api/v1/subscriptions", TOKEN_ADMIN,
			  "{\"email\":\"late@example.org\",\"suite\":\"fio\"}", &j);
	cr_expect_eq(st, 201);
	json_decref(j);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM subscription"), 1);
	PQfinish(c);
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

/* Three runs a side on machine m (knobs: its variant), every metric up by
 * half on the patch. */
static void post_focus_runs(const char *m, const char *knobs)
{
	static const char *const metrics[] = {"ycsb.total_throughput_ops/s", "proc-vmstat.pgscan_kswapd",
					      "proc-vmstat.pgfault", "meminfo.Cached"};
	char body[2048];

	for (int i = 0; i < 6; i++) {
		int patch = i >= 3;
		size_t n;
		n = (size_t)snprintf(body, sizeof(body),
				     "{\"run_id\":\"%s-%d\",\"machine\":{\"name\":\"%s\"},\"kernel\":"
				     "{\"commit\":\"%s\"},\"variant\":%s,\"test\":{\"suite\":\"ycsb\"},"
				     "\"metrics\":{",
				     m, i, m,
				     patch ? "fb0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c02"
					   : "fb0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c01",
				     knobs);
		for (size_t k = 0; k < 4; k++) {
			double v = (patch ? 1500.0 : 1000.0) * (double)(k + 1);
			n += (size_t)snprintf(body + n, sizeof(body) - n, "%s\"%s\":[%g,%g,%g]",
					      k ? "," : "", metrics[k], v, v + 1 + i % 3, v - 1);
		}
		snprintf(body + n, sizeof(body) - n, "}}");
		cr_assert_eq(harness_call(&K, "POST", "/api/v1/runs", TOKEN_COLLECTOR, body, NULL), 201,
			     "%s", body);
	}
}

Test(review_api, focus_mglru_keeps_kpis_and_reclaim_counters)
{
	json_t *j, *it;
	size_t i;
	int kpi = 0, pgscan = 0;
	double end;

	cr_assert_eq(harness_call(&K, "POST", "/api/v1/commits", TOKEN_COLLECTOR,
				  "[{\"sha\":\"fb0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c01\"},"
				  "{\"sha\":\"fb0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c02\",\"parent\":"
				  "\"fb0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c01\"}]",
				  NULL),
		     201);
	post_focus_runs("fm-on", "{\"lru_gen\":\"on\"}");
	post_focus_runs("fm-off", "{}");
	end = harness_now() + 60;
	while ((harness_count(&K, "SELECT count(*) FROM decision_queue") > 0 ||
		harness_count(&K, "SELECT count(*) FROM decision d JOIN machine m ON m.id = d.machine_id"
				  " WHERE m.name LIKE 'fm-%'") < 8) &&
	       harness_now() < end)
		usleep(50000);
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM decision d JOIN machine m ON"
				       " m.id = d.machine_id WHERE m.name LIKE 'fm-%'"),
		     8, "4 metrics x 2 machines decided within 60 s");

	j = harness_get_json(&K, "/api/v1/regressions?focus=mglru&machine=fm-on&verdict=regression,"
				 "improvement,changed,noise&role=kpi,event,info,monitor", 200);
	json_array_foreach(json_object_get(j, "items"), i, it) {
		const char *m = str(it, "metric");
		kpi += !strcmp(m, "ycsb.total_throughput_ops/s");
		pgscan += !strcmp(m, "proc-vmstat.pgscan_kswapd");
		cr_expect(!strcmp(m, "ycsb.total_throughput_ops/s") ||
				  !strcmp(m, "proc-vmstat.pgscan_kswapd"),
			  "%s is not of the mglru focus", m);
	}
	cr_expect_eq(kpi, 1);
	cr_expect_eq(pgscan, 1);
	json_decref(j);
	j = harness_get_json(&K, "/api/v1/regressions?focus=mglru&machine=fm-off&verdict=regression,"
				 "improvement,changed,noise&role=kpi,event,info,monitor", 200);
	cr_expect_eq(json_array_size(json_object_get(j, "items")), 0, "runs without lru_gen");
	json_decref(j);

	/* subscriptions take the same rule */
	cr_assert_eq(harness_call(&K, "POST", "/api/v1/subscriptions", TOKEN_ADMIN,
				  "{\"email\":\"mglru@example.org\",\"focus\":\"mglru\"}", NULL),
		     201);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM decision_facts f, subscription s"
				       " WHERE s.email = 'mglru@example.org' AND f.machine = 'fm-on'"
				       " AND subscription_matches(s, jsonb_populate_record(f,"
				       " jsonb_build_object('verdict', 'regression')))"
				       " AND f.metric IN ('ycsb.total_throughput_ops/s',"
				       " 'proc-vmstat.pgscan_kswapd')"),
		     2);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM decision_facts f, subscription s"
				       " WHERE s.email = 'mglru@example.org' AND subscription_matches(s,"
				       " jsonb_populate_record(f, jsonb_build_object('verdict', 'regression')))"
				       " AND (f.machine = 'fm-off' OR f.metric IN ('proc-vmstat.pgfault',"
				       " 'meminfo.Cached'))"),
		     0, "not a reclaim counter, or not an MGLRU run");
}
