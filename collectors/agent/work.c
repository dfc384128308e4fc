/*
 * work.c - one job of `kperf-collect agent`, claimed or resumed by the
 * loop (agent.c): its kernel running (through the hook when it differs),
 * its variant checked, its runs measured and posted naming the job, and
 * how that ended: done, failed with a reason, lost or given back.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/agent/catalogue.h"
#include "collectors/agent/jobfile.h"
#include "collectors/agent/kswitch.h"
#include "collectors/agent/lease.h"
#include "collectors/agent/apply.h"
#include "collectors/agent/work.h"
#include "collectors/base/cutil.h"
#include "collectors/deliver/post.h"
#include "collectors/deliver/rundoc.h"
#include "collectors/deliver/spool.h"
#include "collectors/host/knobs.h"
#include "collectors/kernel/kbuild.h"
#include "collectors/run/run.h"
#include "lib/kperf_limits.h"

/* Bytes of a reason kperfd keeps (its LIMIT_TEXT). */
#define REASON_MAX 1000

/* Cut s to at most max bytes on a UTF-8 character boundary. */
static void clip(char *s, size_t max)
{
	size_t n = strlen(s);

	if (n <= max)
		return;
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	s[max] = '\0';
}

/* The last line(s) of text, at most max bytes, newlines as " | ". */
static void tail_line(const char *text, size_t max, char *out, size_t outsz)
{
	char *t = rundoc_utf8_tail(text, strlen(text), max);
	size_t n = strlen(t), o = 0;

	while (n && (t[n - 1] == '\n' || t[n - 1] == ' '))
		t[--n] = '\0';
	for (size_t i = 0; i < n && o + 4 < outsz; i++) {
		if (t[i] == '\n') {
			memcpy(out + o, " | ", 3);
			o += 3;
		} else {
			out[o++] = (unsigned char)t[i] < 0x20 ? ' ' : t[i];
		}
	}
	out[o] = '\0';
	free(t);
}

/* ---- calls on the job ---- */


void work_because(char *why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, WHY_SIZE, fmt, ap);
	va_end(ap);
	clip(why, REASON_MAX);
}

void work_fail(struct agent *a, const struct job *j, const char *why)
{
	work_fail_final(a, j, why, 0);
}

void work_fail_final(struct agent *a, const struct job *j, const char *why, int final)
{
	/* valid UTF-8 whatever the hook or the benchmark printed */
	char *reason = rundoc_utf8_tail(why, strlen(why), strlen(why)), what[512];
	long st = lease_call(a->c, a->machine, j->id, "fail", reason, final, a->c->timeout_s, NULL,
			     what,
			     sizeof(what));

	if (st == 200)
		agent_say("job %ld failed: %s", j->id, reason);
	else
		err_msg("job %ld: failing it (%s): %s", j->id, reason, what);
	free(reason);
	jobfile_remove(&a->state);
}

void work_give_back(struct agent *a, const struct job *j)
{
	char what[512];
	long st = lease_call(a->c, a->machine, j->id, "release", NULL, 0, a->c->timeout_s, NULL, what,
			     sizeof(what));

	if (st == 200)
		agent_say("job %ld given back", j->id);
	else
		err_msg("job %ld: giving it back: %s", j->id, what);
	jobfile_remove(&a->state);
}

/* Deliver what waits in the spool (ours and `run`'s); what stays is counted. */
void work_flush_spool(struct agent *a)
{
	struct flush_stats st;

	if (spool_flush(a->c, &st) == 0)
		a->spooled = st.pending;
}

/* ---- working on a job ---- */


static int between(void *arg)
{
	return agent_stops || lease_lost(arg);
}

/*
 * Get the job's kernel running: after a claim switch to it through the hook
 * when it does not run already; after the hook (phase HOOK or BOOTING) it
 * must run now. END_DONE with r filled when it runs.
 */
static enum work_end kernel_for(struct agent *a, const struct job *j, enum job_phase ph, struct lease *l,
			   struct running *r, char *why)
{
	char err[512], now[300], want[300];
	char *tail = NULL;
	long wait_s = a->o->boot_wait_s > 0 ? a->o->boot_wait_s : AGENT_DEFAULT_BOOT_WAIT_S;
	int st;

