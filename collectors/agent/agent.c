/*
 * agent.c - `kperf-collect agent`, the lab loop. One job at a time:
 *
 *   idle --claim 200--> claimed --kernel differs--> hook --exit 0--> booting
 *     ^                    |                                            |
 *     |                    +--kernel is the job's----> running <--------+
 *     +----- done / failed / lease lost / given back <---+
 *
 * The job and its phase are in the state file from the claim on, so an
 * agent started again (after a reboot, a crash, a SIGKILL) resumes it:
 * after "hook" or "booting" the running kernel must now be the job's or the
 * job fails with that reason; otherwise it goes on as from a fresh claim.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collectors/agent/agent.h"
#include "collectors/agent/catalogue.h"
#include "lib/buf.h"
#include "collectors/base/cutil.h"
#include "collectors/agent/jobfile.h"
#include "collectors/host/kernel.h"
#include "collectors/host/knobs.h"
#include "collectors/agent/kswitch.h"
#include "collectors/agent/lease.h"
#include "collectors/agent/work.h"
#include "collectors/host/machine.h"
#include "collectors/deliver/post.h"
#include "collectors/run/run.h"
#include "collectors/deliver/spool.h"

/* Bytes of a reason kperfd keeps (its LIMIT_TEXT). */
#define REASON_MAX 1000


volatile sig_atomic_t agent_stops;

static void on_stop(int sig)
{
	(void)sig;
	if (agent_stops < 10)
		agent_stops++;
}

/* A second SIGTERM/SIGINT ends a long poll at once. */
static int hard_stop(void *arg)
{
	(void)arg;
	return agent_stops > 1;
}

