/*
 * test_cli.c - the built kperf-collect end to end against a real kperfd:
 * `run` around a shell printing readtwice output (read back with GET
 * /api/v1/runs/{id}), server away (spooled, then `flush` delivers once),
 * exit statuses, config layers, parse/import, and `commits` on a git repo.
 */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/integration/harness.h"
#include "tests/collect/testutil.h"

KPERFD_URL_SUITE(cli, 180);

#define READTWICE_SH                                                                       \
	"printf 'readtwice: process 0: 268435456 bytes read twice in 2.4 s: 212.25 MB/s\\n"  \
	"readtwice: process 1: 268435456 bytes read twice in 2.3 s: 222.75 MB/s\\n"          \
	"readtwice: total: 2 processes, 536870912 bytes in 2.4 s: 435.00 MB/s\\n'"

#define SHA "1431d4d11abb265e79cd44bed2f5ea93f1bcc57b"

/* The run_id from "kperf-collect: run <id> stored" or "... run <id> spooled". */
static void run_id_of(const char *text, char *out, size_t n)
{
	const char *p = strstr(text, "run ");
	size_t i = 0;

	cr_assert_not_null(p, "no run id in: %s", text);
	p += 4;
	while (p[i] && p[i] != ' ' && i + 1 < n) {
		out[i] = p[i];
		i++;
	}
	out[i] = '\0';
}

static json_t *get_run(const char *run_id)
{
	char path[300];

	snprintf(path, sizeof(path), "/api/v1/runs/%s", run_id);
	return harness_get_json(&K, path, 200);
}

static const char *str_at(json_t *doc, const char *a, const char *b)
{
	json_t *v = json_object_get(json_object_get(doc, a), b);
	cr_assert(json_is_string(v), "%s.%s is not a string", a, b);
	return json_string_value(v);
}

/* A fixture machine: kernel facts and knobs the test knows. */
static void fixture_roots(const char *dir, char env[3][4300])
{
	tu_write(dir, "proc/sys/kernel/osrelease", "5.9.0-rc2-lru-v18\n");
	tu_write(dir, "proc/version", "Linux version 5.9.0-rc2-lru-v18 (gcc 10.2) #1 SMP\n");
	tu_write(dir, "proc/cmdline", "console=ttyS0 transparent_hugepage=never\n");
	tu_write(dir, "proc/cpuinfo", "processor\t: 0\nmodel name\t: Xeon Gold 6238M\n"
				      "physical id\t: 0\n\nprocessor\t: 1\nphysical id\t: 0\n");
	tu_write(dir, "proc/meminfo", "MemTotal:       2097152 kB\nMemFree:  1048576 kB\n");
	tu_write(dir, "proc/vmstat", "nr_free_pages 262144\npgfault 1000\npgscan_kswapd 5\n");
	tu_write(dir, "proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n");
	tu_write(dir, "proc/cgroups", "#subsys_name\thierarchy\tnum_cgroups\tenabled\n"
				      "memory\t0\t10\t1\n");
	tu_write(dir, "proc/self/cgroup", "0::/lab\n");
	tu_write(dir, "sys/fs/cgroup/lab/memory.stat", "anon 4096\npgscan 10\n");
	tu_write(dir, "sys/kernel/mm/lru_gen/enabled", "0x0007\n");
	tu_write(dir, "sys/kernel/mm/transparent_hugepage/enabled", "always madvise [never]\n");
	tu_write(dir, "sys/devices/system/node/node0/cpulist", "0-1\n");
	tu_write(dir, "boot/config-5.9.0-rc2-lru-v18",
		 "CONFIG_MEMCG=y\nCONFIG_LRU_GEN=y\n# CONFIG_LOCK_STAT is not set\n");
	snprintf(env[0], sizeof(env[0]), "KPERF_PROC_ROOT=%s/proc", dir);
	snprintf(env[1], sizeof(env[1]), "KPERF_SYS_ROOT=%s/sys", dir);
	snprintf(env[2], sizeof(env[2]), "KPERF_BOOT_ROOT=%s/boot", dir);
}

