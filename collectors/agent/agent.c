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
#include "collectors/kernel/kbuild.h"
#include "collectors/kernel/vm.h"
#include "collectors/agent/kswitch.h"
#include "collectors/agent/lease.h"
#include "collectors/agent/work.h"
#include "collectors/host/machine.h"
#include "collectors/deliver/post.h"
#include "collectors/run/run.h"
#include "collectors/deliver/spool.h"

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
	while ((st = lease_call(a->c, a->machine, j.id, "heartbeat", NULL, 0, a->c->timeout_s, &ans,
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
	/* without a kernel hook (or a VM to boot) it can run only jobs on the kernel it runs */
	/* with a git tree it also takes jobs whose kernel is a posted series */
	return json_pack("{s:s,s:o,s:O,s:I,s:b,s:b}", "machine", a->machine, "running", running,
			 "tests", offer, "wait_s", (json_int_t)wait_s, "switch", a->hook != NULL || a->o->vm,
			 "tree", a->o->tree != NULL);
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
		int problems = 0;
		print_catalogue(&a.cat);
		catalogue_release(&a.cat);
		if (o->kernel_build) {
			struct kbuild_opts ko = {o->tree, o->kernel_build, o->kernel_config, o->vm,
						 o->build_jobs, 0, 1};
			problems += kbuild_check(&ko, stdout);
		}
		if (o->vm)
			problems += vm_check(&o->vmo, stdout);
		if (problems)
			err_msg("--check: %d problem%s in the kernel setup", problems,
				problems == 1 ? "" : "s");
		return problems ? EXIT_REJECTED : 0;
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
	snprintf(a.state_dir, sizeof(a.state_dir), "%s", dir);
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