double agent_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sleep up to s seconds; returns early on a stop. */
void agent_nap(double s)
{
	for (double end = agent_mono() + s; !agent_stops && agent_mono() < end;) {
		struct timespec ts = {0, 100 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

void agent_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("kperf-collect: ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
	va_end(ap);
}

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
	/* valid UTF-8 whatever the hook or the benchmark printed */
	char *reason = rundoc_utf8_tail(why, strlen(why), strlen(why)), what[512];
	long st = lease_call(a->c, a->machine, j->id, "fail", reason, a->c->timeout_s, NULL, what,
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
	long st = lease_call(a->c, a->machine, j->id, "release", NULL, a->c->timeout_s, NULL, what,
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
			const struct running *r, struct lease *l, char *why)
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
enum work_end work_job(struct agent *a, const struct job *j, enum job_phase ph)
{
	const struct cat_test *t = catalogue_find(&a->cat, j->suite, j->params);
	char why[WHY_SIZE] = "";
	struct running r;
	struct lease l;
	enum work_end e;

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
	e = kernel_for(a, j, ph, &l, &r, why);
	if (e == END_DONE) {
		if (!variant_fits(j, t, why))
			e = END_FAIL;
		else if (jobfile_save(&a->state, j, JOB_RUNNING))
			e = END_FATAL;
		else
			e = run_all(a, j, t, &r, &l, why);
	}
	lease_stop(&l); /* before fail and release: no heartbeat crosses them */
	switch (e) {
	case END_DONE:
		check_done(a, j);
		break;
	case END_FAIL:
		work_fail(a, j, why);
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

/* ---- the loop ---- */

/* What the loop does after a job: -1 claim again, else the exit status. */
static int after(enum work_end e)
{
	if (e == END_RELEASE || e == END_KEPT)
		return 0;
	return e == END_FATAL ? EXIT_LOST : -1;
}

/* A job left in the state file: -1 to go on claiming, else the exit status. */
static int resume(struct agent *a)
{
	struct job j;
	enum job_phase ph;
	json_t *ans = NULL;
	char what[512];
	long runs, done, st;
	double backoff = 1;
	int rc;

	switch (jobfile_load(&a->state, &j, &ph)) {
	case JOBFILE_NONE:
		return -1;
	case JOBFILE_BROKEN:
		return EXIT_REJECTED;
	case JOBFILE_FOREIGN:
		return EXIT_USAGE;
	case JOBFILE_FOUND:
		break;
	}
	agent_say("job %ld: resuming it (it was %s when the agent stopped)", j.id, job_phase_name(ph));
	work_flush_spool(a);
	while ((st = lease_call(a->c, a->machine, j.id, "heartbeat", NULL, a->c->timeout_s, &ans,
				what, sizeof(what))) != 200) {
		if (lease_status_lost(st)) {
			agent_say("job %ld: %s: the lease was lost meanwhile; dropped", j.id, what);
			jobfile_remove(&a->state);
			job_release(&j);
			return -1;
		}
		err_msg("job %ld: heartbeat: %s; trying again in %.0f s", j.id, what, backoff);
		agent_nap(backoff);
		backoff = backoff * 2 > AGENT_BACKOFF_MAX_S ? AGENT_BACKOFF_MAX_S : backoff * 2;
		if (agent_stops) {
			job_release(&j);
			return 0;
		}
	}
	/* the job's own count: runs spooled before the stop have been delivered by now */
	if (!job_int(json_object_get(ans, "runs"), 0, 100, &runs) &&
	    !job_int(json_object_get(ans, "runs_done"), 0, 100, &done))
		j.runs = runs > done ? runs - done : 0;
	json_decref(ans);
	rc = after(work_job(a, &j, ph));
	job_release(&j);
	return rc;
}

static json_t *claim_body(struct agent *a, const struct running *r, json_t *offer, long wait_s)
{
	json_t *running = json_object();

	json_object_set_new(running, "commit", r->sha[0] ? json_string(r->sha) : json_null());
	json_object_set_new(running, "release",
			    r->release[0] ? json_string(r->release) : json_null());
	/* without a kernel hook it can run only jobs on the kernel it runs */
	return json_pack("{s:s,s:o,s:O,s:I,s:b}", "machine", a->machine, "running", running, "tests",
			 offer, "wait_s", (json_int_t)wait_s, "switch", a->hook != NULL);
}

/* A 200 to a claim: work on its job. -1 to go on, else the exit status. */
static int claimed(struct agent *a, const char *body)
{
	json_t *ans = json_loads(body, 0, NULL), *o = json_object_get(ans, "job");
	char why[WHY_SIZE], err[300];
	struct job j;
	int rc = -1;

	if (job_parse(o, &j, err, sizeof(err))) {
		long id;
		err_msg("claim: kperfd's answer is not a job: %s", err);
		if (!job_int(json_object_get(o, "id"), 1, 9007199254740991L, &id)) {
			struct job bad = {.id = id};
			work_because(why, "the agent cannot read the job kperfd sent: %s", err);
			work_fail(a, &bad, why);
		}
		json_decref(ans);
		return -1;
	}
	json_decref(ans);
	agent_say("job %ld: claimed: %ld run%s of %s on commit %s (release %s)", j.id, j.runs,
	    j.runs == 1 ? "" : "s", j.suite, j.commit[0] ? j.commit : "unknown",
	    j.release[0] ? j.release : "unknown");
	if (agent_stops)
		work_give_back(a, &j);
	else
		rc = after(work_job(a, &j, JOB_CLAIMED));
	job_release(&j);
	return rc;
}

static int loop(struct agent *a)
{
	json_t *offer = catalogue_offer(&a->cat);
	double backoff = 1;
	int rc = -1;

	a->idle_since = agent_mono();
	while (rc < 0 && !agent_stops) {
		double left = a->o->idle_exit_s > 0
				      ? (double)a->o->idle_exit_s - (agent_mono() - a->idle_since)
				      : (double)AGENT_CLAIM_WAIT_MAX_S;
		long wait_s = left >= AGENT_CLAIM_WAIT_MAX_S ? AGENT_CLAIM_WAIT_MAX_S
			      : left > 0		     ? (long)ceil(left)
							     : 0;
		struct post_result r;
		struct running run;
		char err[512];
		json_t *body;
		char *text;
		long st;

		if (a->o->idle_exit_s > 0 && left <= 0) {
			agent_say("no job for %ld s: exiting (--idle-exit)", a->o->idle_exit_s);
			rc = 0;
			break;
		}
		if (a->spooled)
			work_flush_spool(a);
		if (kswitch_running(a->running_cmd, &run, err, sizeof(err))) {
			err_msg("cannot tell the running kernel: %s; trying again in %.0f s", err,
				backoff);
			st = 0;
		} else {
			body = claim_body(a, &run, offer, wait_s);
			text = json_dumps(body, JSON_COMPACT);
			st = post_request(a->c, "POST", "/api/v1/jobs/claim", text, strlen(text),
					  wait_s + a->c->timeout_s, hard_stop, NULL, &r);
			free(text);
			json_decref(body);
			if (st == 200) {
				rc = claimed(a, r.body);
				a->idle_since = agent_mono();
			} else if (st == 400 || st == 401 || st == 403 || st == 404) {
				err_msg("claim refused (HTTP %ld): %s", st, r.body);
				rc = EXIT_REJECTED;
			} else if (st != 204 && !agent_stops) {
				if (st)
					err_msg("claim: HTTP %ld: %.300s; trying again in %.0f s", st,
						r.body, backoff);
				else
					err_msg("claim: %s; trying again in %.0f s", r.error, backoff);
			}
			post_result_release(&r);
		}
		if (st == 200 || st == 204) {
			backoff = 1;
		} else if (rc < 0) {
			agent_nap(left > 0 && left < backoff ? left : backoff);
			backoff = backoff * 2 > AGENT_BACKOFF_MAX_S ? AGENT_BACKOFF_MAX_S : backoff * 2;
		}
	}
	json_decref(offer);
	return rc < 0 ? 0 : rc;
}

static void print_catalogue(const struct catalogue *cat)
{
	for (size_t i = 0; i < cat->n; i++) {
		const struct cat_test *t = &cat->tests[i];
		char *p = json_dumps(t->params, JSON_COMPACT | JSON_SORT_KEYS);
		char *v = json_dumps(t->variant, JSON_COMPACT | JSON_SORT_KEYS);
		printf("[%s] line %zu: suite %s, params %s, variant %s, format %s, %ld iteration%s,"
		       "%s%s command:",
		       t->name, t->line, t->suite, p, v, t->format ? t->format : "(the suite's)",
		       t->iterations, t->iterations == 1 ? "" : "s", t->profile ? " profile," : "",
		       t->lock_contention ? " lock_contention," : "");
		for (char **w = t->argv; *w; w++)
			printf(" [%s]", *w);
		putchar('\n');
		free(p);
		free(v);
	}
}

int agent_command(const struct collect_config *c, const struct agent_opts *o)
{
	struct agent a;
	struct machine_facts m;
	struct sigaction sa;
	const char *dir = o->state_dir ? o->state_dir : AGENT_DEFAULT_STATE_DIR;
	char err[1200];
	int rc = EXIT_USAGE;

	memset(&a, 0, sizeof(a));
	a.c = c;
	a.o = o;
	if (catalogue_load(&a.cat, o->catalogue, err, sizeof(err))) {
		err_msg("catalogue %s", err);
		catalogue_release(&a.cat);
		return EXIT_REJECTED;
	}
	if (o->check) {
		print_catalogue(&a.cat);
		catalogue_release(&a.cat);
		return 0;
	}
	if (!c->server || !c->token) {
		err_msg("agent needs --server and --token (or KPERF_SERVER and KPERF_TOKEN)");
		goto out;
	}
	if (o->kernel_hook &&
	    !(a.hook = catalogue_words(o->kernel_hook, CATALOGUE_WORDS_MAX, err, sizeof(err)))) {
		err_msg("--kernel-hook: %s", err);
		goto out;
	}
	if (o->running_cmd && !(a.running_cmd = catalogue_words(o->running_cmd,
								 CATALOGUE_WORDS_MAX, err,
								 sizeof(err)))) {
		err_msg("--running-cmd: %s", err);
		goto out;
	}
	if (machine_facts_read(&m, c->machine)) {
		err_msg("machine name \"%s\" has no usable character", c->machine);
		goto out;
	}
	snprintf(a.machine, sizeof(a.machine), "%s", m.name);
	if (mkdir(dir, 0755) && errno != EEXIST) {
		err_msg("state directory %s: %s", dir, strerror(errno));
		rc = EXIT_LOST;
		goto out;
	}
	snprintf(a.state_path, sizeof(a.state_path), "%s/%s", dir, AGENT_STATE_FILE);
	a.state.path = a.state_path;
	a.state.server = c->server;
	a.state.machine = a.machine;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop; /* no SA_RESTART: waits end early */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	agent_say("agent %s: %zu test%s from %s; kperfd at %s", a.machine, a.cat.n,
	    a.cat.n == 1 ? "" : "s", a.cat.path, c->server);
	if (access(c->spool, F_OK) == 0)
		work_flush_spool(&a);
	rc = resume(&a);
	if (rc < 0)
		rc = loop(&a);
	if (agent_stops)
		agent_say("stopped by a signal");
out:
	catalogue_words_free(a.hook);
	catalogue_words_free(a.running_cmd);
	catalogue_release(&a.cat);
	return rc;
}
