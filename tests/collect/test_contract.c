/*
 * test_contract.c - one contract for kperf-collect and kperfd (issue 18): the
 * run that `kperf-collect parse` prints for every parser's fixtures is one
 * kperfd's ingest decoder (lib/ingest_decode.c) accepts, and a run that
 * breaks it is refused by kperf-collect itself, with the field named.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ingest_decode.h"
#include "collectors/deliver/rundoc.h"
#include "tests/collect/testutil.h"

#define FX "tests/fixtures/collect/"
#define LKP "tests/fixtures/lkp-stats/"

/* Every format of collectors/parse/parse.c's table with a fixture of its output. */
static const char *const cases[][2] = {
	{"vm-scalability", LKP "vm-scalability/1"},
	{"will-it-scale", LKP "will-it-scale/1"},
	{"ycsb", LKP "ycsb/01"},
	{"memtier", LKP "memtier/1"},
	{"memtier", FX "memtier/run1.out"},
	{"memtier", FX "memtier/run1.json"},
	{"perf-profile", LKP "perf-profile/1"},
	{"vmstat", LKP "vmstat/1"},
	{"lock_stat", FX "lock_stat/1"},
	{"perf-lock", FX "perf-lock/readtwice-4procs"},
	{"readtwice", FX "readtwice/1"},
	{"sysbench", FX "sysbench/cpu"},
	{"sysbench", FX "sysbench/memory"},
	{"sysbench", FX "sysbench/fileio"},
	{"sysbench", FX "sysbench/threads"},
	{"sysbench", FX "sysbench/mutex"},
	{"sysbench", FX "sysbench/oltp-pgsql"},
	{"stress-ng", FX "stress-ng/cpu-vm.out"},
	{"stress-ng", FX "stress-ng/cpu-vm.yml"},
	{"fio", FX "fio/three-jobs.json"},
	{"redis-benchmark", FX "redis-benchmark/csv"},
	{"pgbench", FX "pgbench/tpcb"},
	{"hackbench", FX "hackbench/process"},
};

Test(contract, every_parsers_fixture_parses_into_a_run_kperfd_accepts)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *args[] = {"--machine", "lab1", "parse", "--format", cases[i][0],
				      cases[i][1], NULL};
		char *out = NULL, *err = NULL;
		struct decode_error derr;
		struct ingest in;
		int st = tu_collect(args, NULL, &out, &err);

		cr_expect_eq(st, 0, "%s %s: exit %d: %s", cases[i][0], cases[i][1], st, err);
		if (!st) {
			int rc = ingest_decode_runs(out, strlen(out), &in, &derr);
			cr_expect_eq(rc, 0, "%s %s: kperfd refuses it: %s: %s", cases[i][0], cases[i][1],
				     derr.field, derr.message);
			if (!rc) {
				cr_expect_gt(in.nruns, 0);
				cr_expect_gt(in.runs[0].nvalues, 0, "%s: no values", cases[i][1]);
				ingest_release(&in);
			}
		}
		free(out);
		free(err);
	}
}

Test(contract, a_run_kperfd_would_refuse_is_refused_by_kperf_collect)
{
	/* rundoc_check is what run, import and parse call before sending or printing */
	static const char ok[] = "{\"run_id\":\"r1\",\"machine\":{\"name\":\"lab1\"},"
				 "\"kernel\":{\"release\":\"6.1\"},\"test\":{\"suite\":\"s\"},"
				 "\"metrics\":{\"s.ops\":[1,2]}}";
	static const char bad[] = "{\"run_id\":\"r1\",\"machine\":{\"name\":\"lab1\"},"
				  "\"kernel\":{\"release\":\"6.1\"},\"test\":{\"suite\":\"s\"},"
				  "\"metrics\":{\"s ops\":[1,2]}}";
	static const char nosha[] = "{\"run_id\":\"r1\",\"machine\":{\"name\":\"lab1\"},"
				    "\"kernel\":{\"commit\":\"abc\"},\"test\":{\"suite\":\"s\"},"
				    "\"metrics\":{\"s.ops\":1}}";
	char err[1700];

	cr_expect_eq(rundoc_check(ok, strlen(ok), err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(rundoc_check(bad, strlen(bad), err, sizeof(err)), -1);
	cr_expect(strstr(err, "metrics.s ops: name must be") != NULL, "%s", err);
	cr_expect_eq(rundoc_check(nosha, strlen(nosha), err, sizeof(err)), -1);
	cr_expect(strstr(err, "kernel.commit: must be a full commit sha") != NULL, "%s", err);
}
