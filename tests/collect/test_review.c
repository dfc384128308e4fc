/*
 * test_review.c - a reviewer's first hour with real benchmarks: sysbench cpu
 * and stress-ng --vm run by kperf-collect on a base and a patch, posted to a
 * real kperfd. The benchmark's KPIs are the KPIs (not its totals, times or
 * the machine's gauges), and a patch run with other work arguments
 * (--time=1 against --time=2, --vm 1 --timeout 1s against --vm 2 --timeout
 * 2s) is shown as such and not judged or mailed as a kernel change; the same
 * command on both sides is judged.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/integration/harness.h"
#include "tests/collect/testutil.h"

KPERFD_URL_SUITE(review, 300);

#define SHA_BASE "2c85ebc57b3e1817b6ce1a6b703928e113a90442"
#define SHA_PATCH "aa1b6f5d1dbe12e8ac3a2a5e0a0ac16b2d5bc2f0"
#define SHA_SAME "bb2c7e6e2ecf23f9bd4b3b6f1b1bd27c3e6cd3a1"

static void commits(void)
{
	struct resp r;

	http_post_json(&K, "/api/v1/commits", TOKEN_COLLECTOR,
		       "[{\"sha\":\"" SHA_BASE "\",\"subject\":\"mm: base\",\"release\":\"6.1.0-base\"},"
		       "{\"sha\":\"" SHA_PATCH "\",\"parent\":\"" SHA_BASE "\","
		       "\"subject\":\"mm: patch\",\"release\":\"6.1.0-patch\"},"
		       "{\"sha\":\"" SHA_SAME "\",\"parent\":\"" SHA_BASE "\","
		       "\"subject\":\"mm: same\",\"release\":\"6.1.0-same\"}]",
		       &r);
	cr_assert_eq(r.status, 201, "%s", r.body);
	resp_release(&r);
}

/* kperf-collect run --suite suite --commit sha --iterations 3 -- argv... */
static void collect(const char *suite, const char *sha, const char *const *argv)
{
	const char *args[40] = {"--server", url,     "--token",	     TOKEN_COLLECTOR, "--machine",
				"rev-box",  "run",   "--suite",	     suite,	      "--commit",
				sha,	    "--iterations", "3", "--quiet", "--"};
	size_t n = 15;
	char *out, *err;
	int rc;

	for (const char *const *a = argv; *a && n < 39; a++)
		args[n++] = *a;
	args[n] = NULL;
	rc = tu_collect(args, NULL, &out, &err);
	cr_assert_eq(rc, 0, "%s at %.12s: exit %d\n%s\n%s", suite, sha, rc, out, err);
	free(out);
	free(err);
}

/* Until the decision queue is empty and decisions of both commits exist. */
static void settled(void)
{
	for (int i = 0; i < 1200; i++) {
		if (harness_count(&K, "SELECT count(*) FROM decision_queue") == 0 &&
		    harness_count(&K, "SELECT count(DISTINCT commit_id) FROM decision") == 2 &&
		    harness_count(&K, "SELECT count(DISTINCT test_id) FROM decision") == 3)
			return;
		usleep(50000);
	}
	cr_assert_fail("decisions not made within 60 s");
}

static json_t *row_of(json_t *rows, const char *metric)
{
	size_t i;
	json_t *row;

	json_array_foreach(rows, i, row)
		if (!strcmp(json_string_value(json_object_get(row, "metric")), metric))
			return row;
	return NULL;
}

