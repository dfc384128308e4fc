/*
 * run.c - the `run` command. Per iteration: start the perf monitors asked
 * for, snapshot counters, fork/exec the command with stdout and stderr on
 * one pipe (echoed unless --quiet, kept for the parser), wait4 for its
 * resource usage, snapshot again, stop the monitors, parse the output and
 * the monitors' reports, say a line. Then one run document holds every
 * iteration's values, the command, its status and the tail of its output.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "lib/buf.h"
#include "collectors/base/cutil.h"
#include "collectors/parse/metrics.h"
#include "collectors/parse/parse.h"
#include "collectors/host/kernel.h"
#include "collectors/host/perfmon.h"
#include "collectors/host/proc.h"
#include "collectors/base/progress.h"
#include "collectors/base/runcmd.h"
#include "collectors/run/run.h"
#include "lib/metric_role.h"

/* Output kept for parsing per iteration; past this only the tail is kept. */
#define RUN_OUTPUT_MAX (256u * 1024u * 1024u)

static double seconds(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Output echoed (unless --quiet) around the status line of a running iteration. */
struct echo {
	int quiet;
	struct progress_status *ps;
};

static void echo_output(void *arg, int err, const char *data, size_t n)
{
	struct echo *e = arg;

	(void)err;
	if (!e->quiet) {
		progress_status_clear(e->ps);
		fwrite(data, 1, n, stdout);
		fflush(stdout);
	}
	progress_status_tick(e->ps);
}

static void echo_tick(void *arg)
{
	progress_status_tick(((struct echo *)arg)->ps);
}

/*
 * Run argv once; output into out; returns the exit status, or -1 when it
 * cannot start. ps's status line is kept on the terminal while it runs.
 */
static int spawn(char **argv, int quiet, struct buf *out, struct rusage *ru,
		 struct progress_status *ps)
{
	struct echo e = {quiet, ps};
	struct runcmd c;
	int st;

	runcmd_init(&c);
	c.argv = (const char *const *)argv;
	c.out = RUNCMD_OUT_CAPTURE;
	c.err = RUNCMD_OUT_MERGE;
	c.out_buf = out;
	c.cap = RUN_OUTPUT_MAX;
	c.keep_tail = 1;
	c.exec_error_prefix = "kperf-collect: ";
	c.on_output = echo_output;
	c.on_tick = echo_tick;
	c.tick_ms = ps->on ? 250 : 0;
	c.arg = &e;
	st = runcmd_run(&c);
	progress_status_clear(ps);
	*ru = c.ru;
	return st;
}

static void time_metrics(json_t *m, double elapsed, const struct rusage *ru)
{
	metrics_add(m, "time.elapsed_time", elapsed);
	metrics_add(m, "time.user_time", seconds(&ru->ru_utime));
	metrics_add(m, "time.system_time", seconds(&ru->ru_stime));
	metrics_add(m, "time.maximum_resident_set_size", (double)ru->ru_maxrss);
	metrics_add(m, "time.minor_page_faults", (double)ru->ru_minflt);
	metrics_add(m, "time.major_page_faults", (double)ru->ru_majflt);
	metrics_add(m, "time.voluntary_context_switches", (double)ru->ru_nvcsw);
	metrics_add(m, "time.involuntary_context_switches", (double)ru->ru_nivcsw);
	metrics_add(m, "time.file_system_inputs", (double)ru->ru_inblock);
	metrics_add(m, "time.file_system_outputs", (double)ru->ru_oublock);
}

static void add_time_units(json_t *units)
{
	json_object_set_new(units, "time.elapsed_time", json_string("s"));
	json_object_set_new(units, "time.user_time", json_string("s"));
	json_object_set_new(units, "time.system_time", json_string("s"));
	json_object_set_new(units, "time.maximum_resident_set_size", json_string("KiB"));
}

static char *command_line(char **argv)
{
	struct buf b = BUF_INIT;
	char *t;

	for (char **a = argv; *a; a++) {
		if (a != argv)
			buf_putc(&b, ' ');
		if (**a && !strpbrk(*a, " \t\n'\"\\$`;&|<>*?()")) {
			buf_puts(&b, *a);
			continue;
		}
		buf_putc(&b, '\'');
		for (const char *s = *a; *s; s++) {
			if (*s == '\'')
				buf_puts(&b, "'\\''");
			else
				buf_putc(&b, *s);
		}
		buf_putc(&b, '\'');
	}
	t = rundoc_utf8_tail(buf_str(&b), b.len, 16384);
	buf_release(&b);
	return t;
}

static int finish(const struct collect_config *c, const struct run_opts *o, json_t *doc,
		  int cmd_status)
{
	enum outcome out;

	rundoc_enforce_limits(doc);
	if (o->dry_run) {
		char *s = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
		printf("%s\n", s);
		free(s);
		return cmd_status;
	}
	out = rundoc_deliver(c, doc);
	if (out == OUTCOME_LOST)
		return EXIT_LOST;
	if (cmd_status)
		return cmd_status;
	return out == OUTCOME_REJECTED ? EXIT_REJECTED : 0;
}

/*
 * The figure a progress line shows of an iteration's parsed metrics m: the
 * suite's headline KPI (metric_role.h: the lowest rank, the first in byte
 * order among equals), else the first metric the parser calls
 * higher-is-better, else the first one. NULL when m is empty.
 */
static const char *headline(json_t *m, json_t *directions, const char *suite)
{
	const char *key, *first = NULL, *higher = NULL, *best = NULL;
	int best_rank = -1;
	json_t *v;

	json_object_foreach(m, key, v) {
		const char *d = json_string_value(json_object_get(directions, key));
		int rank = metric_kpi_rank(key, suite);
		if (rank >= 0 && (best_rank < 0 || rank < best_rank ||
				  (rank == best_rank && strcmp(key, best) < 0))) {
			best = key;
			best_rank = rank;
		}
		if (!first)
			first = key;
		if (!higher && d && !strcmp(d, "higher"))
			higher = key;
	}
	return best ? best : higher ? higher : first;
}

/* "iteration 2/5: 301 s, vm-scalability.throughput 20,717,269 KB/s; perf-profile 412 rows" */
static void say_iteration(const struct run_opts *o, long i, double t, json_t *m, json_t *units,
			  json_t *directions, const char *monitors)
{
	const char *h = headline(m, directions, o->meta.suite), *unit = NULL;
	char secs[32], num[64] = "";
	json_t *v;

	if (progress_quiet() || o->quiet)
		return;
	progress_seconds(t, secs, sizeof(secs));
	if (h) {
		v = json_object_get(m, h);
		if (json_is_array(v))
			v = json_array_get(v, 0);
		progress_number(json_number_value(v), num, sizeof(num));
		unit = json_string_value(json_object_get(units, h));
	}
	progress_say("iteration %ld/%ld: %s%s%s%s%s%s%s%s%s", i, o->iterations, secs, h ? ", " : "",
		     h ? h : "", h ? " " : "", num, unit ? " " : "", unit ? unit : "",
		     *monitors ? "; " : "", monitors);
}

/*
 * Iteration i's command between two counter snapshots, pm's recorders
 * stopped after the second; its times and counter deltas into metrics, its
 * output into output, its seconds into *t. Returns its exit status, or -1
 * with a message when it cannot be run.
 */
/* One iteration in a guest: its output, its counters and its exit status;
 * a guest that failed says why in the output, status 125. */
static int measure_in_vm(const struct run_opts *o, long i, struct buf *output, json_t *metrics,
			 double *t, char *release, size_t releasesz)
{
	struct vm_iteration it;
	char why[1024];
	int st;

	vm_iteration_init(&it);
	if (vm_run(o->vm->opts, o->vm->image, o->argv, &it, why, sizeof(why))) {
		err_msg("iteration %ld: %s", i, why);
		buf_printf(output, "%s\n", why);
		vm_iteration_release(&it);
		return 125;
	}
	*t = it.seconds;
	/* said even with o->quiet: an agent's log keeps each boot's time */
	if (!progress_quiet())
		progress_say("iteration %ld: the guest reached /init %.1f s after QEMU started; the"
			     " test and the power-off took %.1f s", i, it.boot_seconds,
			     it.seconds - it.boot_seconds);
	buf_append(output, it.output.data ? it.output.data : "", it.output.len);
	snapshot_delta(&it.before, &it.after, metrics);
	if (it.release[0])
		snprintf(release, releasesz, "%s", it.release);
	st = it.status;
	vm_iteration_release(&it);
	return st;
}

/* What a guest's run says of itself: the kernel's config and the guest's
 * shape in the environment; its variant is the test's own and the VM's
 * shape, never this machine's knobs. */
static void describe_vm(json_t *doc, const struct run_opts *o, const char *release)
{
	json_t *env = json_object_get(doc, "environment"), *kernel = json_object_get(doc, "kernel");
	json_t *variant = json_object();
	struct vm_shape s;
	char shape[96], n[32];
	size_t len;
	char *text = read_file(o->vm->config_path, 1u << 22, &len);

	vm_shape_of(o->vm->opts, &s);
	vm_shape_text(&s, shape, sizeof(shape));
	if (o->meta.variant)
		json_object_update(variant, o->meta.variant);
	json_object_set_new(variant, "vm", json_string(shape));
	json_object_set_new(doc, "variant", variant);
	json_object_set_new(env, "vm.accel", json_string(s.accel));
	snprintf(n, sizeof(n), "%ld", s.cpus);
	json_object_set_new(env, "vm.cpus", json_string(n));
	snprintf(n, sizeof(n), "%ld", s.memory_mb);
	json_object_set_new(env, "vm.memory_mb", json_string(n));
	json_object_set_new(env, "vm.icount", json_string(s.icount ? "yes" : "no"));
	if (o->vm->config_sha)
		json_object_set_new(env, "kernel.config_sha", json_string(o->vm->config_sha));
	if (o->vm->compiler && *o->vm->compiler)
		json_object_set_new(env, "kernel.compiler", json_string(o->vm->compiler));
	json_object_del(kernel, "cmdline");
	if (text) {
		json_object_set_new(kernel, "config", kernel_config_parse(text, len));
		free(text);
	} else {
		json_object_del(kernel, "config");
	}
	if (release[0] && !o->meta.release)
		json_object_set_new(kernel, "release", json_string(release));
}

static int measure_once(const struct run_opts *o, long i, const char *what, struct perfmon *pm,
			struct buf *output, json_t *metrics, double *t)
{
	struct progress_status ps;
	struct snapshot before, after;
	struct rusage ru;
	char label[64], err[1024];
	int st;

	memset(&ru, 0, sizeof(ru));
	snapshot_take(&before);
	snprintf(label, sizeof(label), "iteration %ld/%ld", i, o->iterations);
	progress_status_begin(&ps, label, what);
	if (o->quiet)
		ps.on = 0;
	*t = mono();
	st = spawn(o->argv, o->quiet, output, &ru, &ps);
	*t = mono() - *t;
	snapshot_take(&after);
	if (perfmon_stop(pm, err, sizeof(err)))
		err_msg("iteration %ld: %s", i, err);
	if (st == -1) {
		err_msg("cannot run %s: %s", o->argv[0], strerror(errno));
	} else {
		time_metrics(metrics, *t, &ru);
		snapshot_delta(&before, &after, metrics);
	}
	snapshot_release(&before);
	snapshot_release(&after);
	return st;
}

/* The parser of --format, else of the suite (NULL: none). -1 with a message for an unknown
 * --format. */
static int choose_parser(const struct run_opts *o, const struct parser **p)
{
	*p = NULL;
	if (o->parser && !(*p = parser_find(o->parser))) {
		err_msg("unknown output format \"%s\" (see kperf-collect help)", o->parser);
		return -1;
	}
	if (!*p)
		*p = parser_find(o->meta.suite);
	if (!*p && !o->quiet)
		progress_say("no parser for suite \"%s\": only counters and times are kept",
			     o->meta.suite);
	return 0;
}

/* Iteration i's output parsed into doc's metrics, units and directions; returns its own
 * metrics (a reference of the caller's). */
static json_t *parse_iteration(const struct parser *p, long i, const struct buf *output,
			       json_t *doc)
{
	struct parse_ctx pc;
	char name[64];
	json_t *parsed;

	snprintf(name, sizeof(name), "output of iteration %ld", i);
	parse_ctx_init(&pc, name);
	if (parse_run(p, &pc, buf_str(output), output->len))
		err_msg("%s", pc.err);
	metrics_merge(json_object_get(doc, "metrics"), parse_metrics(&pc));
	json_object_update(json_object_get(doc, "units"), pc.units);
	json_object_update(json_object_get(doc, "directions"), pc.directions);
	parsed = json_incref(parse_metrics(&pc));
	parse_ctx_release(&pc);
	return parsed;
}

/* An iteration's output onto the run's tail, of which the newest RUNDOC_OUTPUT_TAIL_MAX
 * bytes (at least) are kept. */
static void keep_tail(struct buf *tail, const struct buf *output)
{
	buf_append(tail, output->data ? output->data : "", output->len);
	if (tail->len > 2 * RUNDOC_OUTPUT_TAIL_MAX) {
		memmove(tail->data, tail->data + tail->len - RUNDOC_OUTPUT_TAIL_MAX,
			RUNDOC_OUTPUT_TAIL_MAX);
		tail->len = RUNDOC_OUTPUT_TAIL_MAX;
	}
}

/* The run's own fields: duration, command, exit status, how it was collected, output tail. */
static void describe_run(json_t *doc, const struct run_opts *o, double duration, int status,
			 const struct buf *tail)
{
	json_t *how = json_pack("{s:I}", "iterations", (json_int_t)o->iterations);
	char *s;

	json_object_set_new(doc, "duration_s", json_real(duration));
	s = command_line(o->argv);
	json_object_set_new(doc, "command", json_string(s));
	free(s);
	json_object_set_new(doc, "exit_status", json_integer(status));
	if (o->parser)
		json_object_set_new(how, "format", json_string(o->parser));
	if (o->profile)
		json_object_set_new(how, "profile", json_true());
	if (o->lock_contention)
		json_object_set_new(how, "lock_contention", json_true());
	if (json_object_size(o->meta.variant))
		json_object_set(how, "variant", o->meta.variant);
	json_object_set_new(doc, "collector", how);
	s = rundoc_utf8_tail(buf_str(tail), tail->len, RUNDOC_OUTPUT_TAIL_MAX);
	json_object_set_new(doc, "output_tail", json_string(s));
	free(s);
}

json_t *run_measure(const struct collect_config *c, const struct run_opts *o, int *st_out)
{
	const struct parser *p = NULL;
	struct buf output = BUF_INIT, tail = BUF_INIT;
	struct perfmon_opts po = {o->profile, o->lock_contention, o->perf, o->keep_perf};
	json_t *doc, *metrics, *units, *directions;
	char monitors[256], what[320];
	struct perfmon pm;
	double t0 = mono();
	int status = 0, unavailable = 0, stopped = 0;
	char err[1024], release[128] = "";

	*st_out = EXIT_USAGE;
	if (choose_parser(o, &p))
		return NULL;
	if (o->vm && (o->profile || o->lock_contention)) {
		err_msg("profile and lock_contention record this machine, not a guest: not with a VM");
		return NULL;
	}
	if (perfmon_init(&pm, &po, err, sizeof(err))) {
		err_msg("%s", err);
		perfmon_release(&pm);
		*st_out = EXIT_UNAVAILABLE;
		return NULL;
	}
	doc = rundoc_new(c, &o->meta, err, sizeof(err));
	if (!doc) {
		err_msg("%s", err);
		perfmon_release(&pm);
		return NULL;
	}
	perfmon_describe(&pm, monitors, sizeof(monitors));
	snprintf(what, sizeof(what), "monitors: /proc counters%s%s", *monitors ? ", " : "",
		 monitors);
	metrics = json_object_get(doc, "metrics");
	units = json_object_get(doc, "units");
	directions = json_object_get(doc, "directions");
	add_time_units(units);
	for (long i = 0; i < o->iterations; i++) {
		json_t *parsed = NULL;
		char summary[128] = "";
		double t;
		int st;

		buf_reset(&output);
		/* perf's start and stop outside the counters' interval: its own page
		 * faults and writes are not the benchmark's */
		if (perfmon_start(&pm, i + 1, err, sizeof(err))) {
			err_msg("%s", err);
			unavailable = 1;
			break;
		}
		st = o->vm ? measure_in_vm(o, i + 1, &output, metrics, &t, release, sizeof(release))
			   : measure_once(o, i + 1, what, &pm, &output, metrics, &t);
		if (st == -1) {
			status = 127;
			break;
		}
		if (p)
			parsed = parse_iteration(p, i + 1, &output, doc);
		if (perfmon_collect(&pm, metrics, units, directions, summary, sizeof(summary), err,
				    sizeof(err)))
			err_msg("%s", err);
		keep_tail(&tail, &output);
		status = st;
		if (!status)
			say_iteration(o, i + 1, t, parsed, units, directions, summary);
		json_decref(parsed);
		if (status) {
			err_msg("%s exited with status %d in iteration %ld: the run is marked failed",
				o->argv[0], status, i + 1);
			break;
		}
		if (i + 1 < o->iterations && o->between && o->between(o->between_arg)) {
			stopped = 1;
			break;
		}
	}
	if (unavailable || stopped) {
		/* stopped between iterations, or a monitor asked for could not
		 * record: no run without it */
		buf_release(&output);
		buf_release(&tail);
		json_decref(doc);
		perfmon_release(&pm);
		*st_out = stopped ? RUN_STOPPED : EXIT_UNAVAILABLE;
		return NULL;
	}
	perfmon_environment(&pm, json_object_get(doc, "environment"));
	if (o->vm)
		describe_vm(doc, o, release);
	perfmon_release(&pm);
	describe_run(doc, o, mono() - t0, status, &tail);
	buf_release(&output);
	buf_release(&tail);
	if (!json_object_size(metrics)) {
		err_msg("no metrics at all: nothing to deliver");
		json_decref(doc);
		*st_out = status ? status : EXIT_LOST;
		return NULL;
	}
	*st_out = status;
	return doc;
}

int run_command(const struct collect_config *c, const struct run_opts *o)
{
	int status, rc;
	json_t *doc = run_measure(c, o, &status);

	if (!doc)
		return status;
	rc = finish(c, o, doc, status);
	json_decref(doc);
	return rc;
}