	job_text(j, want, sizeof(want));
	if (kswitch_running(a->running_cmd, r, err, sizeof(err)))
		return work_because(why, "cannot tell the running kernel: %s", err), END_FAIL;
	kswitch_text(r, now, sizeof(now));
	if (kswitch_is(r, j->commit, j->release))
		return END_DONE;
	if (ph == JOB_HOOK || ph == JOB_BOOTING)
		return work_because(why, "after the kernel hook the machine runs %s, not the job's %s%s",
			       now, want,
			       ph == JOB_HOOK ? " (the hook was interrupted before it ended)" : ""),
		       END_FAIL;
	if (!a->hook)
		return work_because(why,
			       "the machine runs %s, the job wants %s, and its agent has no "
			       "--kernel-hook to switch kernels",
			       now, want),
		       END_FAIL;
	if (agent_stops)
		return END_RELEASE; /* no kernel switch begins after a SIGTERM */
	if (jobfile_save(&a->state, j, JOB_HOOK))
		return END_FATAL;
	agent_say("job %ld: the machine runs %s: kernel hook for %s", j->id, now, want);
	st = kswitch_hook(a->hook, j->commit, j->release, AGENT_HOOK_TAIL_MAX, &tail);
	if (agent_stops) {
		agent_say("job %ld: stopped during the kernel hook (exit status %d): the job stays in %s "
		    "for the next start",
		    j->id, st, a->state_path);
		free(tail);
		return END_KEPT;
	}
	if (lease_lost(l)) {
		free(tail);
		return END_LOST;
	}
	if (st) {
		char line[600];
		tail_line(tail, 400, line, sizeof(line));
		if (st < 0)
			work_because(why, "kernel hook %s cannot start: %s", a->hook[0], strerror(errno));
		else
			work_because(why, "kernel hook %s exited with status %d: %s", a->hook[0], st, line);
		free(tail);
		return END_FAIL;
	}
	free(tail);
	if (jobfile_save(&a->state, j, JOB_BOOTING))
		return END_FATAL;
	agent_say("job %ld: kernel hook done: waiting up to %ld s for %s", j->id, wait_s, want);
	for (double end = agent_mono() + (double)wait_s;;) {
		if (agent_stops) {
			agent_say("job %ld: stopped while waiting for the new kernel: the job stays in %s "
			    "for the next start",
			    j->id, a->state_path);
			return END_KEPT;
		}
		if (lease_lost(l))
			return END_LOST;
		if (!kswitch_running(a->running_cmd, r, err, sizeof(err)) &&
		    kswitch_is(r, j->commit, j->release))
			return END_DONE;
		if (agent_mono() >= end)
			break;
		agent_nap(1);
	}
	kswitch_text(r, now, sizeof(now));
	return work_because(why, "the kernel hook exited 0, but %ld s later the machine still runs %s, "
			    "not the job's %s",
		       wait_s, now, want),
	       END_FAIL;
}

/* The runs still wanted, each run as `run` makes it, posted naming the job. */
static enum work_end run_all(struct agent *a, const struct job *j, const struct cat_test *t,
			const struct running *r, const struct run_vm *vm, struct lease *l,
			char *why)
{
	long k;

	for (k = 0; k < j->runs; k++) {
		struct run_opts ro;
		enum outcome out;
		json_t *doc;
		int st;

		if (agent_stops || lease_lost(l))
			break;
		memset(&ro, 0, sizeof(ro));
		ro.meta.suite = t->suite;
		ro.meta.params = t->params;
		ro.meta.variant = t->variant;
		ro.meta.commit = j->commit[0] ? j->commit : NULL;
		ro.meta.release = r->release_given ? r->release : NULL;
		ro.meta.job_id = j->id;
		ro.parser = t->format;
		ro.iterations = t->iterations;
		ro.profile = t->profile;
		ro.lock_contention = t->lock_contention;
		ro.quiet = 1;
		ro.argv = t->argv;
		ro.vm = vm;
		ro.between = between;
		ro.between_arg = l;
		agent_say("job %ld: run %ld of %ld: test %s, %ld iteration%s", j->id, k + 1, j->runs,
		    t->name, t->iterations, t->iterations == 1 ? "" : "s");
		doc = run_measure(a->c, &ro, &st);
		if (st && (agent_stops || lease_lost(l))) {
			/* stopped between iterations, or the command died of the same signal */
			json_decref(doc);
			break;
		}
		if (st == EXIT_UNAVAILABLE && !doc)
			return work_because(why, "test %s: perf cannot record here for its profile or "
					    "lock_contention (see the agent's log)",
				       t->name),
			       END_FAIL;
		if (st) {
			char line[600];
			const char *out_tail = json_string_value(json_object_get(doc, "output_tail"));
			tail_line(out_tail ? out_tail : "", 400, line, sizeof(line));
			work_because(why, "test %s: %s %s (exit status %d): %s", t->name, t->argv[0],
				st == 127 ? "cannot be run" : "failed", st, line);
			json_decref(doc);
			return END_FAIL;
		}
		rundoc_enforce_limits(doc);
		out = rundoc_deliver(a->c, doc);
		json_decref(doc);
		if (out == OUTCOME_SPOOLED)
			a->spooled++;
		if (out == OUTCOME_REJECTED)
			return work_because(why, "kperfd refused a run of test %s (kept in %s/%s/)",
				       t->name, a->c->spool, SPOOL_REJECTED_DIR),
			       END_FAIL;
		if (out == OUTCOME_LOST)
			return END_FATAL;
	}
	if (lease_lost(l)) {
		agent_say("job %ld: %s: stopped after %ld of %ld runs", j->id, l->why, k, j->runs);
		return END_LOST;
	}
	return k < j->runs ? END_RELEASE : END_DONE;
}

