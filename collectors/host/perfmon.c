/*
 * perfmon.c - perf record / perf lock record beside each iteration of `run`.
 * A recording is a perf process started with its events off (-D -1) and a
 * control FIFO; "enable" and its "ack" start it, "disable" and SIGINT end
 * it, then `perf report` / `perf lock contention` read its data and the
 * perf-profile / perf-lock parsers name the metrics. The data and logs live
 * in a scratch directory ($TMPDIR, else /var/tmp: /tmp may be memory, and
 * perf.data of a long run is big) unless --keep-perf names one.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/buf.h"
#include "collectors/base/cutil.h"
#include "collectors/parse/metrics.h"
#include "collectors/parse/parse.h"
#include "collectors/host/perfmon.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void rec_reset(struct perfmon_rec *r, const char *kind)
{
	memset(r, 0, sizeof(*r));
	runcmd_init(&r->cmd);
	r->kind = kind;
	r->ctl = r->ack = -1;
}

/* What a recording is called in messages. */
static const char *rec_name(const struct perfmon_rec *r)
{
	return strcmp(r->kind, "lock") ? "perf record" : "perf lock record";
}

int perfmon_active(const struct perfmon *pm)
{
	return pm->o.profile || pm->o.lock;
}

int perfmon_init(struct perfmon *pm, const struct perfmon_opts *o, char *err, size_t errsz)
{
	const char *tmp = getenv("TMPDIR");

	memset(pm, 0, sizeof(*pm));
	pm->o = *o;
	rec_reset(&pm->prof, "profile");
	rec_reset(&pm->lock, "lock");
	if (!perfmon_active(pm))
		return 0;
	if (perf_find(o->perf, &pm->tool, err, errsz))
		return -1;
	pm->event = perf_profile_event();
	if (o->keep_dir && mkdir(o->keep_dir, 0755) && errno != EEXIST) {
		snprintf(err, errsz, "--keep-perf %s: %s", o->keep_dir, strerror(errno));
		return -1;
	}
	snprintf(pm->scratch, sizeof(pm->scratch), "%s/kperf-perf.XXXXXX",
		 tmp && *tmp ? tmp : "/var/tmp");
	if (!mkdtemp(pm->scratch)) {
		snprintf(err, errsz, "cannot make a scratch directory %s: %s", pm->scratch,
			 strerror(errno));
		pm->scratch[0] = '\0';
		return -1;
	}
	return 0;
}

/* The last line perf wrote to its log, for messages. */
static void log_tail(const struct perfmon_rec *r, char *line, size_t linesz)
{
	size_t len;
	char *text = read_file(r->log, 1u << 20, &len);

	line[0] = '\0';
	if (text)
		perf_message(text, len, line, linesz);
	free(text);
}

/*
 * Write cmd to the control FIFO and wait for perf's "ack". Returns 0, or
 * -1 with err when perf exited or did not answer in time.
 */
static int command(struct perfmon_rec *r, const char *cmd, char *err, size_t errsz)
{
	double deadline = now_s() + PERFMON_ACK_TIMEOUT_S;
	char buf[64];
	size_t got = 0;

	if (write(r->ctl, cmd, strlen(cmd)) != (ssize_t)strlen(cmd)) {
		snprintf(err, errsz, "%s: control FIFO: %s", rec_name(r), strerror(errno));
		return -1;
	}
	while (now_s() < deadline) {
		struct pollfd p = {.fd = r->ack, .events = POLLIN};
		int n = poll(&p, 1, 100);

		if (n > 0) {
			ssize_t k = read(r->ack, buf + got, sizeof(buf) - 1 - got);
			if (k > 0) {
				got += (size_t)k;
				buf[got] = '\0';
				if (strstr(buf, "ack\n"))
					return 0;
				if (got == sizeof(buf) - 1)
					got = 0;
			}
		} else if (n < 0 && errno != EINTR) {
			break;
		}
		if (runcmd_reap(&r->cmd, 1) == 1) {
			char last[300];
			log_tail(r, last, sizeof(last));
			snprintf(err, errsz, "%s exited with status %d before it %s: %s",
				 rec_name(r), exit_status_of(r->cmd.wait_status),
				 strcmp(cmd, "enable\n") ? "stopped" : "recorded",
				 *last ? last : "(no message)");
			return -1;
		}
	}
	snprintf(err, errsz, "%s did not answer \"%.*s\" within %d s", rec_name(r),
		 (int)strcspn(cmd, "\n"), cmd, PERFMON_ACK_TIMEOUT_S);
	return -1;
}

