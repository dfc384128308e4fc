/*
 * test_readtwice.c - the readtwice workload on this machine: alone (its
 * output lines, files, exit statuses), and end to end under
 * `kperf-collect run --suite readtwice` against a real kperfd, where the
 * stored run must hold the parsed throughput and the /proc/vmstat deltas a
 * cold read moves.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/integration/harness.h"
#include "tests/collect/testutil.h"

KPERFD_URL_FIXTURE

/*
 * $KPERF_READTWICE_BIN, else the readtwice beside $KPERF_COLLECT_BIN (so
 * build-asan/kperf-collect runs build-asan/readtwice), else build/readtwice.
 */
static void readtwice_bin(char *out, size_t n)
{
	const char *env = getenv("KPERF_READTWICE_BIN"), *collect = getenv("KPERF_COLLECT_BIN");
	const char *slash = collect ? strrchr(collect, '/') : NULL;

	if (env)
		snprintf(out, n, "%s", env);
	else if (slash)
		snprintf(out, n, "%.*s/readtwice", (int)(slash - collect), collect);
	else
		snprintf(out, n, "build/readtwice");
	cr_assert_eq(access(out, X_OK), 0, "%s is not built (make %s)", out, out);
}

/* Run readtwice with args (a shell word list of safe characters); output into *out. */
static int readtwice(const char *args, char **out)
{
	char bin[512], cmd[2048];
	size_t cap = 4096, len = 0, n;
	FILE *p;
	int st;

	readtwice_bin(bin, sizeof(bin));
	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", bin, args);
	p = popen(cmd, "r");
	cr_assert_not_null(p, "%s", cmd);
	*out = malloc(cap);
	while ((n = fread(*out + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (cap - len < 2)
			*out = realloc(*out, cap *= 2);
	}
	(*out)[len] = '\0';
	st = pclose(p);
	cr_assert(WIFEXITED(st), "%s did not exit", cmd);
	return WEXITSTATUS(st);
}

static int count_lines(const char *text, const char *prefix)
{
	int n = 0;
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		n += !strncmp(p, prefix, strlen(prefix));
	return n;
}

static int dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d, "%s", dir);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static double first(json_t *metrics, const char *name)
{
	json_t *v = json_array_get(json_object_get(metrics, name), 0);
	cr_assert(json_is_number(v), "no value for %s", name);
	return json_number_value(v);
}

Test(readtwice, workload_alone)
{
	static const struct {
		const char *args;
		int want;
		const char *says;
	} bad[] = {
		{"--procs 0", 64, "--procs \"0\""},
		{"--procs 4097", 64, "--procs"},
		{"--size-mb x", 64, "--size-mb \"x\""},
		{"--size-mb", 64, "missing value"},
		{"--frobnicate 1", 64, "unknown option"},
		{"--dir /nonexistent/dir", 64, "/nonexistent/dir"},
		{"--help", 0, "usage: readtwice"},
	};
	char dir[4096], args[4300], path[4400];
	struct stat st;
	char *out;
	int rc;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rc = readtwice(bad[i].args, &out);
		cr_expect_eq(rc, bad[i].want, "%s: exit %d, want %d: %s", bad[i].args, rc,
			     bad[i].want, out);
		cr_expect(strstr(out, bad[i].says) != NULL, "%s: no \"%s\" in %s", bad[i].args,
			  bad[i].says, out);
		free(out);
	}

	/* 3 processes of 1 MiB: a header, 3 process lines, a total; files removed */
	tu_tmpdir(dir, sizeof(dir));
	snprintf(args, sizeof(args), "--procs 3 --size-mb 1 --dir %s", dir);
	rc = readtwice(args, &out);
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect_eq(count_lines(out, "readtwice: 3 processes, 1048576 bytes each"), 1, "%s", out);
	cr_expect_eq(count_lines(out, "readtwice: process "), 3, "%s", out);
	for (int i = 0; i < 3; i++) {
		char line[64];
		snprintf(line, sizeof(line), "readtwice: process %d: 1048576 bytes read twice in ", i);
		cr_expect_eq(count_lines(out, line), 1, "no line for process %d: %s", i, out);
	}
	cr_expect_eq(count_lines(out, "readtwice: total: 3 processes, 3145728 bytes in "), 1, "%s",
		     out);
	cr_expect_eq(dir_entries(dir), 0, "the files are removed");
	free(out);

	/* --keep leaves the files, each of the size asked for */
	snprintf(args, sizeof(args), "--procs 2 --size-mb 2 --keep --dir %s", dir);
	rc = readtwice(args, &out);
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect_eq(dir_entries(dir), 2);
	{
		DIR *d = opendir(dir);
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			cr_expect_eq(stat(path, &st), 0);
			cr_expect_eq(st.st_size, 2 * 1048576, "%s", path);
			unlink(path);
		}
		closedir(d);
	}
	free(out);
}