/* After the last run: kperfd should call the job done. */
static void check_done(struct agent *a, const struct job *j)
{
	struct post_result r;
	char path[64];
	json_t *ans = NULL;
	const char *state, *holder;
	long st, runs = 0, done = 0;

	if (a->spooled)
		work_flush_spool(a);
	snprintf(path, sizeof(path), "/api/v1/jobs/%ld", j->id);
	st = post_request(a->c, "GET", path, NULL, 0, a->c->timeout_s, NULL, NULL, &r);
	if (st == 200)
		ans = json_loads(r.body, 0, NULL);
	post_result_release(&r);
	state = json_string_value(json_object_get(ans, "state"));
	holder = json_string_value(json_object_get(ans, "leased_to"));
	job_int(json_object_get(ans, "runs"), 0, 1000, &runs);
	job_int(json_object_get(ans, "runs_done"), 0, 1000, &done);
	if (state && !strcmp(state, "done")) {
		agent_say("job %ld done: %ld of %ld runs", j->id, done, runs);
	} else if (state && !strcmp(state, "running") && holder && !strcmp(holder, a->machine) &&
		   !a->spooled) {
		char why[WHY_SIZE];
		work_because(why,
			"all runs were posted but kperfd counts %ld of %ld: they do not match the job "
			"(machine, commit, test or variant)",
			done, runs);
		work_fail(a, j, why);
	} else {
		agent_say("job %ld: runs posted%s; kperfd says the job is %s", j->id,
		    a->spooled ? " (some wait in the spool)" : "", state ? state : "unknown");
	}
	json_decref(ans);
	jobfile_remove(&a->state);
}

/*
 * Whether the runs will carry the job's variant: kperfd counts a run toward
 * a job only when its variant (the knobs detected as `run` does, plus the
 * test's own) is exactly the job's. 1, or 0 with why said.
 */
/* The job's knobs must be the machine's (detected, and set by the test's
 * command): a job names the knobs it cares about, the others may be anything,
 * as kperfd counts a run toward a job. */
static int variant_fits(const struct job *j, const struct cat_test *t, char *why)
{
	json_t *v = knobs_variant(), *want;
	const char *key;
	int fits = 1;

	json_object_update(v, t->variant);
	json_object_foreach(j->variant, key, want)
		fits &= json_equal(json_object_get(v, key), want);
	if (!fits) {
		char *mine = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
		char *theirs = json_dumps(j->variant, JSON_COMPACT | JSON_SORT_KEYS);
		work_because(why, "the machine's variant is %s and the job's %s: its runs would not count",
			mine, theirs);
		free(mine);
		free(theirs);
	}
	json_decref(v);
	return fits;
}

/* Work on a claimed or resumed job until it ends; END_DONE, END_RELEASE, ... as done. */
/*
 * With --tree: the job's commit checked out there, or its series applied
 * on its base; a series job then names the commit made, in the state file
 * too, so that a restart after the kernel hook knows which to expect.
 */
static enum work_end tree_for(struct agent *a, const struct job *j, char *why, int *final)
{
	struct apply_opts o = {a->o->tree, a->o->inboxes, (size_t)a->o->ninboxes, a->state_dir};
	char head[41], text[WHY_SIZE];
	struct job *w = (struct job *)j;
	double t0 = (double)now_us() / 1e6;