Test(cli, run_readtwice_end_to_end)
{
	char dir[4096], spool[4200], roots[3][4300], run_id[200];
	const char *env[] = {roots[0], roots[1], roots[2], NULL};
	char *out, *err;
	json_t *doc, *m;
	int rc;

	tu_tmpdir(dir, sizeof(dir));
	fixture_roots(dir, roots);
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	{
		const char *args[] = {"--server", url, "--token", TOKEN_COLLECTOR, "--machine",
				      "lab1", "--spool", spool, "run", "--suite", "readtwice",
				      "--param", "nr_processes=2", "--variant", "container=docker",
				      "--iterations", "2", "--commit", SHA, "--series",
				      "per-memcg-lru_lock v18", "--", "sh", "-c",
				      READTWICE_SH, NULL};
		rc = tu_collect(args, env, &out, &err);
	}
	cr_assert_eq(rc, 0, "exit %d\nstdout: %s\nstderr: %s", rc, out, err);
	cr_assert(strstr(out, "stored") != NULL, "%s", out);
	run_id_of(out, run_id, sizeof(run_id));
	cr_assert(!strncmp(run_id, "lab1-", 5), "run_id %s starts with the machine", run_id);
	doc = get_run(run_id);
	m = json_object_get(doc, "metrics");
	/* the suite's metric, one value per iteration */
	cr_assert_eq(json_array_size(json_object_get(m, "readtwice.throughput")), 2);
	cr_expect_float_eq(json_number_value(json_array_get(json_object_get(m,
									    "readtwice.throughput"),
							    1)),
			   435.0, 1e-9);
	cr_expect_float_eq(json_number_value(json_array_get(
				   json_object_get(m, "readtwice.avg_throughput"), 0)),
			   217.5, 1e-9);
	cr_expect_str_eq(str_at(doc, "units", "readtwice.throughput"), "MB/s");
	/* counters: events as differences, gauges as means, memcg, times */
	cr_expect_float_eq(json_number_value(json_array_get(json_object_get(m, "proc-vmstat.pgfault"),
							    0)),
			   0, 1e-9);
	cr_expect_float_eq(json_number_value(json_array_get(
				   json_object_get(m, "proc-vmstat.nr_free_pages"), 0)),
			   262144, 1e-9);
	cr_expect_eq(json_array_size(json_object_get(m, "memcg.anon")), 2);
	cr_expect_eq(json_array_size(json_object_get(m, "meminfo.MemFree")), 2);
	cr_expect_eq(json_array_size(json_object_get(m, "time.elapsed_time")), 2);
	/* variant knobs detected, and the one given */
	cr_expect_str_eq(str_at(doc, "variant", "lru_gen"), "on");
	cr_expect_str_eq(str_at(doc, "variant", "thp"), "never");
	cr_expect_str_eq(str_at(doc, "variant", "swap"), "off");
	cr_expect_str_eq(str_at(doc, "variant", "memcg"), "on");
	cr_expect_str_eq(str_at(doc, "variant", "container"), "docker");
	/* kernel facts */
	cr_expect_str_eq(str_at(doc, "kernel", "release"), "5.9.0-rc2-lru-v18");
	cr_expect_str_eq(str_at(doc, "kernel", "commit"), SHA);
	cr_expect_str_eq(str_at(doc, "kernel", "series"), "per-memcg-lru_lock v18");
	cr_expect_str_eq(str_at(doc, "kernel", "cmdline"), "console=ttyS0 transparent_hugepage=never");
	cr_expect_str_eq(json_string_value(json_object_get(
				 json_object_get(json_object_get(doc, "kernel"), "config"),
				 "CONFIG_LRU_GEN")),
			 "y");
	cr_expect_str_eq(str_at(doc, "environment", "kernel.version"),
			 "Linux version 5.9.0-rc2-lru-v18 (gcc 10.2) #1 SMP");
	/* machine facts, test, command, status, output */
	cr_expect_str_eq(str_at(doc, "machine", "name"), "lab1");
	cr_expect_str_eq(str_at(doc, "machine", "cpu_model"), "Xeon Gold 6238M");
	cr_expect_eq(json_number_value(json_object_get(json_object_get(doc, "machine"), "nr_cpus")),
		     2);
	cr_expect_str_eq(str_at(doc, "test", "suite"), "readtwice");
	cr_expect_str_eq(json_string_value(json_object_get(
				 json_object_get(json_object_get(doc, "test"), "params"),
				 "nr_processes")),
			 "2");
	cr_expect_eq(json_number_value(json_object_get(doc, "exit_status")), 0);
	cr_expect(strstr(json_string_value(json_object_get(doc, "command")), "sh -c") != NULL);
	cr_expect(strstr(json_string_value(json_object_get(doc, "output_tail")),
			 "readtwice: total: 2 processes") != NULL);
	json_decref(doc);
	free(out);
	free(err);
}

