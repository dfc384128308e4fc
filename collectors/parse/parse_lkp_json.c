/*
 * parse_lkp_json.c - LKP's result files: stats.json (metric -> a value or
 * the values of one run's iterations) becomes one run; matrix.json (metric
 * -> one value per run, the runs of a commit side by side) becomes one run
 * per column. Names are LKP's already ("vm-scalability.throughput").
 */
#include <stdio.h>
#include <string.h>

#include "collectors/base/cutil.h"
#include "collectors/parse/metrics.h"
#include "collectors/parse/parse.h"

static json_t *load(struct parse_ctx *pc, const char *text, size_t len)
{
	json_error_t je;
	json_t *root = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);

	if (!root) {
		pc->line = (size_t)(je.line > 0 ? je.line : 0);
		parse_fail(pc, "column %d: %s", je.column, je.text);
		return NULL;
	}
	if (!json_is_object(root)) {
		pc->line = 1;
		parse_fail(pc, "expected an object of metric name to values");
		json_decref(root);
		return NULL;
	}
	return root;
}

int parse_lkp_stats_json(struct parse_ctx *pc, const char *text, size_t len)
{
	json_t *root = load(pc, text, len), *v, *x;
	const char *key;
	size_t i;

	if (!root)
		return -1;
	json_object_foreach(root, key, v) {
		if (json_is_number(v))
			metrics_add(parse_metrics(pc), key, json_number_value(v));
		else if (json_is_array(v))
			json_array_foreach(v, i, x)
				if (json_is_number(x))
					metrics_add(parse_metrics(pc), key, json_number_value(x));
	}
	json_decref(root);
	return 0;
}

int parse_lkp_matrix_json(struct parse_ctx *pc, const char *text, size_t len)
{
	json_t *root = load(pc, text, len), *v, *x;
	size_t cols = 0, i, first;
	const char *key;

	if (!root)
		return -1;
	json_object_foreach(root, key, v)
		if (json_is_array(v) && json_array_size(v) > cols)
			cols = json_array_size(v);
	/* The first column goes into the current run, the others into new ones. */
	first = json_array_size(pc->runs) - 1;
	for (i = 1; i < cols; i++)
		parse_new_run(pc);
	json_object_foreach(root, key, v) {
		if (!json_is_array(v))
			continue;
		json_array_foreach(v, i, x)
			if (json_is_number(x))
				metrics_add(json_array_get(pc->runs, first + i), key,
					    json_number_value(x));
	}
	/* Columns without any number (stats_source only) are no runs. */
	for (i = json_array_size(pc->runs); i-- > first;)
		if (!json_object_size(json_array_get(pc->runs, i)) && json_array_size(pc->runs) > 1)
			json_array_remove(pc->runs, i);
	json_decref(root);
	return 0;
}