/* End r's perf process: SIGKILL when hard, else SIGINT and wait. Returns its status or -1. */
static int reap(struct perfmon_rec *r, int hard)
{
	double deadline = now_s() + PERF_COMMAND_TIMEOUT_S;

	if (r->cmd.pid <= 0)
		return -1;
	runcmd_kill(&r->cmd, hard ? SIGKILL : SIGINT);
	for (;;) {
		int w = runcmd_reap(&r->cmd, !hard);
		if (w == 1)
			break;
		if (w < 0) {
			r->cmd.pid = 0;
			return -1;
		}
		if (!hard && now_s() > deadline) {
			runcmd_kill(&r->cmd, SIGKILL);
			hard = 1;
			continue;
		}
		if (!hard)
			usleep(20000);
	}
	return exit_status_of(r->cmd.wait_status);
}

static void rec_close(struct perfmon_rec *r)
{
	if (r->ctl >= 0)
		close(r->ctl);
	if (r->ack >= 0)
		close(r->ack);
	r->ctl = r->ack = -1;
}

/* DIR/<kind>-<iteration>.<ext> in --keep-perf when kept, else in the scratch directory; 0 or -1
 * (too long). */
static int path_of(const struct perfmon *pm, const struct perfmon_rec *r, const char *ext, int kept,
		   char *out, size_t outsz)
{
	int n = snprintf(out, outsz, "%s/%s-%ld.%s",
			 kept && pm->o.keep_dir ? pm->o.keep_dir : pm->scratch, r->kind,
			 pm->iteration, ext);
	return n < 0 || (size_t)n >= outsz ? -1 : 0;
}

/* In the recording's child, before exec. */
static void rec_child_setup(void)
{
	/* perf -a opens an event per CPU and thread of memory map: raise the fd limit */
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* a system-wide recording must not outlive kperf-collect */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
}

