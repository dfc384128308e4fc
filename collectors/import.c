/*
 * import.c - outputs already on disk into runs. Each file is one iteration
 * of one run (its values are appended), except for formats that hold many
 * runs (LKP matrix.json: one run per column) and directory formats (an
 * mmtests tree: one run per benchmark execution, see mmtests.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/base/cutil.h"
#include "collectors/import.h"
#include "collectors/parse/metrics.h"
#include "collectors/parse/mmtests.h"
#include "collectors/parse/parse.h"
#include "collectors/base/progress.h"
#include "collectors/run/run.h"

/* Largest output file read. */
#define IMPORT_FILE_MAX (512u * 1024u * 1024u)

/* Parse files with p into r: one run, or (matrix formats) one per column, tagged 0, 1, ... */
static int read_files(const struct parser *p, char **files, struct dir_runs *r)
{
	json_t *runs = json_array();
	size_t i, nfiles = 0, done = 0;
	json_t *m;
	int rc = 0;

	for (char **f = files; *f; f++)
		nfiles++;
	for (char **f = files; *f; f++) {
		struct parse_ctx pc;
		size_t len;
		char *text = read_file(*f, IMPORT_FILE_MAX, &len);

		if (!text) {
			err_msg("%s: %s", *f, strerror(errno));
			rc = EXIT_REJECTED;
			break;
		}
		parse_ctx_init(&pc, *f);
		if (parse_run(p, &pc, text, len)) {
			err_msg("%s", pc.err);
			parse_ctx_release(&pc);
			free(text);
			rc = EXIT_REJECTED;
			break;
		}
		/* single-run formats: every file adds an iteration to run 0 */
		json_array_foreach(pc.runs, i, m) {
			if (json_array_size(pc.runs) == 1 && json_array_size(runs))
				metrics_merge(json_array_get(runs, 0), m);
			else
				json_array_append(runs, m);
		}
		json_object_update(r->units, pc.units);
		json_object_update(r->directions, pc.directions);
		if (nfiles > 1)
			progress_say("file %zu/%zu: %s: %zu metrics", ++done, nfiles, *f,
				     json_object_size(json_array_get(pc.runs, 0)));
		parse_ctx_release(&pc);
		free(text);
	}
	json_array_foreach(runs, i, m) {
		json_t *run = json_pack("{s:O}", "metrics", m);
		if (json_array_size(runs) > 1) {
			/* one run_id per column, made unique by its index */
			char tag[32];
			snprintf(tag, sizeof(tag), "%zu", i);
			json_object_set_new(run, "tag", json_string(tag));
		}
		json_array_append_new(r->runs, run);
	}
	json_decref(runs);
	return rc;
}

static int read_dirs(const struct dir_format *df, char **dirs, struct dir_runs *r)
{
	char err[1024];

	for (char **d = dirs; *d; d++) {
		size_t before = json_array_size(r->runs);
		if (df->read(*d, r, err, sizeof(err))) {
			err_msg("%s", err);
			return EXIT_REJECTED;
		}
		progress_say("%s: %zu runs", *d, json_array_size(r->runs) - before);
	}
	return 0;
}

/* The document of one run of r (meta's params under the run's own); NULL after a message. */
static json_t *run_doc(const struct collect_config *c, const struct run_meta *meta, json_t *run,
		       const struct dir_runs *r)
{
	json_t *doc, *params = json_object_get(run, "params");
	const char *tag = json_string_value(json_object_get(run, "tag"));
	char err[512];

	doc = rundoc_new(c, meta, err, sizeof(err));
	if (!doc) {
		err_msg("%s", err);
		return NULL;
	}
	json_object_set(doc, "metrics", json_object_get(run, "metrics"));
	json_object_set(doc, "units", r->units);
	json_object_set(doc, "directions", r->directions);
	if (tag) {
		char id[200];
		snprintf(id, sizeof(id), "%s.%s", json_string_value(json_object_get(doc, "run_id")),
			 tag);
		json_object_set_new(doc, "run_id", json_string(id));
	}
	if (params) {
		json_t *test = json_object_get(doc, "test");
		json_t *all = meta->params ? json_copy(meta->params) : json_object();
		json_object_update(all, params);
		json_object_set_new(test, "params", all);
	}
	rundoc_enforce_limits(doc);
	return doc;
}

int import_command(const struct collect_config *c, const struct import_opts *o)
{
	const struct parser *p = parser_find(o->format);
	const struct dir_format *df = p ? NULL : dir_format_find(o->format);
	struct run_meta meta = o->meta;
	struct dir_runs r;
	json_t *all, *run;
	size_t i;
	int rc;

	if (!p && !df) {
		err_msg("unknown format \"%s\" (see kperf-collect formats)", o->format);
		return EXIT_USAGE;
	}
	if (!meta.suite)
		meta.suite = df ? df->suite : p->program[0] ? p->program : "lkp";
	dir_runs_init(&r);
	rc = df ? read_dirs(df, o->files, &r) : read_files(p, o->files, &r);
	if (rc)
		goto out;
	all = json_array();
	json_array_foreach(r.runs, i, run) {
		json_t *doc = run_doc(c, &meta, run, &r);
		if (!doc) {
			json_decref(all);
			rc = EXIT_USAGE;
			goto out;
		}
		json_array_append_new(all, doc);
	}
	if (!o->deliver) {
		json_t *top = json_array_size(all) == 1 ? json_incref(json_array_get(all, 0))
							: json_pack("{sO}", "runs", all);
		char *s = json_dumps(top, JSON_INDENT(2) | JSON_REAL_PRECISION(17)), why[1700];
		/* what parse prints is what kperfd takes: checked by its decoder */
		if (rundoc_check(s, strlen(s), why, sizeof(why))) {
			err_msg("%s: the run breaks kperfd's ingest contract (%s)", o->files[0], why);
			rc = EXIT_REJECTED;
		} else {
			printf("%s\n", s);
		}
		free(s);
		json_decref(top);
	} else {
		if (json_array_size(all) > 1)
			progress_say("posting %zu runs", json_array_size(all));
		for (i = 0; i < json_array_size(all); i++) {
			enum outcome out = rundoc_deliver(c, json_array_get(all, i));
			if (out == OUTCOME_LOST)
				rc = EXIT_LOST;
			else if (out == OUTCOME_REJECTED && !rc)
				rc = EXIT_REJECTED;
		}
	}
	json_decref(all);
out:
	dir_runs_release(&r);
	return rc;
}