Test(cli, run_on_this_machine_has_vmstat_deltas)
{
	char dir[4096], spool[4200], run_id[200];
	const char *args[] = {"--server", url, "--token", TOKEN_COLLECTOR, "--machine", "here",
			      "--spool", spool, "run", "--suite", "readtwice", "--",
			      "sh", "-c", READTWICE_SH "; head -c 1048576 /dev/zero > /dev/null",
			      NULL};
	char *out, *err;
	json_t *doc, *m;
	int rc;

	tu_tmpdir(dir, sizeof(dir));
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	rc = tu_collect(args, NULL, &out, &err);
	cr_assert_eq(rc, 0, "exit %d: %s %s", rc, out, err);
	run_id_of(out, run_id, sizeof(run_id));
	doc = get_run(run_id);
	m = json_object_get(doc, "metrics");
	cr_expect_float_eq(json_number_value(json_array_get(json_object_get(m,
									    "readtwice.throughput"),
							    0)),
			   435.0, 1e-9);
	if (access("/proc/vmstat", R_OK) == 0) {
		json_t *pgfault = json_array_get(json_object_get(m, "proc-vmstat.pgfault"), 0);
		cr_assert_not_null(pgfault, "no proc-vmstat.pgfault delta");
		cr_expect_gt(json_number_value(pgfault), 0, "the command faulted pages in");
		cr_expect_lt(json_number_value(pgfault), 1e9, "a delta, not the counter itself");
	}
	json_decref(doc);
	free(out);
	free(err);
}

Test(cli, failed_command_is_delivered_and_its_status_returned)
{
	char dir[4096], spool[4200], run_id[200];
	const char *args[] = {"--server", url, "--token", TOKEN_COLLECTOR, "--spool", spool, "run",
			      "--suite", "readtwice", "--", "sh", "-c",
			      READTWICE_SH "; exit 3", NULL};
	char *out, *err;
	json_t *doc;
	int rc;

	tu_tmpdir(dir, sizeof(dir));
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	rc = tu_collect(args, NULL, &out, &err);
	cr_assert_eq(rc, 3, "exit %d: %s %s", rc, out, err);
	run_id_of(out, run_id, sizeof(run_id));
	doc = get_run(run_id);
	cr_expect_eq(json_number_value(json_object_get(doc, "exit_status")), 3);
	json_decref(doc);
	free(out);
	free(err);
}

