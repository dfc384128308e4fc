/*
 * test_perf.c - the perf monitors of `run` end to end, with the real perf
 * on this machine and a real kperfd: --profile around readtwice posts
 * perf-profile rows (LKP's names, self shares summing to 100 within perf's
 * rounding, the workload's hottest kernel symbol among them as `perf
 * report` prints it, the event named in the run); --lock-contention under
 * readtwice processes that contend posts perf-lock rows that agree with
 * `perf lock contention` on the kept recording. Where perf cannot record
 * (not root, perf_event_paranoid, no linux-perf, a kernel without the lock
 * tracepoints) the tests say why they are skipped. No perf is needed for
 * the checks of a perf that is missing or broken (exit 69, nothing sent).
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collectors/base/cutil.h"
#include "tests/integration/harness.h"
#include "tests/collect/testutil.h"

KPERFD_URL_FIXTURE

/* Run cmd with sh; its output (stdout and stderr) into a malloc'd string; returns the status. */
static int sh_out(const char *cmd, char **out)
{
	char line[8400];
	size_t cap = 8192, len = 0, n;
	FILE *p;
	int st;

	snprintf(line, sizeof(line), "%s 2>&1", cmd);
	p = popen(line, "r");
	cr_assert_not_null(p, "%s", line);
	*out = malloc(cap);
	while ((n = fread(*out + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (cap - len < 2)
			*out = realloc(*out, cap *= 2);
	}
	(*out)[len] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static const char *perf_bin(void)
{
	const char *p = getenv("PERF");
	return p && *p ? p : "perf";
}

/*
 * Skip the test, saying why, unless perf records here what kind needs: a
 * system-wide cpu-clock profile, or the lock contention tracepoints.
 */
static void need_perf(const char *kind)
{
	char dir[4096], cmd[8192], *out;
	int rc;

	tu_tmpdir(dir, sizeof(dir));
	if (!strcmp(kind, "profile"))
		snprintf(cmd, sizeof(cmd), "%s record -a -g -e cpu-clock -o %s/probe.data -- true",
			 perf_bin(), dir);
	else
		snprintf(cmd, sizeof(cmd), "%s lock record -a -o %s/probe.data -- true", perf_bin(),
			 dir);
	rc = sh_out(cmd, &out);
	if (rc) {
		char why[600];
		size_t n = strlen(out);
		while (n && isspace((unsigned char)out[n - 1]))
			out[--n] = '\0';
		snprintf(why, sizeof(why), "%s", n > 500 ? out + n - 500 : out);
		free(out);
		cr_skip_test(
		    "perf cannot record here (`%s` exited %d: %s): these tests need root "
		    "(or perf_event_paranoid <= -1), Debian's linux-perf (make deps) and, for "
		    "lock contention, a kernel with the lock:contention_begin tracepoint "
		    "(5.19 or later)",
		    cmd, rc, why);
	}
	free(out);
}

/* The readtwice beside $KPERF_COLLECT_BIN (build-asan/readtwice for the ASan build). */
static void readtwice_bin(char *out, size_t n)
{
	const char *collect = getenv("KPERF_COLLECT_BIN");
	const char *slash = collect ? strrchr(collect, '/') : NULL;

	if (slash)
		snprintf(out, n, "%.*s/readtwice", (int)(slash - collect), collect);
	else
		snprintf(out, n, "build/readtwice");
	cr_assert_eq(access(out, X_OK), 0, "%s is not built", out);
}

/* The stored run named in "kperf-collect: run <id> stored" of out. */
static json_t *stored_run(const char *out)
{
	const char *p = strstr(out, "kperf-collect: run ");
	char path[300], id[200];
	struct resp r;
	size_t i = 0;
	json_t *j;

	cr_assert_not_null(p, "no stored run in: %s", out);
	for (p += 19; p[i] && p[i] != ' ' && i + 1 < sizeof(id); i++)
		id[i] = p[i];
	id[i] = '\0';
	snprintf(path, sizeof(path), "/api/v1/runs/%s", id);
	http_get(&K, path, &r);
	cr_assert_eq(r.status, 200, "%s: %ld %s", path, r.status, r.body);
	j = resp_json(&r);
	resp_release(&r);
	return j;
}

static const char *str_or_q(json_t *v)
{
	return json_is_string(v) ? json_string_value(v) : "?";
}

static double first(json_t *metrics, const char *name)
{
	json_t *v = json_array_get(json_object_get(metrics, name), 0);
	cr_assert(json_is_number(v), "no %s", name);
	return json_number_value(v);
}

TestSuite(perf_monitors, .init = kperfd_suite_setup, .fini = kperfd_suite_teardown,
	  .timeout = 240);

Test(perf_monitors, profile_posts_lkp_rows_with_the_hottest_kernel_symbol)
{
	char bin[512], dir[4096], keep[4200], spool[4200], cmd[9000], sym[256] = "", event[64] = "";
	const char *args[] = {"--server",
			      url,
			      "--token",
			      TOKEN_COLLECTOR,
			      "--machine",
			      "perf-here",
			      "--spool",
			      spool,
			      "run",
			      "--suite",
			      "readtwice",
			      "--param",
			      "nr_processes=2",
			      "--profile",
			      "--keep-perf",
			      keep,
			      "--",
			      bin,
			      "--procs",
			      "2",
			      "--size-mb",
			      "64",
			      "--dir",
			      dir,
			      NULL};
	double self_sum = 0, own = -1;
	size_t nself = 0, ncalltrace = 0, nchildren = 0;
	char *out, *err, *report, *line;
	json_t *doc, *m, *v;
	const char *name;
	int rc;

	need_perf("profile");
	readtwice_bin(bin, sizeof(bin));
	tu_tmpdir(dir, sizeof(dir));
	snprintf(keep, sizeof(keep), "%s/perf", dir);
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	rc = tu_collect(args, NULL, &out, &err);
	cr_assert_eq(rc, 0, "exit %d\nstdout: %s\nstderr: %s", rc, out, err);
	cr_expect(strstr(err, "kperf-collect: iteration 1/1: ") && strstr(err, "perf-profile "),
		  "no iteration line naming the profile: %s", err);
	doc = stored_run(out);
	m = json_object_get(doc, "metrics");

	json_object_foreach(m, name, v) {
		if (!strncmp(name, "perf-profile.self.cycles-pp.", 28)) {
			self_sum += json_number_value(json_array_get(v, 0));
			nself++;
		}
		ncalltrace += !strncmp(name, "perf-profile.calltrace.cycles-pp.", 33);
		nchildren += !strncmp(name, "perf-profile.children.cycles-pp.", 32);
	}
	cr_expect_gt(nself, 5, "%zu self rows", nself);
	cr_expect_gt(ncalltrace, 5, "%zu calltrace rows", ncalltrace);
	cr_expect_gt(nchildren, 5, "%zu children rows", nchildren);
	/* perf prints each share rounded to 2 decimals: the sum is 100 within that */
	cr_expect_leq(self_sum, 100 + 0.005 * (double)nself,
		      "self shares sum to %.2f over %zu rows", self_sum, nself);
	cr_expect_gt(self_sum, 50, "self shares sum to %.2f", self_sum);

	/* the event, as the report of the kept recording names it */
	snprintf(cmd, sizeof(cmd),
		 "%s report -i %s/profile-1.data --header-only 2>/dev/null | "
		 "sed -n \"s/^# event : name = \\([^,]*\\),.*/\\1/p\" | head -1",
		 perf_bin(), keep);
	cr_assert_eq(sh_out(cmd, &report), 0);
	sscanf(report, "%63s", event);
	free(report);
	cr_expect(!strcmp(event, "cycles") || !strcmp(event, "cpu-clock"), "recorded %s", event);
	cr_expect_str_eq(json_string_value(json_object_get(json_object_get(doc, "environment"),
							   "perf-profile.event")),
			 event, "the run names the event perf sampled");

	/* readtwice's own hottest kernel symbol, as perf report prints it */
	snprintf(cmd, sizeof(cmd),
		 "%s report -i %s/profile-1.data --no-children -U --comms readtwice "
		 "--sort=symbol --stdio 2>/dev/null | grep -m1 '\\[k\\]'",
		 perf_bin(), keep);
	cr_assert_eq(sh_out(cmd, &report), 0, "no kernel symbol of readtwice in the profile");
	line = report;
	while (isspace((unsigned char)*line))
		line++;
	cr_assert_eq(sscanf(line, "%lf%% [k] %255s", &own, sym), 2, "%s", report);
	free(report);
	{
		/* LKP's name drops the compiler's suffixes (.isra.N, .constprop.N, .part.N) */
		static const char *const tags[] = {".isra.", ".constprop.", ".part."};
		char key[400];
		for (size_t t = 0; t < 3; t++) {
			char *s = strstr(sym, tags[t]);
			if (s && isdigit((unsigned char)s[strlen(tags[t])]))
				*s = '\0';
		}
		snprintf(key, sizeof(key), "perf-profile.self.cycles-pp.%s", sym);
		cr_expect_not_null(json_object_get(m, key),
				   "readtwice's hottest kernel symbol %s "
				   "(%.2f%%) is not among the rows",
				   sym, own);
		if (json_object_get(m, key))
			/* the run's share is over every command: at least readtwice's own */
			cr_expect_geq(first(m, key) + 0.01, own,
				      "%s: %.2f in the run, %.2f for readtwice", key, first(m, key),
				      own);
	}
	/* kept: the recording and the report parsed */
	cr_expect_eq(tu_count_files(keep, ".data"), 1);
	cr_expect_eq(tu_count_files(keep, ".txt"), 1);
	json_decref(doc);
	free(out);
	free(err);
}

Test(perf_monitors, lock_contention_posts_perf_lock_rows_that_agree_with_perf)
{
	char bin[512], dir[4096], keep[4200], spool[4200], cmd[9000];
	const char *args[] = {"--server",
			      url,
			      "--token",
			      TOKEN_COLLECTOR,
			      "--machine",
			      "perf-here",
			      "--spool",
			      spool,
			      "run",
			      "--suite",
			      "readtwice",
			      "--param",
			      "nr_processes=8",
			      "--lock-contention",
			      "--keep-perf",
			      keep,
			      "--",
			      bin,
			      "--procs",
			      "8",
			      "--size-mb",
			      "128",
			      "--dir",
			      dir,
			      NULL};
	double callers_contended = 0, total, perf_total = 0;
	size_t ncallers = 0;
	char *out, *err, *report;
	json_t *doc, *m, *v, *dirs, *units;
	const char *name;
	int rc;

	need_perf("lock");
	readtwice_bin(bin, sizeof(bin));
	tu_tmpdir(dir, sizeof(dir));
	snprintf(keep, sizeof(keep), "%s/perf", dir);
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	rc = tu_collect(args, NULL, &out, &err);
	cr_assert_eq(rc, 0, "exit %d\nstdout: %s\nstderr: %s", rc, out, err);
	cr_expect(strstr(err, "perf-lock ") != NULL, "no iteration line naming perf-lock: %s", err);
	doc = stored_run(out);
	m = json_object_get(doc, "metrics");
	dirs = json_object_get(doc, "directions");
	units = json_object_get(doc, "units");
	total = first(m, "perf-lock.total.contended");
	cr_expect_gt(total, 0, "8 readtwice processes on this machine contended on no lock");

	json_object_foreach(m, name, v) {
		char caller[300], key[400];
		size_t n;
		double c, t, mx, avg;

		if (strncmp(name, "perf-lock.", 10) || !strstr(name, ".contended"))
			continue;
		n = strlen(name) - strlen(".contended") - 10;
		snprintf(caller, sizeof(caller), "%.*s", (int)n, name + 10);
		c = json_number_value(json_array_get(v, 0));
#define FIELD(f) (snprintf(key, sizeof(key), "perf-lock.%s." f, caller), key)
		t = first(m, FIELD("wait_total_us"));
		mx = first(m, FIELD("wait_max_us"));
		cr_expect_str_eq(str_or_q(json_object_get(dirs, key)), "lower", "%s", key);
		cr_expect_str_eq(str_or_q(json_object_get(units, key)), "us", "%s", key);
		if (c > 0) {
			double ended;
			avg = first(m, FIELD("wait_avg_us"));
			/* perf counts a contention at its begin and its avg is the total
			 * over fewer waits: a wait still open when the recording stopped is
			 * in c, not in avg, and the counters of a lock that CPUs update at
			 * once need not agree (seen: total / avg = 34.53 of 37). So total /
			 * avg lies between 1 and c, and avg <= max <= total. perf prints 3
			 * significant digits or 2 decimals (1.02 ms: 1015 to 1025 us). */
			ended = avg > 0 ? t / avg : 0;
			cr_expect(avg <= mx * 1.01 + 0.01 && mx <= t * 1.01 + 0.01 &&
				      (t == 0 || (ended >= 0.99 && ended <= c * 1.01 + 0.5)),
				  "%s: %g contentions, total %g, max %g, avg %g (%g waits ended)",
				  caller, c, t, mx, avg, ended);
		}
#undef FIELD
		if (strncmp(caller, "type.", 5) && strcmp(caller, "total")) {
			callers_contended += c;
			ncallers++;
		}
	}
	cr_expect_gt(ncallers, 0);
	cr_expect_float_eq(callers_contended, total, 1e-9, "callers %g, total %g",
			   callers_contended, total);
	/* the contentions perf itself counts in the kept recording */
	snprintf(cmd, sizeof(cmd),
		 "%s lock contention -i %s/lock-1.data 2>&1 | awk '$1 ~ /^[0-9]+$/ { n += $1 } "
		 "END { print n + 0 }'",
		 perf_bin(), keep);
	cr_assert_eq(sh_out(cmd, &report), 0);
	perf_total = strtod(report, NULL);
	free(report);
	cr_expect_float_eq(total, perf_total, 1e-9, "run %g, perf lock contention %g", total,
			   perf_total);
	cr_expect_not_null(
	    json_object_get(json_object_get(doc, "environment"), "perf-lock.command"));
	json_decref(doc);
	free(out);
	free(err);
}

/* Both monitors over 2 iterations: a value per iteration, nothing left in the scratch place. */
Test(perf_monitors, both_monitors_over_two_iterations)
{
	char bin[512], dir[4096], tmp[4200], spool[4200], envtmp[4300];
	const char *env[] = {envtmp, NULL};
	const char *args[] = {"--server",
			      url,
			      "--token",
			      TOKEN_COLLECTOR,
			      "--machine",
			      "perf-here",
			      "--spool",
			      spool,
			      "run",
			      "--suite",
			      "readtwice",
			      "--param",
			      "nr_processes=4",
			      "--profile",
			      "--lock-contention",
			      "--iterations",
			      "2",
			      "--",
			      bin,
			      "--procs",
			      "4",
			      "--size-mb",
			      "16",
			      "--dir",
			      dir,
			      NULL};
	char *out, *err;
	json_t *doc, *m;
	int rc;

	need_perf("profile");
	need_perf("lock");
	readtwice_bin(bin, sizeof(bin));
	tu_tmpdir(dir, sizeof(dir));
	snprintf(tmp, sizeof(tmp), "%s/tmp", dir);
	cr_assert_eq(system((snprintf(envtmp, sizeof(envtmp), "mkdir -p %s", tmp), envtmp)), 0);
	snprintf(envtmp, sizeof(envtmp), "TMPDIR=%s", tmp);
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	rc = tu_collect(args, env, &out, &err);
	cr_assert_eq(rc, 0, "exit %d\nstdout: %s\nstderr: %s", rc, out, err);
	cr_expect(strstr(err, "iteration 1/2: ") && strstr(err, "iteration 2/2: "), "%s", err);
	doc = stored_run(out);
	m = json_object_get(doc, "metrics");
	cr_expect_eq(json_array_size(json_object_get(m, "perf-lock.total.contended")), 2);
	cr_expect_eq(json_array_size(json_object_get(m, "readtwice.throughput")), 2);
	{
		/* the profile's root symbols are in every iteration */
		const char *name;
		json_t *v;
		size_t twice = 0;
		json_object_foreach(m, name, v) twice +=
		    !strncmp(name, "perf-profile.", 13) && json_array_size(v) == 2;
		cr_expect_gt(twice, 3, "%zu perf-profile rows with 2 values", twice);
	}
	cr_expect_eq(
	    system((snprintf(envtmp, sizeof(envtmp), "test -z \"$(ls -A %s)\"", tmp), envtmp)), 0,
	    "perf's scratch files were left in %s", tmp);
	json_decref(doc);
	free(out);
	free(err);
}

/* No perf that runs: exit 69 before the command runs, the reason said, nothing sent. */
Test(perf_monitors, a_missing_or_broken_perf_is_exit_69_and_nothing_is_sent)
{
	struct row {
		const char *flag, *env, *says;
	};
	char dir[4096], spool[4200], marker[4300], script[4400], cmd[4400], perf_env[4400];
	char path_env[4400];
	/* the search also looks at the versioned binaries of other kernels' perf */
	int versioned = system("ls /usr/bin/perf_[0-9]* /usr/lib/linux-tools*/perf "
			       "/usr/lib/linux-tools/*/perf > /dev/null 2>&1") == 0;
	const struct row rows[] = {
	    {"--profile", "PERF=/nonexistent/perf", "/nonexistent/perf ($PERF) does not run"},
	    /* what Debian's /usr/bin/perf wrapper says without a perf of the running kernel */
	    {"--lock-contention", perf_env, "E: linux-perf-9.9 is not installed."},
	    {"--profile", versioned ? NULL : path_env, "no perf that runs with kernel"},
	    {"--lock-contention", versioned ? NULL : path_env, "apt-get install linux-perf"},
	};
	char *out, *err;

	tu_tmpdir(dir, sizeof(dir));
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	snprintf(marker, sizeof(marker), "%s/ran", dir);
	snprintf(script, sizeof(script), "touch %s", marker);
	tu_write(dir, "bin/perf",
		 "#!/bin/sh\necho 'E: linux-perf-9.9 is not installed.' >&2\n"
		 "exit 1\n");
	snprintf(cmd, sizeof(cmd), "chmod +x %s/bin/perf", dir);
	cr_assert_eq(system(cmd), 0);
	snprintf(perf_env, sizeof(perf_env), "PERF=%s/bin/perf", dir);
	snprintf(path_env, sizeof(path_env), "PATH=%s/bin:/nonexistent", dir);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		/* a $PERF the tests run with is not the row's */
		const char *env[] = {"PERF=", rows[i].env, NULL};
		const char *args[] = {"--server", url,   "--token", TOKEN_COLLECTOR, "--spool",
				      spool,      "run", "--suite", "readtwice",     rows[i].flag,
				      "--",       "sh",  "-c",      script,          NULL};
		int rc;

		if (!rows[i].env)
			continue; /* a versioned perf is installed: the search would find it */
		rc = tu_collect(args, env, &out, &err);
		cr_expect_eq(rc, 69, "row %zu: exit %d: %s", i, rc, err);
		cr_expect(strstr(err, rows[i].says) != NULL, "row %zu: no \"%s\" in: %s", i,
			  rows[i].says, err);
		cr_expect_neq(access(marker, F_OK), 0, "row %zu: the command ran", i);
		free(out);
		free(err);
	}
	{
		/* --perf names one: only that one is tried */
		const char *args[] = {
		    "--server", url,       "--token",   TOKEN_COLLECTOR, "--spool", spool,
		    "run",      "--suite", "readtwice", "--profile",     "--perf",  perf_env + 5,
		    "--",       "sh",      "-c",        script,          NULL};
		int rc = tu_collect(args, NULL, &out, &err);
		cr_expect_eq(rc, 69, "--perf: exit %d: %s", rc, err);
		cr_expect(strstr(err, "(--perf) does not run") &&
			      strstr(err, "E: linux-perf-9.9 is not installed."),
			  "--perf: %s", err);
		cr_expect_neq(access(marker, F_OK), 0, "--perf: the command ran");
		free(out);
		free(err);
	}
	cr_expect_eq(tu_count_files(spool, ".json"), 0, "a run was spooled");
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM run"), 0, "a run was stored");
}

/*
 * A perf that runs but may not record (an unprivileged user under
 * perf_event_paranoid >= 1): exit 69 with perf's own reason, the command not run.
 */
Test(perf_monitors, a_perf_that_may_not_record_is_exit_69_with_perfs_reason)
{
	const char *bin =
	    getenv("KPERF_COLLECT_BIN") ? getenv("KPERF_COLLECT_BIN") : "build/kperf-collect";
	char dir[4096], cmd[16384], *out, *text;
	size_t len;
	long paranoid;

	text = read_file("/proc/sys/kernel/perf_event_paranoid", 64, &len);
	paranoid = text ? strtol(text, NULL, 10) : -1;
	free(text);
	if (getuid() != 0 || paranoid < 1 || system("command -v setpriv > /dev/null 2>&1"))
		cr_skip_test("needs root, setpriv and perf_event_paranoid >= 1 (it is %ld) to run "
			     "kperf-collect as a user perf refuses",
			     paranoid);
	need_perf("profile");
	tu_tmpdir(dir, sizeof(dir));
	snprintf(cmd, sizeof(cmd),
		 "chmod 777 %s && cd %s && TMPDIR=%s KPERF_COLLECT_CONFIG=/dev/null setpriv "
		 "--reuid=65534 --regid=65534 --clear-groups %s%s --machine nobody run --suite x "
		 "--profile --dry-run -- sh -c 'touch ran'",
		 dir, dir, dir, bin[0] == '/' ? "" : "$OLDPWD/", bin);
	cr_expect_eq(sh_out(cmd, &out), 69, "%s", out);
	cr_expect(strstr(out, "perf record exited with status") &&
		      strstr(out, "perf_event_paranoid setting is"),
		  "%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "test ! -e %s/ran && test -z \"$(ls -A %s)\"", dir, dir);
	cr_expect_eq(system(cmd), 0, "the command ran, or perf's files were left in %s", dir);
}
