/*
 * test_perf_lock.c - the perf-lock parser against real `perf lock
 * contention` outputs made on this 2-CPU Debian 12 machine
 * (tests/fixtures/collect/perf-lock/, each beside its .cmd): per caller the
 * figures equal the sums of the rows perf printed, per lock type and in
 * total too, a run of no contention is zeros, the extra min-wait column
 * changes nothing else, every metric is lower-is-better, and cut or garbled
 * outputs fail naming file and line (exit 65, nothing sent).
 */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "collectors/base/cutil.h"
#include "collectors/parse/parse.h"
#include "tests/integration/harness.h"
#include "tests/collect/testutil.h"

#define FIX "tests/fixtures/collect/perf-lock/"

static json_t *parse_file(const char *file, struct parse_ctx *pc)
{
	char path[512];
	size_t len;
	char *text;

	snprintf(path, sizeof(path), FIX "%s", file);
	text = read_file(path, 1u << 20, &len);
	cr_assert_not_null(text, "cannot read %s (run the tests from the repository root)", path);
	parse_ctx_init(pc, file);
	cr_assert_eq(parse_run(parser_find("perf-lock"), pc, text, len), 0, "%s: %s", file,
		     pc->err);
	free(text);
	return parse_metrics(pc);
}

static double value(json_t *m, const char *name)
{
	json_t *v = json_array_get(json_object_get(m, name), 0);
	cr_assert(json_is_number(v), "no %s", name);
	return json_number_value(v);
}

/* The figures, summed by hand from the rows perf printed in each fixture. */
Test(perf_lock, figures_equal_the_sums_of_what_perf_printed)
{
	static const struct {
		const char *file, *metric;
		double want;
	} rows[] = {
	    /* readtwice-4procs: folio_batch_move_lru+0x88 in three rows:
	     * 7 / 35.48 us / 15.46 us / 5.07 us, 2 / 21.19 / 14.59 / 10.60, 1 / 14.29 x 3 */
	    {"readtwice-4procs", "perf-lock.folio_batch_move_lru.contended", 10},
	    {"readtwice-4procs", "perf-lock.folio_batch_move_lru.wait_total_us", 70.96},
	    {"readtwice-4procs", "perf-lock.folio_batch_move_lru.wait_max_us", 15.46},
	    /* (7 x 5.07 + 2 x 10.60 + 1 x 14.29) / 10 */
	    {"readtwice-4procs", "perf-lock.folio_batch_move_lru.wait_avg_us", 7.098},
	    /* 1 / 23.46 ms, rwsem:W, ext4_do_writepages+0x82d */
	    {"readtwice-4procs", "perf-lock.ext4_do_writepages.wait_total_us", 23460},
	    {"readtwice-4procs", "perf-lock.type.rwsem-W.contended", 1},
	    {"readtwice-4procs", "perf-lock.type.spinlock.contended", 25},
	    {"readtwice-4procs", "perf-lock.total.contended", 26},
	    {"readtwice-4procs", "perf-lock.total.wait_max_us", 23460},
	    /* readtwice-8procs: five folio_batch_move_lru rows, 37 contentions in all */
	    {"readtwice-8procs", "perf-lock.folio_batch_move_lru.contended", 37},
	    {"readtwice-8procs", "perf-lock.folio_batch_move_lru.wait_total_us", 234.12},
	    {"readtwice-8procs", "perf-lock.folio_batch_move_lru.wait_max_us", 19.02},
	    /* __page_cache_release.part.0+0x58: the compiler's suffix goes, as in perf-profile */
	    {"readtwice-8procs", "perf-lock.__page_cache_release.contended", 13},
	    /* 8 / 44.47 ms, 1 / 5.56 ms, 8 / 28.73 us: rwsem:W */
	    {"readtwice-8procs", "perf-lock.type.rwsem-W.contended", 17},
	    {"readtwice-8procs", "perf-lock.type.rwsem-W.wait_total_us", 50058.73},
	    {"readtwice-8procs", "perf-lock.total.contended", 110},
	    /* readtwice-1proc: perf found no contention at all */
	    {"readtwice-1proc", "perf-lock.total.contended", 0},
	    {"readtwice-1proc", "perf-lock.total.wait_total_us", 0},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct parse_ctx pc;
		json_t *m = parse_file(rows[i].file, &pc);
		double got = value(m, rows[i].metric);
		cr_expect(got > rows[i].want - 1e-9 && got < rows[i].want + 1e-9,
			  "%s: %s = %.17g, want %g", rows[i].file, rows[i].metric, got,
			  rows[i].want);
		parse_ctx_release(&pc);
	}
}