TestSuite(readtwice_e2e, .init = kperfd_suite_setup, .fini = kperfd_suite_teardown,
	  .timeout = 180);

Test(readtwice_e2e, run_stores_throughput_and_vmstat_deltas)
{
	char bin[512], dir[4096], spool[4200], run_id[200];
	const char *args[] = {"--server", url, "--token", TOKEN_COLLECTOR, "--machine", "here",
			      "--spool", spool, "run", "--suite", "readtwice", "--param",
			      "nr_processes=2", "--param", "size_mb=8", "--", bin,
			      "--procs", "2", "--size-mb", "8", "--dir", dir, NULL};
	const char *tail, *p;
	char *out, *err;
	json_t *doc, *m;
	size_t i;
	int rc;

	readtwice_bin(bin, sizeof(bin));
	tu_tmpdir(dir, sizeof(dir));
	snprintf(spool, sizeof(spool), "%s.spool", dir);
	rc = tu_collect(args, NULL, &out, &err);
	cr_assert_eq(rc, 0, "exit %d\nstdout: %s\nstderr: %s", rc, out, err);
	p = strstr(out, "run ");
	cr_assert(p && strstr(out, "stored"), "%s", out);
	for (i = 0; p[4 + i] && p[4 + i] != ' ' && i + 1 < sizeof(run_id); i++)
		run_id[i] = p[4 + i];
	run_id[i] = '\0';
	{
		char path[300];
		struct resp r;
		snprintf(path, sizeof(path), "/api/v1/runs/%s", run_id);
		http_get(&K, path, &r);
		cr_assert_eq(r.status, 200, "%s: %ld %s", path, r.status, r.body);
		doc = resp_json(&r);
		resp_release(&r);
	}
	m = json_object_get(doc, "metrics");
	tail = json_string_value(json_object_get(doc, "output_tail"));
	cr_assert_not_null(tail);

	/* the workload's figures, parsed */
	cr_expect_gt(first(m, "readtwice.throughput"), 0);
	cr_expect_gt(first(m, "readtwice.avg_throughput"), 0);
	cr_expect_eq(first(m, "readtwice.nr_processes"), 2);
	cr_expect_eq(json_array_size(json_object_get(m, "readtwice.throughput")), 1);
	cr_expect_str_eq(json_string_value(json_object_get(json_object_get(doc, "units"),
							   "readtwice.throughput")),
			 "MB/s");
	cr_expect(strstr(tail, "readtwice: total: 2 processes, 16777216 bytes in ") != NULL, "%s",
		  tail);
	cr_expect_eq(json_number_value(json_object_get(doc, "exit_status")), 0);
	cr_expect_str_eq(json_string_value(json_object_get(
				 json_object_get(json_object_get(doc, "test"), "params"), "size_mb")),
			 "8");

	/* the kernel's counters around it: deltas, not the counters themselves */
	cr_expect_gt(first(m, "proc-vmstat.pgfault"), 0, "fork and exec fault pages in");
	cr_expect_lt(first(m, "proc-vmstat.pgfault"), 1e9, "a delta, not the counter itself");
	if (strstr(tail, "stayed in the page cache")) {
		/* a file system without a droppable cache (tmpfs): the reads were warm */
		cr_log_warn("readtwice could not drop its files from the cache in %s", dir);
	} else {
		/* two cold reads of 8 MiB each come from the block layer: 16384 KiB at least */
		cr_expect_geq(first(m, "proc-vmstat.pgpgin"), 16384, "pgpgin %g KiB",
			      first(m, "proc-vmstat.pgpgin"));
		cr_expect_lt(first(m, "proc-vmstat.pgpgin"), 1e9);
	}
	cr_expect_eq(dir_entries(dir), 0, "the workload removed its files");
	json_decref(doc);
	free(out);
	free(err);
}