Test(cli, server_away_spools_then_flush_delivers_once)
{
	char dir[4096], spool[4200], away[64], run_id[200];
	char *out, *err;
	int rc;

	tu_tmpdir(dir, sizeof(dir));
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	snprintf(away, sizeof(away), "http://127.0.0.1:%d", harness_closed_port());
	{
		const char *args[] = {"--server", away, "--token", TOKEN_COLLECTOR, "--spool", spool,
				      "run", "--suite", "readtwice", "--quiet", "--", "sh", "-c",
				      READTWICE_SH, NULL};
		rc = tu_collect(args, NULL, &out, &err);
	}
	cr_assert_eq(rc, 0, "server away is not a failure: exit %d %s", rc, err);
	cr_assert(strstr(err, "spooled") != NULL, "says so: %s", err);
	cr_assert_eq(tu_count_files(spool, ".json"), 1);
	run_id_of(err, run_id, sizeof(run_id));
	free(out);
	free(err);
	{
		/* flush with the server still away: kept, exit 75 */
		const char *args[] = {"--server", away, "--token", TOKEN_COLLECTOR, "--spool", spool,
				      "flush", NULL};
		rc = tu_collect(args, NULL, &out, &err);
		cr_expect_eq(rc, 75, "%s %s", out, err);
		cr_expect_eq(tu_count_files(spool, ".json"), 1);
		free(out);
		free(err);
	}
	for (int i = 0; i < 2; i++) {
		const char *args[] = {"--server", url, "--token", TOKEN_COLLECTOR, "--spool", spool,
				      "flush", NULL};
		rc = tu_collect(args, NULL, &out, &err);
		cr_assert_eq(rc, 0, "flush %d: %s %s", i, out, err);
		cr_expect(strstr(out, i == 0 ? "1 delivered" : "0 delivered") != NULL, "%s", out);
		free(out);
		free(err);
	}
	cr_expect_eq(tu_count_files(spool, ".json"), 0);
	{
		PGconn *c = harness_db(&K);
		const char *params[1] = {run_id};
		PGresult *r = PQexecParams(c, "SELECT count(*) FROM run WHERE run_id = $1", 1, NULL,
					   params, NULL, NULL, 0);
		cr_expect_str_eq(PQgetvalue(r, 0, 0), "1", "delivered exactly once");
		PQclear(r);
		PQfinish(c);
	}
}

Test(cli, exit_statuses)
{
	static const struct {
		const char *args[16];
		int want;
		const char *says;
	} rows[] = {
		/* neither posted nor spooled */
		{{"--server", "http://127.0.0.1:1", "--spool", "/dev/null/spool", "run", "--suite",
		  "readtwice", "--quiet", "--", "sh", "-c", READTWICE_SH, NULL},
		 75,
		 "lost"},
		{{"run", "--", "true", NULL}, 64, "--suite"},
		{{"run", "--suite", "bad suite", "--dry-run", "--", "true", NULL}, 64, "suite"},
		{{"run", "--suite", "x", "--commit", "abc", "--dry-run", "--", "true", NULL}, 64,
		 "40 hex"},
		{{"run", "--suite", "x", "--param", "no-equals", "--", "true", NULL}, 64, "key=value"},
		{{"frobnicate", NULL}, 64, "unknown command"},
		{{"--bogus", NULL}, 64, "unknown option"},
		{{"parse", "--format", "nosuch", "x", NULL}, 64, "unknown format"},
		{{"parse", "--format", "vm-scalability", "/nonexistent/file", NULL}, 65,
		 "/nonexistent/file"},
		{{"parse", "--format", "lock_stat", "tests/fixtures/collect/sysbench/1", NULL}, 65,
		 "tests/fixtures/collect/sysbench/1:1:"},
		{{"run", "--suite", "readtwice", "--dry-run", "--quiet", "--", "sh", "-c", "exit 7",
		  NULL},
		 7,
		 ""},
		{{"help", NULL}, 0, ""},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char *out, *err;
		int rc = tu_collect(rows[i].args, NULL, &out, &err);
		cr_expect_eq(rc, rows[i].want, "row %zu: exit %d, want %d\n%s%s", i, rc, rows[i].want,
			     out, err);
		cr_expect(strstr(err, rows[i].says) != NULL || strstr(out, rows[i].says) != NULL,
			  "row %zu: no \"%s\" in: %s", i, rows[i].says, err);
		free(out);
		free(err);
	}
}

