/*
 * test_parsers.c - every output parser against reference data: LKP's own
 * fixtures (raw output in, the metrics LKP's parsers print out, to the
 * printed precision), fixtures written from the tools' documented output for
 * the formats LKP has none of, and malformed or truncated inputs, which must
 * give a message naming file and line, never a crash.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/base/cutil.h"
#include "collectors/parse/metrics.h"
#include "collectors/parse/parse.h"
#include "tests/collect/testutil.h"

struct fixture {
	const char *format;
	const char *raw;      /* under tests/fixtures/ */
	size_t nmetrics;      /* keys in the expected file, a guard against an empty one */
};

static const struct fixture fixtures[] = {
	{"vm-scalability", "lkp-stats/vm-scalability/1", 5},
	{"vm-scalability", "lkp-stats/vm-scalability/2", 6},
	{"vm-scalability", "lkp-stats/vm-scalability/3", 9},
	{"will-it-scale", "lkp-stats/will-it-scale/1", 8},
	{"will-it-scale", "lkp-stats/will-it-scale/2", 1},
	{"ycsb", "lkp-stats/ycsb/01", 12},
	{"memtier", "lkp-stats/memtier/1", 73},
	{"perf-profile", "lkp-stats/perf-profile/1", 490},
	{"perf-profile", "lkp-stats/perf-profile/2", 332},
	{"vmstat", "lkp-stats/vmstat/1", 18},
	{"readtwice", "collect/readtwice/1", 3},
	{"readtwice", "collect/readtwice/2", 3},
	{"sysbench", "collect/sysbench/1", 23},
	{"lock_stat", "collect/lock_stat/1", 43},
};

static char *slurp(const char *rel, size_t *len)
{
	char path[512];
	char *text;

	snprintf(path, sizeof(path), "tests/fixtures/%s", rel);
	text = read_file(path, 64u << 20, len);
	cr_assert_not_null(text, "cannot read %s (run the tests from the repository root)", path);
	return text;
}

Test(parsers, lkp_fixtures_and_documented_formats)
{
	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		const struct fixture *f = &fixtures[i];
		const struct parser *p = parser_find(f->format);
		char yaml[512];
		struct parse_ctx pc;
		size_t len;
		char *text = slurp(f->raw, &len);
		json_t *exp;

		cr_assert_not_null(p, "no parser %s", f->format);
		snprintf(yaml, sizeof(yaml), "tests/fixtures/%s.yaml", f->raw);
		exp = tu_expected(yaml);
		cr_assert_eq(json_object_size(exp), f->nmetrics, "%s: %zu expected keys", yaml,
			     json_object_size(exp));
		parse_ctx_init(&pc, f->raw);
		cr_assert_eq(parse_run(p, &pc, text, len), 0, "%s: %s", f->raw, pc.err);
		cr_assert_eq(json_array_size(pc.runs), 1);
		tu_assert_metrics(f->raw, p->program, parse_metrics(&pc), exp);
		parse_ctx_release(&pc);
		json_decref(exp);
		free(text);
	}
}

/* Spot checks of numbers a reader of the seeds knows, beside the full tables. */
Test(parsers, headline_numbers)
{
	static const struct {
		const char *format, *raw, *metric;
		double value;
	} rows[] = {
		{"vm-scalability", "lkp-stats/vm-scalability/2", "vm-scalability.throughput", 467497},
		{"vm-scalability", "lkp-stats/vm-scalability/3", "vm-scalability.throughput_fault",
		 5715752},
		{"memtier", "lkp-stats/memtier/1", "memtier.get_latency_99.9%_ms", 4.38},
		{"memtier", "lkp-stats/memtier/1", "memtier.total_gets_ops/s", 346659.11000000004},
		{"readtwice", "collect/readtwice/1", "readtwice.throughput", 867.90},
		{"lock_stat", "collect/lock_stat/1", "lock_stat.&lruvec->lru_lock.contentions", 12000},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct parse_ctx pc;
		size_t len;
		char *text = slurp(rows[i].raw, &len);
		json_t *v;

		parse_ctx_init(&pc, rows[i].raw);
		cr_assert_eq(parse_run(parser_find(rows[i].format), &pc, text, len), 0, "%s", pc.err);
		v = json_array_get(json_object_get(parse_metrics(&pc), rows[i].metric), 0);
		cr_assert_not_null(v, "%s: no %s", rows[i].raw, rows[i].metric);
		cr_assert_float_eq(json_number_value(v), rows[i].value, 1e-9 * rows[i].value + 1e-12,
				   "%s: %s", rows[i].raw, rows[i].metric);
		parse_ctx_release(&pc);
		free(text);
	}
}

