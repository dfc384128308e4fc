/*
 * import.c - outputs already on disk into runs. Each file is one iteration
 * of one run (its values are appended), except for formats that hold many
 * runs (LKP matrix.json: one run per column).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cutil.h"
#include "import.h"
#include "metrics.h"
#include "parse.h"
#include "run.h"

/* Largest output file read. */
#define IMPORT_FILE_MAX (512u * 1024u * 1024u)

int import_command(const struct collect_config *c, const struct import_opts *o)
{
	const struct parser *p = parser_find(o->format);
	struct run_meta meta = o->meta;
	json_t *runs = json_array(), *units = json_object(), *dirs = json_object(), *all;
	int rc = 0;
	char err[512];

	if (!p) {
		err_msg("unknown format \"%s\" (see kperf-collect help)", o->format);
		rc = EXIT_USAGE;
		goto out;
	}
	if (!meta.suite)
		meta.suite = p->program[0] ? p->program : "lkp";
	for (char **f = o->files; *f; f++) {
		struct parse_ctx pc;
		size_t len;
		char *text = read_file(*f, IMPORT_FILE_MAX, &len);
		size_t i;
		json_t *m;

		if (!text) {
			err_msg("%s: %s", *f, strerror(errno));
			rc = EXIT_REJECTED;
			goto out;
		}
		parse_ctx_init(&pc, *f);
		if (parse_run(p, &pc, text, len)) {
			err_msg("%s", pc.err);
			parse_ctx_release(&pc);
			free(text);
			rc = EXIT_REJECTED;
			goto out;
		}
		/* single-run formats: every file adds an iteration to run 0 */
		json_array_foreach(pc.runs, i, m) {
			if (json_array_size(pc.runs) == 1 && json_array_size(runs))
				metrics_merge(json_array_get(runs, 0), m);
			else
				json_array_append(runs, m);
		}
		json_object_update(units, pc.units);
		json_object_update(dirs, pc.directions);
		parse_ctx_release(&pc);
		free(text);
	}
	all = json_array();
	for (size_t i = 0; i < json_array_size(runs); i++) {
		json_t *doc = rundoc_new(c, &meta, err, sizeof(err));
		if (!doc) {
			err_msg("%s", err);
			json_decref(all);
			rc = EXIT_USAGE;
			goto out;
		}
		json_object_set(doc, "metrics", json_array_get(runs, i));
		json_object_set(doc, "units", units);
		json_object_set(doc, "directions", dirs);
		if (json_array_size(runs) > 1) {
			/* one run_id per column, made unique by its index */
			char id[200];
			snprintf(id, sizeof(id), "%s.%zu",
				 json_string_value(json_object_get(doc, "run_id")), i);
			json_object_set_new(doc, "run_id", json_string(id));
		}
		rundoc_enforce_limits(doc);
		json_array_append_new(all, doc);
	}
	if (!o->deliver) {
		json_t *top = json_array_size(all) == 1 ? json_incref(json_array_get(all, 0))
							: json_pack("{sO}", "runs", all);
		char *s = json_dumps(top, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
		printf("%s\n", s);
		free(s);
		json_decref(top);
	} else {
		for (size_t i = 0; i < json_array_size(all); i++) {
			enum outcome out = rundoc_deliver(c, json_array_get(all, i));
			if (out == OUTCOME_LOST)
				rc = EXIT_LOST;
			else if (out == OUTCOME_REJECTED && !rc)
				rc = EXIT_REJECTED;
		}
	}
	json_decref(all);
out:
	json_decref(runs);
	json_decref(units);
	json_decref(dirs);
	return rc;
}
