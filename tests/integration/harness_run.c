/*
 * harness_run.c - the documents tests POST: one builder for the run
 * document's fixed shape (run_id, machine, kernel, test, metrics), one call
 * that posts it to a kperfd of the harness, and a two-commit history.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "tests/integration/harness.h"

/* Set key to a string when it is not NULL. */
static void set_str(json_t *o, const char *key, const char *v)
{
	if (v)
		json_object_set_new(o, key, json_string(v));
}

/* Merge more's members into o and drop more (NULL: nothing). */
static void merge(json_t *o, json_t *more)
{
	if (!more)
		return;
	json_object_update(o, more);
	json_decref(more);
}

/* A member of the document: an object of its own, or nothing when empty. */
static void set_obj(json_t *doc, const char *key, json_t *o)
{
	if (json_object_size(o))
		json_object_set(doc, key, o);
	json_decref(o);
}

json_t *harness_run_doc(const struct run_doc *d)
{
	json_t *doc = json_object(), *machine = json_object(), *kernel = json_object();
	json_t *test = json_object();

	set_str(doc, "run_id", d->run_id);
	set_str(machine, "name", d->machine);
	merge(machine, d->machine_more);
	set_obj(doc, "machine", machine);
	set_str(kernel, "commit", d->commit);
	set_str(kernel, "parent", d->parent);
	set_str(kernel, "release", d->release);
	merge(kernel, d->kernel_more);
	set_obj(doc, "kernel", kernel);
	set_str(test, "suite", d->suite);
	if (d->params)
		json_object_set_new(test, "params", d->params);
	set_obj(doc, "test", test);
	merge(doc, d->more);
	if (d->metrics)
		json_object_set_new(doc, "metrics", d->metrics);
	return doc;
}

long harness_post_run(const struct kperfd *k, const char *token, const struct run_doc *d,
		      struct resp *r)
{
	json_t *doc = harness_run_doc(d);
	char *text = json_dumps(doc, JSON_COMPACT);
	struct resp own;
	long st;

	cr_assert_not_null(text, "run %s: the document does not print", d->run_id);
	if (!r)
		r = &own;
	http_post_json(k, "/api/v1/runs", token ? token : TOKEN_COLLECTOR, text, r);
	st = r->status;
	if (r == &own)
		resp_release(&own);
	free(text);
	json_decref(doc);
	return st;
}

void harness_store_run(const struct kperfd *k, const struct run_doc *d)
{
	struct resp r;

	harness_post_run(k, NULL, d, &r);
	cr_assert_eq(r.status, 201, "run %s: %ld %s", d->run_id, r.status, r.body);
	resp_release(&r);
}

void harness_seed_commits(const struct kperfd *k)
{
	struct resp r;

	http_post_json(k, "/api/v1/commits", TOKEN_COLLECTOR,
		       "[{\"sha\":\"" HARNESS_SHA_A "\",\"subject\":\"mm: a\","
		       "\"release\":\"6.1.0-a\"},"
		       "{\"sha\":\"" HARNESS_SHA_B "\",\"parent\":\"" HARNESS_SHA_A "\","
		       "\"subject\":\"mm: b\",\"release\":\"6.1.0-b\"}]",
		       &r);
	cr_assert_eq(r.status, 201, "%s", r.body);
	resp_release(&r);
}
