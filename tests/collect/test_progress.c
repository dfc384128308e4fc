/*
 * test_progress.c - what kperf-collect says while it works, against a real
 * kperfd: `run` says a line per iteration on stderr with its time and
 * headline figure and what it delivered on stdout, keeps a status line on
 * a terminal (a pseudo-terminal here) during a long iteration, and `import`
 * and `commits` report files and batches; --quiet silences all of it but
 * errors, and the runs are stored all the same. The agent's catalogue
 * takes profile and lock_contention.
 */
#include <criterion/criterion.h>
#include <poll.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/integration/harness.h"
#include "tests/collect/testutil.h"

KPERFD_URL_SUITE(progress, 120);

#define READTWICE_SH                                                                               \
	"printf 'readtwice: process 0: 268435456 bytes read twice in 2.4 s: 212.25 MB/s\\n"        \
	"readtwice: process 1: 268435456 bytes read twice in 2.3 s: 222.75 MB/s\\n"                \
	"readtwice: total: 2 processes, 536870912 bytes in 2.4 s: 20717269.00 MB/s\\n'"

/* The headline figure with its unit and thousands separators. */
#define HEADLINE ", readtwice.throughput 20,717,269 MB/s\n"

static int count(const char *text, const char *needle)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static long runs_of(const char *machine)
{
	char sql[256];
	snprintf(
	    sql, sizeof(sql),
	    "SELECT count(*) FROM run r JOIN machine m ON m.id = r.machine_id WHERE m.name = '%s'",
	    machine);
	return harness_count(&K, sql);
}

Test(progress, run_says_a_line_per_iteration_and_what_it_stored)
{
	char dir[4096], spool[4200];
	const char *args[] = {"--server",   url,       "--token",   TOKEN_COLLECTOR,
			      "--machine",  "prog-1",  "--spool",   spool,
			      "run",        "--suite", "readtwice", "--iterations",
			      "3",          "--",      "sh",        "-c",
			      READTWICE_SH, NULL};
	char *out, *err, line[64];
	int rc;

	tu_tmpdir(dir, sizeof(dir));
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	rc = tu_collect(args, NULL, &out, &err);
	cr_assert_eq(rc, 0, "exit %d: %s %s", rc, out, err);
	for (int i = 1; i <= 3; i++) {
		const char *p;
		snprintf(line, sizeof(line), "kperf-collect: iteration %d/3: ", i);
		p = strstr(err, line);
		cr_expect_not_null(p, "no \"%s\" in: %s", line, err);
		if (p && (p = strchr(p, ',')))
			cr_expect(!strncmp(p, HEADLINE, strlen(HEADLINE)), "%s", p);
	}
	cr_expect_eq(count(out, "readtwice: total:"), 3, "the command's output is echoed: %s", out);
	cr_expect_eq(count(out, "kperf-collect: run prog-1-"), 1, "%s", out);
	cr_expect(strstr(out, " stored (HTTP 201)\n") != NULL, "%s", out);
	cr_expect_eq(runs_of("prog-1"), 1);
	free(out);
	free(err);
}

Test(progress, quiet_silences_all_but_errors)
{
	char dir[4096], spool[4200];
	const char *ok[] = {"--server",  url,          "--token",   TOKEN_COLLECTOR,
			    "--machine", "prog-q",     "--spool",   spool,
			    "run",       "--suite",    "readtwice", "--iterations",
			    "2",         "--quiet",    "--",        "sh",
			    "-c",        READTWICE_SH, NULL};
	/* a parser that finds nothing: an error, said under --quiet too */
	const char *bad[] = {"--server",  url,       "--token",   TOKEN_COLLECTOR,
			     "--machine", "prog-q",  "--spool",   spool,
			     "run",       "--suite", "readtwice", "--quiet",
			     "--",        "sh",      "-c",        "echo no figures here",
			     NULL};
	/* a dry run's document is what was asked for: still printed */
	const char *dry[] = {"--machine", "prog-q", "run", "--suite", "readtwice",  "--dry-run",
			     "--quiet",   "--",     "sh",  "-c",      READTWICE_SH, NULL};
	char *out, *err;
	int rc;

	tu_tmpdir(dir, sizeof(dir));
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	rc = tu_collect(ok, NULL, &out, &err);
	cr_assert_eq(rc, 0, "exit %d: %s %s", rc, out, err);
	cr_expect_str_eq(out, "", "stdout under --quiet");
	cr_expect_str_eq(err, "", "stderr under --quiet");
	cr_expect_eq(runs_of("prog-q"), 1, "the run is stored all the same");
	free(out);
	free(err);

	rc = tu_collect(bad, NULL, &out, &err);
	cr_expect_eq(rc, 0, "exit %d: %s", rc, err);
	cr_expect_str_eq(out, "");
	cr_expect(strstr(err, "output of iteration 1:1: no readtwice results") != NULL, "%s", err);
	cr_expect_eq(count(err, "\n"), 1, "only the error: %s", err);
	free(out);
	free(err);

	rc = tu_collect(dry, NULL, &out, &err);
	cr_expect_eq(rc, 0, "exit %d: %s", rc, err);
	cr_expect_str_eq(err, "");
	cr_expect(out[0] == '{' && strstr(out, "\"readtwice.throughput\""), "%s", out);
	free(out);
	free(err);
}