	if (apply_job(a->c, &o, j, head, text, sizeof(text), final)) {
		work_because(why, "%s", text);
		return END_FAIL;
	}
	if (j->series.present) {
		agent_say("job %ld: %ld patches of <%s> applied on %.12s in %.1f s: %s", j->id,
			  j->series.patches, j->series.message_id, j->series.base,
			  (double)now_us() / 1e6 - t0, head);
		snprintf(w->commit, sizeof(w->commit), "%s", head);
		json_object_set_new(w->json, "commit", json_string(head));
		if (jobfile_save(&a->state, j, JOB_CLAIMED))
			return END_FATAL;
	}
	return END_DONE;
}

/*
 * A series whose head does not build: the first of its patches that does
 * not, built one after another from patch 1 (each build is incremental), its
 * " at patch K/N (SHA12)" into at and its failure into kb and text; the tree
 * is left at that patch. 0, or -1 with why in text when a build could not be
 * tried.
 */
static int first_broken_patch(struct agent *a, const struct job *j, struct kbuild_result *kb,
			      char *at, size_t atsz, char *text, size_t textsz)
{
	struct apply_opts ao = {a->o->tree, a->o->inboxes, (size_t)a->o->ninboxes, a->state_dir};
	struct kbuild_opts ko = {a->o->tree, a->o->kernel_build, a->o->kernel_config,
				 a->o->vm,   a->o->build_jobs,	 0,
				 1};
	char(*shas)[41] = calloc(LIMIT_SERIES_PATCHES, sizeof(*shas));
	int n = shas ? apply_series_commits(&ao, j->series.base, shas, LIMIT_SERIES_PATCHES) : -1;
	int k = n; /* the head's failure, unless an earlier patch fails */

	for (int i = 0; i + 1 < n; i++) {
		struct kbuild_result r;
		char t[WHY_SIZE];
		int rc;
		if (apply_checkout(&ao, shas[i], text, textsz))
			goto fail;
		agent_say("job %ld: the series does not build: building patch %d/%d (%.12s)", j->id,
			  i + 1, n, shas[i]);
		kbuild_result_init(&r);
		rc = kbuild_image(&ko, &r, t, sizeof(t));
		agent_say("job %ld: patch %d/%d %s after %.0f s", j->id, i + 1, n,
			  rc ? "does not build" : "builds", r.seconds);
		if (rc < 0) {
			snprintf(text, textsz, "the kernel could not be built: %.*s",
				 (int)(textsz > 40 ? textsz - 40 : 0), t);
			kbuild_result_release(&r);
			goto fail;
		}
		if (rc > 0) {
			kbuild_result_release(kb);
			*kb = r;
			snprintf(text, textsz, "%s", t);
			k = i + 1;
			break;
		}
		kbuild_result_release(&r);
	}
	if (n > 0)
		snprintf(at, atsz, " at patch %d/%d (%.12s)", k, n, shas[k - 1]);
	free(shas);
	return 0;
fail:
	free(shas);
	return -1;
}

/*
 * With --kernel-build: the tree's commit built with the lab's config. A
 * commit that does not build fails its job for good, with the compiler's
 * error lines: no machine of the same config could do better.
 */
static enum work_end build_for(struct agent *a, const struct job *j, struct kbuild_result *kb,
			       char *why, int *final)
{
	struct kbuild_opts ko = {a->o->tree,	    a->o->kernel_build, a->o->kernel_config,
				 a->o->vm,	    a->o->build_jobs,   0,
				 1};
	char text[WHY_SIZE];
	int rc;

	agent_say("job %ld: building the kernel of %s in %s", j->id,
		  j->commit[0] ? j->commit : "the tree's HEAD", a->o->kernel_build);
	rc = kbuild_image(&ko, kb, text, sizeof(text));
	if (rc == 0) {
		agent_say("job %ld: built %s in %.0f s%s (config %s)", j->id, kb->release, kb->seconds,
			  kb->ccache ? " with ccache" : "", kb->config_sha);
		return END_DONE;
	}
	agent_say("job %ld: %s does not build after %.0f s", j->id,
		  j->commit[0] ? j->commit : "the tree's HEAD", kb->seconds);
	if (rc > 0) {
		char at[96] = "";
		*final = 1;
		if (j->series.present && first_broken_patch(a, j, kb, at, sizeof(at), text,
							    sizeof(text)) < 0) {
			*final = 0; /* not the series: the build could not be tried */
			work_because(why, "%s", text);
			agent_say("job %ld: %s", j->id, why);
			return END_FAIL;
		}
		/* "does not build at patch K/N (SHA): make bzImage exited ..." */
		work_because(why, "does not build%s%s%s; compiler %s; config %s%s\n%s", at,
			     strncmp(text, "does not build", 14) ? ": " : "",
			     text + (strncmp(text, "does not build", 14) ? 0 : 14), kb->compiler,
			     kb->config_sha, a->o->kernel_config ? "" : " (tinyconfig + kperf.config)",
			     buf_str(&kb->errors));
	} else {
		work_because(why, "the kernel could not be built: %s", text);
	}
	agent_say("job %ld: %s", j->id, why);
	return END_FAIL;
}