static int rec_start(struct perfmon *pm, struct perfmon_rec *r, char *err, size_t errsz)
{
	char ctl[PERF_PATH_MAX], ack[PERF_PATH_MAX], control[2 * PERF_PATH_MAX + 16], freq[16];
	const char *argv[24];
	int n = 0, logfd;

	rec_reset(r, r->kind);
	if (path_of(pm, r, "data", 1, r->data, sizeof(r->data)) ||
	    path_of(pm, r, "log", 0, r->log, sizeof(r->log)) ||
	    path_of(pm, r, "ctl", 0, ctl, sizeof(ctl)) ||
	    path_of(pm, r, "ack", 0, ack, sizeof(ack))) {
		snprintf(err, errsz, "%s: the path of its files is too long", rec_name(r));
		return -1;
	}
	unlink(ctl);
	unlink(ack);
	unlink(r->data);
	if (mkfifo(ctl, 0600) || mkfifo(ack, 0600)) {
		snprintf(err, errsz, "%s: FIFO in %s: %s", rec_name(r), pm->scratch,
			 strerror(errno));
		return -1;
	}
	/* O_RDWR: neither open waits for perf, and perf's reads never see EOF */
	r->ctl = open(ctl, O_RDWR | O_CLOEXEC);
	r->ack = open(ack, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	logfd = open(r->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (r->ctl < 0 || r->ack < 0 || logfd < 0) {
		snprintf(err, errsz, "%s: %s: %s", rec_name(r), pm->scratch, strerror(errno));
		if (logfd >= 0)
			close(logfd);
		rec_close(r);
		return -1;
	}
	snprintf(control, sizeof(control), "fifo:%s,%s", ctl, ack);
	snprintf(freq, sizeof(freq), "%d", PERFMON_PROFILE_HZ);
	argv[n++] = "perf";
	if (r == &pm->prof) {
		const char *a[] = {"record", "-a", "-g", "-e", pm->event, "-F", freq};
		for (size_t i = 0; i < sizeof(a) / sizeof(a[0]); i++)
			argv[n++] = a[i];
	} else {
		argv[n++] = "lock";
		argv[n++] = "record";
		argv[n++] = "-a";
	}
	argv[n++] = "-D";
	argv[n++] = "-1";
	argv[n++] = "--control";
	argv[n++] = control;
	argv[n++] = "-o";
	argv[n++] = r->data;
	argv[n] = NULL;
	r->cmd.argv = argv;
	r->cmd.path = pm->tool.path;
	r->cmd.in = RUNCMD_IN_NULL;
	r->cmd.out = RUNCMD_OUT_FD;
	r->cmd.out_fd = logfd;
	r->cmd.err = RUNCMD_OUT_MERGE;
	r->cmd.child_setup = rec_child_setup;
	if (runcmd_start(&r->cmd)) {
		snprintf(err, errsz, "%s: fork: %s", rec_name(r), strerror(errno));
		close(logfd);
		rec_close(r);
		return -1;
	}
	close(logfd);
	r->cmd.argv = NULL; /* rec_start's own array */
	if (command(r, "enable\n", err, errsz)) {
		reap(r, 1);
		rec_close(r);
		return -1;
	}
	return 0;
}

int perfmon_start(struct perfmon *pm, long iteration, char *err, size_t errsz)
{
	pm->iteration = iteration;
	if (pm->o.profile && rec_start(pm, &pm->prof, err, errsz))
		return -1;
	if (pm->o.lock && rec_start(pm, &pm->lock, err, errsz)) {
		reap(&pm->prof, 1);
		rec_close(&pm->prof);
		return -1;
	}
	return 0;
}

static int rec_stop(struct perfmon_rec *r, char *err, size_t errsz)
{
	struct stat sb;
	int st, rc = 0;

	if (r->cmd.pid <= 0)
		return 0;
	if (command(r, "disable\n", err, errsz)) {
		reap(r, 1);
		rc = -1;
	} else {
		st = reap(r, 0);
		/* perf record ends on SIGINT with 0 or 130 once its data is written */
		if ((st != 0 && st != 128 + SIGINT) || stat(r->data, &sb) || !sb.st_size) {
			char last[300];
			log_tail(r, last, sizeof(last));
			snprintf(err, errsz, "%s ended with status %d: %s", rec_name(r), st,
				 *last ? last : "(no message)");
			rc = -1;
		} else {
			r->have_data = 1;
		}
	}
	rec_close(r);
	return rc;
}

int perfmon_stop(struct perfmon *pm, char *err, size_t errsz)
{
	char e2[512] = "";
	int rc = rec_stop(&pm->prof, err, errsz);

	if (rec_stop(&pm->lock, rc ? e2 : err, rc ? sizeof(e2) : errsz))
		rc = -1;
	return rc;
}

/* perf-profile with LKP's event slot, for parse_run */
static int parse_profile_rows(struct parse_ctx *pc, const char *text, size_t len)
{
	return parse_perf_profile_as(pc, text, len, PERFMON_PROFILE_NAME_EVENT);
}

/*
 * Report r's data with argv, parse it with p into the run's metrics; the
 * report is kept in --keep-perf. Returns the number of rows, or -1 with err.
 */
static int report(struct perfmon *pm, struct perfmon_rec *r, char *const argv[], int merge,
		  const struct parser *p, json_t *metrics, json_t *units, json_t *directions,
		  char *err, size_t errsz)
{
	struct buf out = BUF_INIT, errout = BUF_INIT;
	struct parse_ctx pc;
	char name[64];
	int st, rows = -1;

	st = perf_capture(&pm->tool, argv, merge, &out, &errout);
	if (pm->o.keep_dir) {
		char txt[PERF_PATH_MAX];
		if (path_of(pm, r, "txt", 1, txt, sizeof(txt)) ||
		    write_file_atomic(txt, buf_str(&out), out.len))
			warn_msg("cannot keep %s: %s", txt, strerror(errno));
	}
	if (st) {
		char last[300];
		perf_message(merge ? buf_str(&out) : buf_str(&errout),
			     merge ? out.len : errout.len, last, sizeof(last));
		snprintf(err, errsz, "the report of %s, iteration %ld: exit status %d: %s",
			 rec_name(r), pm->iteration, st, *last ? last : "(no message)");
		goto out;
	}
	if (r == &pm->prof && !pm->recorded[0])
		perf_profile_event_of(buf_str(&out), out.len, pm->recorded, sizeof(pm->recorded));
	snprintf(name, sizeof(name), "%s of iteration %ld", r->kind, pm->iteration);
	parse_ctx_init(&pc, name);
	if (parse_run(p, &pc, buf_str(&out), out.len)) {
		snprintf(err, errsz, "%s", pc.err);
	} else {
		rows = (int)json_object_size(parse_metrics(&pc));
		metrics_merge(metrics, parse_metrics(&pc));
		json_object_update(units, pc.units);
		json_object_update(directions, pc.directions);
	}
	parse_ctx_release(&pc);
out:
	buf_release(&out);
	buf_release(&errout);
	return rows;
}

int perfmon_collect(struct perfmon *pm, json_t *metrics, json_t *units, json_t *directions,
		    char *summary, size_t summarysz, char *err, size_t errsz)
{
	static const struct parser profile = {"perf-profile", "perf-profile", parse_profile_rows,
					      "perf report of run --profile"};
	int rc = 0, n;

	summary[0] = '\0';
	if (pm->prof.have_data) {
		/* LKP's report: children and self per DSO and symbol, folded callee chains */
		char *const argv[] = {
		    "perf",     "report", "-i", pm->prof.data,        "--children",
		    "--header", "-U",     "-g", "folded,0.05,callee", "--sort=dso,symbol",
		    "--stdio",  NULL};
		n = report(pm, &pm->prof, argv, 0, &profile, metrics, units, directions, err,
			   errsz);
		if (n < 0)
			rc = -1;
		else
			snprintf(summary, summarysz, "perf-profile %d rows", n);
		pm->prof.have_data = 0;
	}
	if (pm->lock.have_data) {
		/* perf prints the table on stderr */
		char *const argv[] = {"perf", "lock", "contention", "-i", pm->lock.data, NULL};
		size_t used = strlen(summary);
		char e2[512];
		n = report(pm, &pm->lock, argv, 1, parser_find("perf-lock"), metrics, units,
			   directions, rc ? e2 : err, rc ? sizeof(e2) : errsz);
		if (n < 0)
			rc = -1;
		else
			snprintf(summary + used, summarysz - used, "%sperf-lock %d rows",
				 used ? ", " : "", n);
		pm->lock.have_data = 0;
	}
	if (!pm->o.keep_dir) {
		unlink(pm->prof.data);
		unlink(pm->lock.data);
	}
	return rc;
}

void perfmon_environment(const struct perfmon *pm, json_t *env)
{
	char cmd[128];

	if (!perfmon_active(pm) || !pm->tool.path[0])
		return;
	json_object_set_new(env, "perf.version", json_string(pm->tool.version));
	if (pm->o.profile) {
		json_object_set_new(env, "perf-profile.event",
				    json_string(pm->recorded[0] ? pm->recorded : pm->event));
		snprintf(cmd, sizeof(cmd), "perf record -a -g -e %s -F %d", pm->event,
			 PERFMON_PROFILE_HZ);
		json_object_set_new(env, "perf-profile.command", json_string(cmd));
	}
	if (pm->o.lock)
		json_object_set_new(env, "perf-lock.command",
				    json_string("perf lock record -a; perf lock contention"));
}

void perfmon_describe(const struct perfmon *pm, char *out, size_t outsz)
{
	out[0] = '\0';
	if (pm->o.profile)
		snprintf(out, outsz, "perf record -a -g (%s)", pm->event ? pm->event : "?");
	if (pm->o.lock) {
		size_t used = strlen(out);
		snprintf(out + used, outsz - used, "%sperf lock record -a", used ? ", " : "");
	}
}

/* The scratch directory is this process's own (mkdtemp): everything in it goes. */
static void remove_scratch(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d) {
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(dir);
}

void perfmon_release(struct perfmon *pm)
{
	reap(&pm->prof, 1);
	reap(&pm->lock, 1);
	rec_close(&pm->prof);
	rec_close(&pm->lock);
	if (pm->scratch[0])
		remove_scratch(pm->scratch);
	pm->scratch[0] = '\0';
}