/*
 * On a terminal a long iteration keeps one status line, redrawn in place
 * (carriage return, erase to the end of the line): the iteration, its
 * seconds, the monitors. The line comes once the iteration has run 2 s and
 * is redrawn every second or so; the command sleeps 5.6 s, so a loaded
 * machine still sees it drawn and redrawn, whatever seconds it shows.
 */
Test(progress, a_terminal_gets_a_status_line_during_a_long_iteration)
{
	static const char status[] = "\rkperf-collect: iteration 1/1: ";
	static const char monitors[] = " s, monitors: /proc counters\033[K";
	static const char done[] = "\r\033[Kkperf-collect: iteration 1/1: ";
	const char *bin =
	    getenv("KPERF_COLLECT_BIN") ? getenv("KPERF_COLLECT_BIN") : "build/kperf-collect";
	char buf[65536];
	const char *p;
	size_t len = 0;
	int master, st, lines = 0;
	long first = 0, last = 0;
	double took = 0;
	pid_t pid;

	pid = forkpty(&master, NULL, NULL, NULL);
	cr_assert_geq(pid, 0, "forkpty");
	if (pid == 0) {
		setenv("KPERF_COLLECT_CONFIG", "/dev/null", 1);
		execl(bin, bin, "--machine", "prog-tty", "run", "--suite", "mybench", "--format",
		      "kv", "--dry-run", "--", "sh", "-c",
		      "echo mybench.ops: 1; sleep 5.6; echo mybench.ops: 2", (char *)NULL);
		_exit(127);
	}
	for (;;) {
		struct pollfd pf = {.fd = master, .events = POLLIN};
		ssize_t n;
		if (poll(&pf, 1, 60000) <= 0)
			break;
		n = read(master, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	close(master);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, buf);
	/* the iteration's own line, after the status line is taken off */
	p = strstr(buf, done);
	cr_assert_not_null(p, "no iteration line after the status line: %s", buf);
	took = strtod(p + strlen(done), NULL);
	cr_expect(took >= 5.6 && took < 30, "the iteration took %g s: %s", took, buf);
	/* status lines: whole seconds from 2 on, never going back, none past the
	 * iteration (the line drawn again after the command's output may show
	 * the second the one before it did) */
	for (p = buf; (p = strstr(p, status)); p += strlen(status)) {
		char *end;
		long secs = strtol(p + strlen(status), &end, 10);
		cr_assert(end > p + strlen(status) && !strncmp(end, monitors, strlen(monitors)),
			  "a status line of another form: %.80s", p);
		cr_expect_geq(secs, 2, "a status line before 2 s: %s", buf);
		cr_expect_geq(secs, last, "a redrawn line that counts back: %s", buf);
		cr_expect_leq(secs, took + 1, "a status line past the iteration's %g s: %s", took,
			      buf);
		if (!lines++)
			first = secs;
		last = secs;
	}
	cr_expect_geq(lines, 2, "drawn once and redrawn: %d status lines in %s", lines, buf);
	cr_expect_gt(last, first, "redrawn with the seconds counting on: %s", buf);
	/* taken off before the command's next output, and before the iteration line */
	cr_expect(strstr(buf, "\r\033[Kmybench.ops: 2") != NULL, "%s", buf);
}

Test(progress, import_reports_its_files)
{
	char dir[4096], a[4200], b[4200], spool[4200];
	const char *args[] = {"--server",  url,        "--token", TOKEN_COLLECTOR,
			      "--machine", "prog-imp", "--spool", spool,
			      "import",    "--format", "kv",      "--suite",
			      "mybench",   a,          b,         NULL};
	const char *quiet[] = {"--server", url,       "--token", TOKEN_COLLECTOR, "--machine",
			       "prog-imp", "--spool", spool,     "import",        "--quiet",
			       "--format", "kv",      "--suite", "mybench",       a,
			       b,          NULL};
	char *out, *err;
	int rc;

	tu_tmpdir(dir, sizeof(dir));
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	tu_write(dir, "a.txt", "mybench.ops: 1\n");
	tu_write(dir, "b.txt", "mybench.ops: 2\nmybench.lat: 3\n");
	snprintf(a, sizeof(a), "%s/a.txt", dir);
	snprintf(b, sizeof(b), "%s/b.txt", dir);
	rc = tu_collect(args, NULL, &out, &err);
	cr_assert_eq(rc, 0, "%s %s", out, err);
	cr_expect(strstr(err, "kperf-collect: file 1/2: ") && strstr(err, "a.txt: 1 metrics\n"),
		  "%s", err);
	cr_expect(strstr(err, "kperf-collect: file 2/2: ") && strstr(err, "b.txt: 2 metrics\n"),
		  "%s", err);
	cr_expect(strstr(out, " stored (HTTP 201)") != NULL, "%s", out);
	free(out);
	free(err);
	rc = tu_collect(quiet, NULL, &out, &err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect_str_eq(out, "");
	cr_expect_str_eq(err, "");
	cr_expect_eq(runs_of("prog-imp"), 2);
	free(out);
	free(err);
}

static void sh(const char *dir, const char *cmd)
{
	char line[8192];
	snprintf(line, sizeof(line), "cd '%s' && %s", dir, cmd);
	cr_assert_eq(system(line), 0, "%s", line);
}

Test(progress, commits_reports_its_batches)
{
	char dir[4096];
	const char *args[] = {"--server", url,     "--token", TOKEN_COLLECTOR,
			      "commits",  "--git", dir,       "HEAD~3..HEAD",
			      NULL};
	const char *quiet[] = {"--server", url, "--token", TOKEN_COLLECTOR, "commits",
			       "--git",    dir, "--quiet", "HEAD~3..HEAD",  NULL};
	char *out, *err;
	int rc;

	if (system("git --version > /dev/null 2>&1"))
		cr_skip_test("git is not installed");
	tu_tmpdir(dir, sizeof(dir));
	sh(dir, "git init -q . && git config user.name 'A Hacker' && "
		"git config user.email a@example.org && git config commit.gpgsign false");
	for (int i = 0; i < 4; i++)
		sh(dir, "echo $RANDOM >> mm.c && git add . && git commit -q -m 'mm: a change'");
	rc = tu_collect(args, NULL, &out, &err);
	cr_assert_eq(rc, 0, "%s %s", out, err);
	cr_expect(strstr(err, "kperf-collect: 3 commits in HEAD~3..HEAD (first parent), 500 per "
			      "request\n") != NULL,
		  "%s", err);
	cr_expect(strstr(out, "kperf-collect: 3 commits stored (HTTP 201): 3 of 3\n") != NULL, "%s",
		  out);
	free(out);
	free(err);
	rc = tu_collect(quiet, NULL, &out, &err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect_str_eq(out, "");
	cr_expect_str_eq(err, "");
	free(out);
	free(err);
}

/* The agent's catalogue asks for the monitors per test; a bad value names its line. */
Test(progress, the_catalogue_takes_profile_and_lock_contention)
{
	char dir[4096], cat[4200];
	const char *args[] = {"agent", "--catalogue", cat, "--check", NULL};
	char *out, *err;
	int rc;

	tu_tmpdir(dir, sizeof(dir));
	snprintf(cat, sizeof(cat), "%s/catalogue.conf", dir);
	tu_write(
	    dir, "catalogue.conf",
	    "[rt]\nsuite = readtwice\nprofile = yes\nlock_contention = on\n"
	    "command = readtwice --procs 4\n[plain]\nsuite = x\nprofile = no\ncommand = true\n");
	rc = tu_collect(args, NULL, &out, &err);
	cr_assert_eq(rc, 0, "%s %s", out, err);
	cr_expect(strstr(out, "[rt] line 1: ") &&
		      strstr(out, "1 iteration, profile, lock_contention,"
				  " command: [readtwice] [--procs] [4]"),
		  "%s", out);
	cr_expect(strstr(out, "[plain] line 6: ") && strstr(out, "1 iteration, command: [true]"),
		  "%s", out);
	free(out);
	free(err);
	tu_write(dir, "catalogue.conf",
		 "[rt]\nsuite = readtwice\nprofile = maybe\ncommand = true\n");
	rc = tu_collect(args, NULL, &out, &err);
	cr_expect_eq(rc, 65, "%s", err);
	cr_expect(strstr(err, "catalogue.conf:3: profile \"maybe\": expected yes or no") != NULL,
		  "%s", err);
	free(out);
	free(err);
}