Test(perf_lock, counts_names_and_directions)
{
	static const struct {
		const char *file;
		size_t callers, types;
	} files[] = {
	    {"readtwice-4procs", 8, 2},
	    {"readtwice-8procs", 22, 2},
	    {"readtwice-1proc", 0, 0},
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct parse_ctx pc;
		json_t *m = parse_file(files[i].file, &pc), *v;
		size_t types = 0, total = 0, callers = 0;
		const char *name;

		json_object_foreach(m, name, v) {
			const char *d = json_string_value(json_object_get(pc.directions, name));
			cr_expect(d && !strcmp(d, "lower"), "%s: %s is not lower-is-better",
				  files[i].file, name);
			cr_expect(!strncmp(name, "perf-lock.", 10), "%s: %s", files[i].file, name);
			cr_expect(!strchr(name, '+') && !strchr(name, ':'), "%s: %s", files[i].file,
				  name);
			if (!strncmp(name, "perf-lock.type.", 15))
				types += strstr(name, ".contended") != NULL;
			else if (!strncmp(name, "perf-lock.total.", 16))
				total++;
			else
				callers += strstr(name, ".contended") != NULL;
			if (!strcmp(name + strlen(name) - 3, "_us"))
				cr_expect_str_eq(json_string_value(json_object_get(pc.units, name)),
						 "us", "%s: %s", files[i].file, name);
		}
		cr_expect_eq(callers, files[i].callers, "%s: %zu callers", files[i].file, callers);
		cr_expect_eq(types, files[i].types, "%s: %zu types", files[i].file, types);
		cr_expect_eq(total, files[i].callers ? 4 : 3,
			     "%s: %zu total rows (no average of none)", files[i].file, total);
		parse_ctx_release(&pc);
	}
}

/* perf lock contention -F ... with min wait: the same recording, the same metrics. */
Test(perf_lock, an_extra_column_changes_nothing)
{
	struct parse_ctx a, b;
	json_t *ma = parse_file("readtwice-4procs", &a);
	json_t *mb = parse_file("readtwice-4procs-min-wait", &b);

	cr_expect(json_equal(ma, mb), "the metrics differ with the min wait column");
	parse_ctx_release(&a);
	parse_ctx_release(&b);
}

