/*
 * fuzz_parse.c - libFuzzer harness for one of kperf-collect's output
 * parsers (collectors/parse_*.c), chosen at build time: fuzz.mk compiles it
 * once per format with -DFUZZ_FORMAT='"ycsb"' into $(BUILD)/fuzz/parse-ycsb.
 * Any bytes give either runs of valid metrics or a "file:line:" message.
 */
#include <math.h>
#include <string.h>

#include "collectors/parse/metrics.h"
#include "collectors/parse/parse.h"
#include "tests/fuzz/fuzz.h"

#ifndef FUZZ_FORMAT
#error "build with -DFUZZ_FORMAT='\"<format>\"' (see tests/fuzz/fuzz.mk)"
#endif

#define FILE_NAME "fuzz-input"

/* What the ingest contract takes: 1-256 printable ASCII characters, no space. */
static void check_name(const char *name)
{
	size_t n = strlen(name);

	FUZZ_CHECK(n >= 1 && n <= METRIC_NAME_MAX, "name of %zu characters", n);
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK(name[i] > ' ' && name[i] < 0x7f, "byte 0x%02x in \"%s\"",
			   (unsigned char)name[i], name);
}

static void check_run(json_t *metrics)
{
	const char *name;
	json_t *vals, *v;
	size_t i;

	FUZZ_CHECK(json_is_object(metrics), "a run is an object");
	json_object_foreach(metrics, name, vals) {
		check_name(name);
		FUZZ_CHECK(json_is_array(vals) && json_array_size(vals) >= 1, "%s has no values",
			   name);
		json_array_foreach(vals, i, v)
			FUZZ_CHECK(json_is_number(v) && isfinite(json_number_value(v)),
				   "%s[%zu] is not a finite number", name, i);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct parser *p;
	struct parse_ctx pc;
	const char *name;
	json_t *v, *run;
	size_t i;

	if (!p) {
		p = parser_find(FUZZ_FORMAT);
		FUZZ_CHECK(p != NULL, "no parser %s", FUZZ_FORMAT);
	}
	parse_ctx_init(&pc, FILE_NAME);
	if (parse_run(p, &pc, (const char *)data, size)) {
		FUZZ_CHECK(!strncmp(pc.err, FILE_NAME ":", sizeof(FILE_NAME)) &&
				   strlen(pc.err) > sizeof(FILE_NAME),
			   "message \"%s\" does not name the file", pc.err);
	} else {
		FUZZ_CHECK(json_array_size(pc.runs) >= 1, "no runs");
		json_array_foreach(pc.runs, i, run)
			check_run(run);
		json_object_foreach(pc.units, name, v)
			FUZZ_CHECK(json_is_string(v), "unit of %s", name);
		json_object_foreach(pc.directions, name, v)
			FUZZ_CHECK(json_is_string(v) && (!strcmp(json_string_value(v), "higher") ||
							 !strcmp(json_string_value(v), "lower")),
				   "direction of %s", name);
	}
	parse_ctx_release(&pc);
	return 0;
}