enum work_end work_job(struct agent *a, const struct job *j, enum job_phase ph)
{
	const struct cat_test *t = catalogue_find(&a->cat, j->suite, j->params);
	char why[WHY_SIZE] = "";
	struct running r;
	struct lease l;
	enum work_end e;
	struct kbuild_result kb;
	struct run_vm rv = {0};
	char config[4200];
	int final = 0;

	if (!t) {
		char *p = json_dumps(j->params, JSON_COMPACT | JSON_SORT_KEYS);
		work_because(why, "suite %s with params %s is not in this machine's catalogue", j->suite,
			p);
		free(p);
		work_fail(a, j, why);
		return END_FAIL;
	}
	if (ph == JOB_CLAIMED && jobfile_save(&a->state, j, JOB_CLAIMED)) {
		work_give_back(a, j);
		return END_FATAL;
	}
	if (lease_start(&l, a->c, a->machine, j->id, j->lease_s)) {
		err_msg("job %ld: no heartbeat thread: %s", j->id, strerror(errno));
		work_give_back(a, j);
		return END_FATAL;
	}
	kbuild_result_init(&kb);
	e = ph == JOB_CLAIMED && a->o->tree ? tree_for(a, j, why, &final) : END_DONE;
	/* a job resumed after a kexec runs on the kernel built before it */
	if (e == END_DONE && a->o->kernel_build && (a->o->vm || ph == JOB_CLAIMED))
		e = build_for(a, j, &kb, why, &final);
	if (e == END_DONE && a->o->vm) {
		memset(&r, 0, sizeof(r));
		snprintf(r.sha, sizeof(r.sha), "%s", j->commit);
		snprintf(r.release, sizeof(r.release), "%s", kb.release);
		r.release_given = 1;
		snprintf(config, sizeof(config), "%s/.config", a->o->kernel_build);
		rv.opts = &a->o->vmo;
		rv.image = kb.image;
		rv.config_path = config;
		rv.config_sha = kb.config_sha;
		rv.compiler = kb.compiler;
	} else if (e == END_DONE) {
		if (kb.image[0]) { /* for the hook: packaging/kernel/kperf-kexec */
			setenv("KPERF_KERNEL_IMAGE", kb.image, 1);
			setenv("KPERF_KERNEL_RELEASE", kb.release, 1);
			setenv("KPERF_KERNEL_BUILD", a->o->kernel_build, 1);
			setenv("KPERF_KERNEL_TREE", a->o->tree, 1);
		}
		e = kernel_for(a, j, ph, &l, &r, why);
	}
	if (e == END_DONE) {
		if (!a->o->vm && !variant_fits(j, t, why))
			e = END_FAIL;
		else if (jobfile_save(&a->state, j, JOB_RUNNING))
			e = END_FATAL;
		else
			e = run_all(a, j, t, &r, a->o->vm ? &rv : NULL, &l, why);
	}
	kbuild_result_release(&kb);
	lease_stop(&l); /* before fail and release: no heartbeat crosses them */
	switch (e) {
	case END_DONE:
		check_done(a, j);
		break;
	case END_FAIL:
		work_fail_final(a, j, why, final);
		break;
	case END_LOST:
		agent_say("job %ld: the lease was lost (%s); dropped", j->id, l.why);
		jobfile_remove(&a->state);
		break;
	case END_RELEASE:
	case END_FATAL:
		work_give_back(a, j);
		break;
	case END_KEPT:
		break;
	}
	return e;
}