/* Cut outputs and garbage: the line and what is wrong, and the context as it was. */
Test(perf_lock, cut_and_garbled_outputs_name_file_line_and_fault)
{
	static const char header[] =
	    " contended   total wait     max wait     avg wait         type   caller\n";
	static const struct {
		const char *text, *where, *says;
	} bad[] = {
	    {"", "in:1:", "not `perf lock contention` output"},
	    {"garbage\n", "in:1:", "not `perf lock contention` output"},
	    /* perf's -t form: per thread, no callers */
	    {" contended   total wait     max wait     avg wait          pid   comm\n\n",
	     "in:1:", "another form"},
	    {" contended   total wait     max wait     avg wait         type   caller",
	     "in:1:", "ends at the header"},
	    {"HEADER\n         7     35.48 us     15.4", "in:3:", "expected 9 fields"},
	    {"HEADER\n         7     35.48 us     15.46 us      5.07 us     spinlock\n",
	     "in:3:", "found 8"},
	    {"HEADER\n         x     35.48 us     15.46 us      5.07 us     spinlock   f+0x1\n",
	     "in:3:", "contended \"x\" is not a count"},
	    {"HEADER\n         7     35.48 yr     15.46 us      5.07 us     spinlock   f+0x1\n",
	     "in:3:", "total wait \"35.48 yr\" is not a time"},
	    {"HEADER\n        -7     35.48 us     15.46 us      5.07 us     spinlock   f+0x1\n",
	     "in:3:", "not a count"},
	    {" contended   long wait     type   caller\n\n", "in:1:", "unknown column"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct parse_ctx pc;
		char text[1024];
		const char *h = strstr(bad[i].text, "HEADER\n");
		json_t *before;

		if (h)
			snprintf(text, sizeof(text), "%s\n%s", header, bad[i].text + 7);
		else
			snprintf(text, sizeof(text), "%s", bad[i].text);
		parse_ctx_init(&pc, "in");
		parse_metric(&pc, "kept", 1);
		before = json_deep_copy(parse_metrics(&pc));
		cr_expect_eq(parse_run(parser_find("perf-lock"), &pc, text, strlen(text)), -1,
			     "row %zu parsed", i);
		cr_expect(!strncmp(pc.err, bad[i].where, strlen(bad[i].where)),
			  "row %zu: \"%s\" does not start with %s", i, pc.err, bad[i].where);
		cr_expect(strstr(pc.err, bad[i].says) != NULL, "row %zu: \"%s\" lacks \"%s\"", i,
			  pc.err, bad[i].says);
		cr_expect(json_equal(before, parse_metrics(&pc)), "row %zu: the run changed", i);
		json_decref(before);
		parse_ctx_release(&pc);
	}
}

/* Every cut of a real output parses or fails with a message; none crashes. */
Test(perf_lock, every_cut_of_a_real_output_parses_or_fails_cleanly)
{
	char path[256];
	size_t len;
	char *text;

	snprintf(path, sizeof(path), FIX "readtwice-8procs");
	text = read_file(path, 1u << 20, &len);
	cr_assert_not_null(text);
	for (size_t n = 0; n <= len; n++) {
		struct parse_ctx pc;
		parse_ctx_init(&pc, "cut");
		if (parse_run(parser_find("perf-lock"), &pc, text, n))
			cr_expect(!strncmp(pc.err, "cut:", 4), "cut at %zu: %s", n, pc.err);
		parse_ctx_release(&pc);
	}
	free(text);
}

/*
 * kperf-collect itself: a cut output is exit 65 naming file and line, and
 * import sends nothing (the server is away: it would have spooled it),
 * while the whole output is spooled.
 */
Test(perf_lock, the_cli_exits_65_and_sends_nothing_for_a_cut_output, .timeout = 60)
{
	char dir[4096], cut[4200], spool[4200], server[64];
	char *text, *out, *err;
	size_t len;
	int rc;

	tu_tmpdir(dir, sizeof(dir));
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	snprintf(server, sizeof(server), "http://127.0.0.1:%d", harness_closed_port());
	text = read_file(FIX "readtwice-8procs", 1u << 20, &len);
	cr_assert_not_null(text);
	text[300] = '\0'; /* in the middle of line 5 */
	tu_write(dir, "cut", text);
	snprintf(cut, sizeof(cut), "%s/cut", dir);
	{
		const char *args[] = {"parse", "--format", "perf-lock", cut, NULL};
		rc = tu_collect(args, NULL, &out, &err);
		cr_expect_eq(rc, 65, "exit %d: %s", rc, err);
		cr_expect(strstr(err, "/cut:5: expected 9 fields") != NULL, "%s", err);
		cr_expect_eq(out[0], '\0', "printed a run: %s", out);
		free(out);
		free(err);
	}
	{
		const char *args[] = {"--server", server,     "--token",   "t", "--spool", spool,
				      "import",   "--format", "perf-lock", cut, NULL};
		rc = tu_collect(args, NULL, &out, &err);
		cr_expect_eq(rc, 65, "exit %d: %s", rc, err);
		cr_expect_eq(tu_count_files(spool, ".json"), 0, "a run was sent");
		free(out);
		free(err);
	}
	{
		const char *args[] = {
		    "--server", server,   "--token",  "t",         "--spool",
		    spool,      "import", "--format", "perf-lock", FIX "readtwice-8procs",
		    NULL};
		rc = tu_collect(args, NULL, &out, &err);
		cr_expect_eq(rc, 0, "exit %d: %s", rc, err);
		cr_expect_eq(tu_count_files(spool, ".json"), 1, "the whole output is a run");
		free(out);
		free(err);
	}
	free(text);
}