static const char *str(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

Test(review, kpis_and_commands_that_differ)
{
	static const char *const sb_base[] = {"sysbench", "--threads=1", "--time=1", "cpu", "run",
					      NULL};
	static const char *const sb_patch[] = {"sysbench", "--threads=1", "--time=2", "cpu", "run",
					       NULL};
	static const char *const ng_base[] = {"stress-ng", "--vm", "1", "--vm-bytes", "16M",
					      "--timeout", "1s", "--metrics-brief", NULL};
	static const char *const ng_patch[] = {"stress-ng", "--vm", "2", "--vm-bytes", "16M",
					       "--timeout", "2s", "--metrics-brief", NULL};
	json_t *j, *rows, *env, *row;
	size_t i;
	int args_diffs = 0;

	char dir[4096], file[4200], fname[4300];
	const char *fio[] = {"fio", "--name=left", fname, "--rw=randread", "--bs=4k", "--size=32M",
			     "--runtime=1", "--time_based", "--output-format=json", NULL};

	tu_tmpdir(dir, sizeof(dir));
	snprintf(file, sizeof(file), "%s/left-behind", dir);
	snprintf(fname, sizeof(fname), "--filename=%s", file);
	commits();
	/* fio leaves its file behind: the page cache grows between the sides */
	collect("fio", SHA_BASE, fio);
	collect("fio", SHA_SAME, fio);
	collect("sysbench", SHA_BASE, sb_base);
	collect("sysbench", SHA_PATCH, sb_patch);
	collect("sysbench", SHA_SAME, sb_base);
	collect("stress-ng", SHA_BASE, ng_base);
	collect("stress-ng", SHA_PATCH, ng_patch);

	/* the compare says what differs besides the kernel: the commands */
	j = harness_get_json(&K, "/api/v1/compare?base=" SHA_BASE "&target=" SHA_PATCH, 200);
	env = json_object_get(j, "environment_diff");
	json_array_foreach(env, i, row) {
		if (strcmp(str(row, "kind"), "command_args"))
			continue;
		args_diffs++;
		if (!strcmp(str(row, "key"), "sysbench"))
			cr_expect_str_eq(str(row, "not_judged"),
					 "sysbench ran with other work arguments: time 1 -> 2");
		else
			cr_expect_str_eq(str(row, "not_judged"),
					 "stress-ng ran with other work arguments: timeout 1s -> 2s,"
					 " vm 1 -> 2");
	}
	cr_expect_eq(args_diffs, 2, "%s", json_dumps(env, 0));
	rows = json_object_get(j, "rows");
	/* each parser's KPIs; totals, times and gauges are not */
	row = row_of(rows, "sysbench.events_per_sec");
	cr_assert_not_null(row);
	cr_expect_str_eq(str(row, "role"), "kpi");
	cr_expect_eq(json_integer_value(json_object_get(row, "kpi_rank")), 0);
	cr_expect(json_is_false(json_object_get(row, "judged")));
	cr_expect_str_eq(str(row, "not_judged"), "sysbench ran with other work arguments: time 1 -> 2");
	cr_expect_str_eq(str(row_of(rows, "sysbench.total_time"), "role"), "info");
	cr_expect_str_eq(str(row_of(rows, "sysbench.latency_sum_ms"), "role"), "info");
	cr_expect_str_eq(str(row_of(rows, "sysbench.latency_avg_ms"), "role"), "kpi");
	cr_expect_str_eq(str(row_of(rows, "stress-ng.vm.ops_per_sec"), "role"), "kpi");
	cr_expect_str_eq(str(row_of(rows, "stress-ng.vm.usr_time"), "role"), "info");
	cr_expect_str_eq(str(row_of(rows, "time.user_time"), "role"), "info");
	cr_expect_str_eq(str(row_of(rows, "meminfo.Cached"), "role"), "monitor");
	cr_expect_str_eq(str(row_of(rows, "proc-vmstat.nr_inactive_file"), "role"), "monitor");
	json_decref(j);

	/* the same command on both sides is judged */
	j = harness_get_json(&K, "/api/v1/compare?base=" SHA_BASE "&target=" SHA_SAME "&suite=sysbench",
			     200);
	row = row_of(json_object_get(j, "rows"), "sysbench.events_per_sec");
	cr_assert_not_null(row);
	cr_expect_null(json_object_get(row, "judged"));
	json_array_foreach(json_object_get(j, "environment_diff"), i, row)
		cr_expect_str_neq(str(row, "kind"), "command_args");
	json_decref(j);

	/* LKP's text says why its rule is silent, and shows the KPIs anyway */
	{
		struct resp r;
		http_get(&K, "/api/v1/compare?base=" SHA_BASE "&target=" SHA_SAME "&format=lkp", &r);
		cr_assert_eq(r.status, 200);
		cr_expect(strstr(r.body, "# sysbench on rev-box: LKP's changed-stat rule needs 3 runs"
					 " on a side; the base has 1, the target 1. Only the KPI rows"
					 " are shown, unjudged.\n") != NULL,
			  "%s", r.body);
		cr_expect(strstr(r.body, "  sysbench.events_per_sec\n") != NULL, "%s", r.body);
		cr_expect(strstr(r.body, "  sysbench.latency_95th_percentile_ms\n") != NULL, "%s",
			  r.body);
		cr_expect(strstr(r.body, "sysbench.total_time") == NULL, "%s", r.body);
		resp_release(&r);
		/* mmtests' tables: KPIs first, no monitor unless one is asked for */
		http_get(&K, "/api/v1/compare?base=" SHA_BASE "&target=" SHA_SAME "&format=mmtests"
			     "&suite=sysbench", &r);
		cr_assert_eq(r.status, 200);
		cr_expect(strstr(r.body, "meminfo.") == NULL, "a monitor's table");
		cr_expect(strstr(r.body, "proc-vmstat.nr_free_pages") == NULL, "a monitor's table");
		cr_expect(!strncmp(r.body, "sysbench sysbench.events_per_sec", 32), "%.200s", r.body);
		resp_release(&r);
		http_get(&K, "/api/v1/compare?base=" SHA_BASE "&target=" SHA_SAME
			     "&format=mmtests&metric=meminfo.MemFree", &r);
		cr_assert_eq(r.status, 200);
		cr_expect(strstr(r.body, "MemFree") != NULL, "%s", r.body);
		resp_release(&r);
	}

	/* the same in the terminal: KPIs first, the reason, monitors counted */
	{
		const char *args[] = {"--server", url, "compare", SHA_BASE, SHA_PATCH, "--suite",
				      "sysbench", NULL};
		const char *trend[] = {"--server", url, "trend", "--machine", "rev-box", "--suite",
				       "sysbench", "--metric", "sysbench.events_per_sec", NULL};
		char *out, *err, *first;
		int rc = tu_collect(args, NULL, &out, &err);

		cr_assert_eq(rc, 0, "%s", err);
		cr_expect(strstr(out, "  command_args sysbench ") != NULL, "%s", out);
		cr_expect(strstr(out, "  not judged as a kernel change: sysbench ran with other work"
				      " arguments: time 1 -> 2\n") != NULL,
			  "%s", out);
		first = strstr(out, "  metric ");
		cr_assert_not_null(first, "%s", out);
		first = strchr(first, '\n') + 1;
		cr_expect(!strncmp(first, "  sysbench.events_per_sec ", 26), "%.300s", first);
		cr_expect(strstr(out, "machine monitor rows") != NULL, "%s", out);
		cr_expect(strstr(out, "  meminfo.") == NULL, "%s", out);
		cr_expect(strstr(out, "\033[") == NULL, "no colour when stdout is no terminal");
		free(out);
		free(err);
		rc = tu_collect(trend, NULL, &out, &err);
		cr_assert_eq(rc, 0, "%s", err);
		cr_expect(strstr(out, "sysbench.events_per_sec on rev-box, sysbench") != NULL, "%s", out);
		cr_expect(strstr(out, "  2c85ebc57b3e mm: base") != NULL, "%s", out);
		cr_expect(strstr(out, "  aa1b6f5d1dbe mm: patch") != NULL, "%s", out);
		free(out);
		free(err);
	}

	/* the decisions say so too, and nothing of the patch is mailed */
	settled();
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM decision d JOIN commits c"
				       " ON c.id = d.commit_id WHERE c.sha = '" SHA_PATCH "'"
				       " AND d.command_differs IS NULL"),
		     0, "every decision of the patch knows its command differs");
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM decision d JOIN commits c"
				       " ON c.id = d.commit_id JOIN metric m ON m.id = d.metric_id"
				       " WHERE c.sha = '" SHA_PATCH "' AND m.name ="
				       " 'sysbench.events_per_sec' AND d.command_differs ="
				       " 'time 1 -> 2' AND d.role = 'kpi' AND d.kpi_rank = 0"),
		     1);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM decision d JOIN commits c"
				       " ON c.id = d.commit_id WHERE c.sha = '" SHA_SAME "'"
				       " AND d.command_differs IS NOT NULL"),
		     0);
	{
		struct resp r;
		http_post_json(&K, "/api/v1/subscriptions", TOKEN_ADMIN,
			       "{\"email\":\"rev@example.org\",\"verdicts\":[\"regression\","
			       "\"improvement\",\"changed\"]}",
			       &r);
		cr_assert(r.status == 201 || r.status == 200, "%ld %s", r.status, r.body);
		resp_release(&r);
	}
	/* the command is the reason: the same decisions as regressions without it match */
	cr_expect_gt(harness_count(&K, "SELECT count(*) FROM decision_facts f, subscription s"
				       " WHERE f.sha = '" SHA_PATCH "' AND f.role = 'kpi' AND"
				       " subscription_matches(s, jsonb_populate_record(f,"
				       " jsonb_build_object('command_differs', NULL,"
				       " 'verdict', 'regression')))"),
		     0, "a KPI regression of the same command would be mailed");
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM decision_facts f, subscription s"
				       " WHERE f.sha = '" SHA_PATCH "' AND f.role = 'kpi' AND"
				       " subscription_matches(s, jsonb_populate_record(f,"
				       " jsonb_build_object('verdict', 'regression')))"),
		     0, "a KPI regression of another command is not");
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM decision_facts f, subscription s"
				       " WHERE subscription_matches(s, f) AND f.sha = '" SHA_PATCH "'"),
		     0, "a changed command is not mailed as a kernel change");
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM decision_facts f, subscription s"
				       " WHERE subscription_matches(s, f) AND f.role IN ('info', 'monitor')"),
		     0, "a catch-all subscription is not mailed totals, times or gauges");

	/* fio's gauges are monitors: decided, but never a KPI nor mailed on their own */
	cr_expect_gt(harness_count(&K, "SELECT count(*) FROM decision d JOIN metric m ON"
				       " m.id = d.metric_id WHERE m.name LIKE 'meminfo.%' AND d.role ="
				       " 'monitor'"),
		     0);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM decision d JOIN metric m ON"
				       " m.id = d.metric_id WHERE (m.name LIKE 'meminfo.%' OR m.name IN"
				       " ('proc-vmstat.nr_inactive_file', 'proc-vmstat.nr_file_pages',"
				       " 'memcg.active_file', 'memcg.file'))"
				       " AND d.role <> 'monitor'"),
		     0);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM decision d JOIN metric m ON"
				       " m.id = d.metric_id WHERE m.name = 'fio.left.read_iops' AND"
				       " d.role = 'kpi' AND d.kpi_rank = 0"),
		     1);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM decision_facts f, subscription s"
				       " WHERE f.role = 'monitor' AND subscription_matches(s,"
				       " jsonb_populate_record(f, jsonb_build_object('verdict',"
				       " 'regression')))"),
		     0, "a monitor that moved is not mailed to a catch-all");

	/* the regressions list leaves the monitors out unless asked */
	j = harness_get_json(&K, "/api/v1/regressions?verdict=regression,improvement,changed,noise"
				 "&limit=1000", 200);
	json_array_foreach(json_object_get(j, "items"), i, row)
		cr_expect_str_neq(str(row, "role"), "monitor", "%s", str(row, "metric"));
	json_decref(j);
	j = harness_get_json(&K, "/api/v1/regressions?verdict=regression,improvement,changed,noise"
				 "&role=monitor&limit=1000", 200);
	cr_expect_gt(json_array_size(json_object_get(j, "items")), 0);
	json_array_foreach(json_object_get(j, "items"), i, row)
		cr_expect_str_eq(str(row, "role"), "monitor", "%s", str(row, "metric"));
	json_decref(j);
}