Test(cli, parse_prints_a_valid_run_the_server_takes)
{
	const char *args[] = {"--machine", "lkp-ivb-ep", "parse", "--format", "memtier",
			      "--param", "test=redis", "tests/fixtures/lkp-stats/memtier/1", NULL};
	char *out, *err;
	struct resp r;
	json_t *doc;
	int rc = tu_collect(args, NULL, &out, &err);

	cr_assert_eq(rc, 0, "%s", err);
	doc = json_loads(out, 0, NULL);
	cr_assert_not_null(doc, "%s", out);
	cr_expect_str_eq(str_at(doc, "test", "suite"), "memtier");
	cr_expect_eq(json_object_size(json_object_get(doc, "metrics")), 73);
	http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR, out, &r);
	cr_expect_eq(r.status, 201, "%s", r.body);
	resp_release(&r);
	json_decref(doc);
	free(out);
	free(err);
}

static void sh(const char *dir, const char *cmd)
{
	char line[8192];
	snprintf(line, sizeof(line), "cd '%s' && %s", dir, cmd);
	cr_assert_eq(system(line), 0, "%s", line);
}

Test(cli, commits_from_a_git_repository)
{
	char dir[4096], sha[3][48], path[4200], *out, *err;
	const char *args[] = {"--server", url, "--token", TOKEN_COLLECTOR, "commits", "--git", dir,
			      "--series", "lru-test v2", "--branch", "test/main", "HEAD~2..HEAD",
			      NULL};
	struct resp r;
	json_t *j, *items, *c;
	size_t i;
	FILE *f;
	int rc;

	if (system("git --version > /dev/null 2>&1"))
		cr_skip_test("git is not installed");
	tu_tmpdir(dir, sizeof(dir));
	sh(dir, "git init -q . && git config user.name 'A Hacker' && "
		"git config user.email a@example.org && git config commit.gpgsign false");
	sh(dir, "mkdir -p mm && echo a > mm/vmscan.c && git add . && "
		"git commit -q -m 'mm: base commit'");
	sh(dir, "echo b > mm/swap.c && echo c >> mm/vmscan.c && git add . && "
		"git commit -q -m 'mm/swap: one' -m 'Link: "
		"https://lore.kernel.org/r/20200824125406.12345-2-alex@example.org'");
	sh(dir, "echo d > mm/memcontrol.c && git add . && git commit -q -m 'mm/memcg: two' "
		"-m 'Message-Id: <two@example.org>'");
	snprintf(path, sizeof(path), "%s/shas", dir);
	sh(dir, "git rev-list HEAD > shas");
	f = fopen(path, "r");
	cr_assert_not_null(f);
	for (i = 0; i < 3; i++)
		cr_assert_eq(fscanf(f, "%47s", sha[i]), 1);
	fclose(f);

	rc = tu_collect(args, NULL, &out, &err);
	cr_assert_eq(rc, 0, "%s %s", out, err);
	cr_expect(strstr(out, "2 commits stored") != NULL, "%s", out);
	free(out);
	free(err);

	http_get(&K, "/api/v1/commits?series=lru-test%20v2", &r);
	cr_assert_eq(r.status, 200, "%s", r.body);
	j = resp_json(&r);
	items = json_object_get(j, "items");
	cr_assert_eq(json_array_size(items), 2, "%s", r.body);
	json_array_foreach(items, i, c) {
		const char *s = json_string_value(json_object_get(c, "sha"));
		json_t *files = json_object_get(c, "files");
		if (!strcmp(s, sha[0])) { /* newest */
			cr_expect_str_eq(json_string_value(json_object_get(c, "parent")), sha[1]);
			cr_expect_str_eq(json_string_value(json_object_get(c, "subject")),
					 "mm/memcg: two");
			cr_expect_str_eq(json_string_value(json_object_get(c, "message_id")),
					 "<two@example.org>");
			cr_expect_eq(json_array_size(files), 1);
			cr_expect_str_eq(json_string_value(json_array_get(files, 0)),
					 "mm/memcontrol.c");
		} else {
			cr_expect_str_eq(s, sha[1]);
			cr_expect_str_eq(json_string_value(json_object_get(c, "parent")), sha[2]);
			cr_expect_str_eq(json_string_value(json_object_get(c, "message_id")),
					 "<20200824125406.12345-2-alex@example.org>");
			cr_expect_eq(json_array_size(files), 2);
			cr_expect_str_eq(json_string_value(json_object_get(c, "author")),
					 "A Hacker <a@example.org>");
			cr_expect_str_eq(json_string_value(json_object_get(c, "branch")),
					 "test/main");
		}
	}
	json_decref(j);
	resp_release(&r);
}