Test(parsers, units_and_lkp_json)
{
	static const char stats[] = "{\"vm-scalability.throughput\": [20717269, 20699112],"
				    " \"perf-profile.calltrace.cycles-pp.f\": 13.11,"
				    " \"stats_source\": \"x\"}";
	static const char matrix[] = "{\"vm-scalability.throughput\": [1, 2, 3],"
				     " \"proc-vmstat.pgfault\": [10, 20, 30],"
				     " \"stats_source\": [\"a\", \"b\", \"c\"]}";
	struct parse_ctx pc;
	json_t *m;

	parse_ctx_init(&pc, "stats.json");
	cr_assert_eq(parse_run(parser_find("lkp-stats-json"), &pc, stats, strlen(stats)), 0, "%s",
		     pc.err);
	m = parse_metrics(&pc);
	cr_assert_eq(json_object_size(m), 2);
	cr_assert_eq(json_array_size(json_object_get(m, "vm-scalability.throughput")), 2);
	parse_ctx_release(&pc);

	parse_ctx_init(&pc, "matrix.json");
	cr_assert_eq(parse_run(parser_find("lkp-matrix-json"), &pc, matrix, strlen(matrix)), 0, "%s",
		     pc.err);
	cr_assert_eq(json_array_size(pc.runs), 3, "one run per matrix column");
	m = json_array_get(pc.runs, 2);
	cr_assert_float_eq(json_number_value(json_array_get(json_object_get(m, "proc-vmstat.pgfault"),
							    0)),
			   30, 1e-12);
	parse_ctx_release(&pc);

	parse_ctx_init(&pc, "vm");
	{
		size_t len;
		char *text = slurp("lkp-stats/vm-scalability/2", &len);
		cr_assert_eq(parse_run(parser_find("vm-scalability"), &pc, text, len), 0);
		cr_assert_str_eq(json_string_value(json_object_get(pc.units,
								   "vm-scalability.throughput")),
				 "KB/s");
		free(text);
	}
	parse_ctx_release(&pc);
}

/* Malformed input: (format, text, expected "file:line:" prefix of the message). */
Test(parsers, malformed_inputs_name_file_and_line)
{
	static const struct {
		const char *format, *text, *where;
	} rows[] = {
		{"vm-scalability", "./case-x\n12 bytes truncated in 5.0-5.0 seconds\n", "in.txt:2:"},
		{"vm-scalability", "nothing here\n", "in.txt:1:"},
		{"vm-scalability", "99999999999999999999999 bytes / 1 usecs = 1 KB/s\n", "in.txt:1:"},
		{"will-it-scale", "1,2,3\n", "in.txt:1:"},
		{"memtier", "Request Latency Distribution\nSET       x        1.00\n", "in.txt:2:"},
		{"perf-profile", "# no header\n", "in.txt:1:"},
		{"vmstat", " 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 2015-13-45 99:00:00\n",
		 "in.txt:1:"},
		{"proc-vmstat", "nr_free_pages 12\npgfault x\n", "in.txt:2:"},
		{"lock_stat", "lock_stat version 0.9\n", "in.txt:1:"},
		{"lock_stat", "lock_stat version 0.4\nno dashes\n", "in.txt:2:"},
		{"ycsb", "[READ], Operations, many\n", "in.txt:1:"},
		{"sysbench", "\n\n", "in.txt:2:"},
		{"readtwice", "readtwice: total: fast\n", "in.txt:1:"},
		{"lkp-stats-json", "{\"a\": [1,\n", "in.txt:2:"},
		{"lkp-matrix-json", "[1]", "in.txt:1:"},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct parse_ctx pc;
		parse_ctx_init(&pc, "in.txt");
		cr_assert_eq(parse_run(parser_find(rows[i].format), &pc, rows[i].text,
				       strlen(rows[i].text)),
			     -1, "%s accepted %s", rows[i].format, rows[i].text);
		cr_assert(!strncmp(pc.err, rows[i].where, strlen(rows[i].where)),
			  "%s: message \"%s\" does not start with %s", rows[i].format, pc.err,
			  rows[i].where);
		parse_ctx_release(&pc);
	}
}

/* Every fixture cut at many points, and with bytes flipped: no crash, and any
 * failure names the file. (ASan and UBSan watch the same run.) */
Test(parsers, truncated_and_corrupted_inputs_never_crash)
{
	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		const struct parser *p = parser_find(fixtures[i].format);
		size_t len, step;
		char *text = slurp(fixtures[i].raw, &len);

		step = len / 97 + 1;
		for (size_t cut = 0; cut <= len; cut += step) {
			struct parse_ctx pc;
			char *copy = malloc(cut + 1);

			memcpy(copy, text, cut);
			copy[cut] = '\0';
			if (cut > 10)
				copy[cut / 2] = (char)(copy[cut / 2] ^ 0x5a);
			parse_ctx_init(&pc, fixtures[i].raw);
			if (parse_run(p, &pc, copy, cut))
				cr_assert(!strncmp(pc.err, fixtures[i].raw, strlen(fixtures[i].raw)),
					  "message \"%s\" does not name the file", pc.err);
			parse_ctx_release(&pc);
			free(copy);
		}
		free(text);
	}
}

Test(parsers, metric_names_are_cleaned)
{
	static const struct {
		const char *in, *out;
	} rows[] = {
		{"lock_stat.&sb->s_type key.contentions", "lock_stat.&sb->s_type_key.contentions"},
		{"a\tb\n\x01" "c", "a_b_c"},
		{"plain.name", "plain.name"},
	};
	char longname[400];
	json_t *m = json_object();

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char *s = strdup(rows[i].in);
		cr_assert_str_eq(metric_name_clean(s), rows[i].out);
		free(s);
	}
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	cr_assert_eq(metrics_add(m, longname, 1), 0);
	cr_assert_eq(metrics_add(m, "nan", 0.0 / 0.0), -1, "NaN is not a value");
	cr_assert_eq(metrics_add(m, " ", 1), 0);
	{
		const char *key;
		json_t *v;
		json_object_foreach(m, key, v)
			cr_assert(strlen(key) <= METRIC_NAME_MAX && !strchr(key, ' '), "%s", key);
	}
	json_decref(m);
}