/* The file, then $KPERF_*, then flags: each layer overrides the one before. */
Test(cli, config_file_environment_and_flags)
{
	static const struct {
		const char *env_machine, *flag_machine, *want;
	} rows[] = {
		{NULL, NULL, "from-file"},
		{"KPERF_MACHINE=from-env", NULL, "from-env"},
		{"KPERF_MACHINE=from-env", "from-flag", "from-flag"},
	};
	char dir[4096], conf[4300], confenv[4400], text[4400], run_id[200];

	tu_tmpdir(dir, sizeof(dir));
	snprintf(text, sizeof(text),
		 "# kperf-collect\nKPERF_SERVER=%s/\nKPERF_TOKEN=%s\nKPERF_MACHINE=from-file\n"
		 "KPERF_SPOOL=%s/spool\n",
		 url, TOKEN_COLLECTOR, dir);
	tu_write(dir, "collect.conf", text);
	snprintf(conf, sizeof(conf), "%s/collect.conf", dir);
	snprintf(confenv, sizeof(confenv), "KPERF_COLLECT_CONFIG=%s", conf);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *env[] = {confenv, rows[i].env_machine, NULL};
		const char *with_flag[] = {"--machine", rows[i].flag_machine, "import", "--format",
					   "vm-scalability", "tests/fixtures/lkp-stats/vm-scalability/2",
					   NULL};
		const char *const *args = rows[i].flag_machine ? with_flag : with_flag + 2;
		char *out, *err;
		json_t *doc;
		int rc = tu_collect(args, env, &out, &err);

		cr_assert_eq(rc, 0, "row %zu: %s %s", i, out, err);
		run_id_of(out, run_id, sizeof(run_id));
		doc = get_run(run_id);
		cr_expect_str_eq(str_at(doc, "machine", "name"), rows[i].want, "row %zu", i);
		cr_expect_str_eq(str_at(doc, "test", "suite"), "vm-scalability");
		cr_expect_float_eq(json_number_value(json_array_get(
					   json_object_get(json_object_get(doc, "metrics"),
							   "vm-scalability.throughput"),
					   0)),
				   467497, 1e-9);
		json_decref(doc);
		free(out);
		free(err);
	}
	{
		const char *env[] = {"KPERF_COLLECT_CONFIG=/nonexistent/dir/collect.conf", NULL};
		const char *args[] = {"--config", conf, "formats", NULL};
		char *out, *err;
		tu_write(dir, "bad.conf", "KPERF_SERVER http://x\n");
		cr_expect_eq(tu_collect(args, env, &out, &err), 0, "a missing default file is fine");
		free(out);
		free(err);
		snprintf(conf, sizeof(conf), "%s/bad.conf", dir);
		cr_expect_eq(tu_collect(args, NULL, &out, &err), 64);
		cr_expect(strstr(err, "bad.conf:1:") != NULL, "%s", err);
		free(out);
		free(err);
	}
}
