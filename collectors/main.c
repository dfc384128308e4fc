/*
 * main.c - kperf-collect's command line: global options (server, token,
 * machine, spool, config), then one command: run, agent, flush, commits,
 * parse, import, formats, help. Exit statuses: 0 ok, the benchmark's own status
 * when it failed, 64 usage, 65 rejected/malformed input, 69 a monitor cannot
 * record here, 75 undeliverable.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/agent/agent.h"
#include "collectors/commits.h"
#include "collectors/base/config.h"
#include "collectors/base/cutil.h"
#include "collectors/import.h"
#include "collectors/parse/mmtests.h"
#include "collectors/parse/parse.h"
#include "collectors/deliver/post.h"
#include "collectors/base/progress.h"
#include "collectors/review.h"
#include "collectors/run/run.h"
#include "collectors/deliver/spool.h"

static const char usage_text[] =
	"usage: kperf-collect [OPTIONS] COMMAND ...\n"
	"\n"
	"commands:\n"
	"  run --suite S [--param k=v]... [--variant k=v]... [--iterations N]\n"
	"      [--commit SHA] [--series NAME] [--release R] [--format F]\n"
	"      [--profile] [--lock-contention] [--perf PATH] [--keep-perf DIR]\n"
	"      [--dry-run] [--quiet] -- CMD [ARGS...]\n"
	"        run CMD N times between counter snapshots, parse its output, post one run;\n"
	"        a line per iteration on stderr (--quiet: errors only, no echo of CMD)\n"
	"        --profile: perf record -a -g beside each iteration (perf-profile.*)\n"
	"        --lock-contention: perf lock record -a beside each (perf-lock.*)\n"
	"  agent --catalogue FILE [--kernel-hook CMD] [--running-cmd CMD] [--state DIR]\n"
	"      [--idle-exit SECONDS] [--boot-wait SECONDS] [--tree DIR [--inbox URL]...] [--check]\n"
	"      [--kernel-build DIR [--kernel-config FILE] [--build-jobs N]\n"
	"       [--vm [--vm-accel kvm|tcg] [--vm-cpus N] [--vm-memory MB] [--vm-icount]\n"
	"        [--vm-timeout SECONDS] [--qemu PATH] [--busybox PATH]]]\n"
	"        claim kperfd's jobs for the tests of FILE, switch kernels with CMD SHA RELEASE,\n"
	"        run each test as `run` does and post its runs naming the job\n"
	"  flush                 resend spooled runs (safe from cron: takes a lock)\n"
	"  commits --git DIR [--series NAME] [--branch B] [--dry-run] [--quiet] RANGE\n"
	"        post the commits of RANGE (first-parent) with parents, files, Message-IDs\n"
	"  parse --format F [--suite S] [--param k=v]... FILE...   print run JSON\n"
	"  import --format F [--suite S] [--param k=v]... [--quiet] FILE...  post (or spool) it\n"
	"        (FILE is a directory for mmtests-* formats: one run per iteration)\n"
	"  formats               list the output formats\n"
	"  compare BASE TARGET [--suite S] [--machine M] [--metric GLOB]\n"
	"      [--format table|lkp|mmtests|json]\n"
	"        kperfd's compare: each test's KPIs first, then event counters and the rest;\n"
	"        machine monitors only when --metric names them; verdicts coloured on a tty\n"
	"  trend --machine M --suite S --metric NAME [--params k=v,..] [--variant k=v,..]\n"
	"        a metric over commits: n, mean, spread, decisions and change points\n"
	"  series NAME           each version's patches with their KPI changes\n"
	"\n"
	"options (over $KPERF_SERVER, $KPERF_TOKEN, $KPERF_MACHINE, $KPERF_SPOOL and\n"
	"the KEY=value file $KPERF_COLLECT_CONFIG, default /etc/kperf/collect.conf):\n"
	"  --server URL  --token TOKEN  --machine NAME  --spool DIR (default /var/spool/kperf)\n"
	"  --config FILE  --timeout SECONDS\n"
	"\n"
	"exit status: 0 ok; CMD's status when it failed (the run is still sent);\n"
	"64 usage; 65 input malformed (a catalogue line, a state file) or run or claim\n"
	"rejected by the server; 69 --profile or --lock-contention cannot record here\n"
	"(no perf, or perf refused; nothing sent); 75 run neither posted nor spooled.\n";

struct cli {
	struct collect_config cfg;
	const char *config_file;
	const char *overrides[6][2]; /* KEY, value from flags */
	int noverrides;
	const char *command;
	char **rest; /* arguments after the command */
	int nrest;
};

/* "--name value" or "--name=value": returns the value and advances *i, else NULL. */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);

	if (!strncmp(argv[*i], name, n) && argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (strcmp(argv[*i], name))
		return NULL;
	if (*i + 1 >= argc) {
		err_msg("%s needs a value", name);
		exit(EXIT_USAGE);
	}
	return argv[++*i];
}

static int check_key(const char *k, size_t n)
{
	if (n < 1 || n > 64)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)k[i]) && !strchr("._-", k[i]))
			return -1;
	return 0;
}

/* "k=v" into obj; exits with a usage error when malformed. */
static void add_kv(json_t *obj, const char *what, const char *kv)
{
	const char *eq = strchr(kv, '=');
	char key[65];
	json_t *v;

	if (!eq || check_key(kv, (size_t)(eq - kv)) || strlen(eq + 1) > 256 ||
	    !(v = json_string(eq + 1))) {
		err_msg("%s \"%s\": expected key=value, key 1-64 of A-Za-z0-9._-, value up to 256 "
			"bytes",
			what, kv);
		exit(EXIT_USAGE);
	}
	snprintf(key, sizeof(key), "%.*s", (int)(eq - kv), kv);
	json_object_set_new(obj, key, v);
}

static long parse_count(const char *what, const char *s, long max)
{
	int64_t v;
	if (cparse_int64(s, 1, max, &v)) {
		err_msg("%s \"%s\": expected a whole number from 1 to %ld", what, s, max);
		exit(EXIT_USAGE);
	}
	return (long)v;
}

static int cmd_run(struct cli *cl)
{
	struct run_opts o;
	json_t *params = json_object(), *variant = json_object();
	int i, rc;

	memset(&o, 0, sizeof(o));
	o.iterations = 1;
	for (i = 0; i < cl->nrest; i++) {
		char **a = cl->rest;
		const char *v;
		if (!strcmp(a[i], "--")) {
			i++;
			break;
		}
		if ((v = opt_value(cl->nrest, a, &i, "--suite")))
			o.meta.suite = v;
		else if ((v = opt_value(cl->nrest, a, &i, "--param")))
			add_kv(params, "--param", v);
		else if ((v = opt_value(cl->nrest, a, &i, "--variant")))
			add_kv(variant, "--variant", v);
		else if ((v = opt_value(cl->nrest, a, &i, "--iterations")))
			o.iterations = parse_count("--iterations", v, 100000);
		else if ((v = opt_value(cl->nrest, a, &i, "--commit")))
			o.meta.commit = v;
		else if ((v = opt_value(cl->nrest, a, &i, "--series")))
			o.meta.series = v;
		else if ((v = opt_value(cl->nrest, a, &i, "--release")))
			o.meta.release = v;
		else if ((v = opt_value(cl->nrest, a, &i, "--format")))
			o.parser = v;
		else if ((v = opt_value(cl->nrest, a, &i, "--perf")))
			o.perf = v;
		else if ((v = opt_value(cl->nrest, a, &i, "--keep-perf")))
			o.keep_perf = v;
		else if (!strcmp(a[i], "--profile"))
			o.profile = 1;
		else if (!strcmp(a[i], "--lock-contention"))
			o.lock_contention = 1;
		else if (!strcmp(a[i], "--dry-run"))
			o.dry_run = 1;
		else if (!strcmp(a[i], "--quiet"))
			o.quiet = 1;
		else {
			err_msg("run: unknown option \"%s\" (the command goes after --)", a[i]);
			json_decref(params);
			json_decref(variant);
			return EXIT_USAGE;
		}
	}
	if (!o.meta.suite || i >= cl->nrest) {
		err_msg("run needs --suite S and a command after --");
		json_decref(params);
		json_decref(variant);
		return EXIT_USAGE;
	}
	if ((o.perf && !*o.perf) || (o.keep_perf && !*o.keep_perf) ||
	    ((o.perf || o.keep_perf) && !o.profile && !o.lock_contention)) {
		err_msg("run: --perf and --keep-perf need a value and --profile or "
			"--lock-contention");
		json_decref(params);
		json_decref(variant);
		return EXIT_USAGE;
	}
	progress_set_quiet(o.quiet);
	o.argv = cl->rest + i;
	o.meta.params = params;
	o.meta.variant = variant;
	rc = run_command(&cl->cfg, &o);
	json_decref(params);
	json_decref(variant);
	return rc;
}

static int cmd_agent(struct cli *cl)
{
	struct agent_opts o;

	memset(&o, 0, sizeof(o));
	for (int i = 0; i < cl->nrest; i++) {
		char **a = cl->rest;
		const char *v;
		if ((v = opt_value(cl->nrest, a, &i, "--catalogue")))
			o.catalogue = v;
		else if ((v = opt_value(cl->nrest, a, &i, "--kernel-hook")))
			o.kernel_hook = v;
		else if ((v = opt_value(cl->nrest, a, &i, "--running-cmd")))
			o.running_cmd = v;
		else if ((v = opt_value(cl->nrest, a, &i, "--state")))
			o.state_dir = v;
		else if ((v = opt_value(cl->nrest, a, &i, "--idle-exit")))
			o.idle_exit_s = parse_count("--idle-exit", v, 31536000);
		else if ((v = opt_value(cl->nrest, a, &i, "--boot-wait")))
			o.boot_wait_s = parse_count("--boot-wait", v, 86400);
		else if ((v = opt_value(cl->nrest, a, &i, "--tree")))
			o.tree = v;
		else if ((v = opt_value(cl->nrest, a, &i, "--inbox"))) {
			if (o.ninboxes == AGENT_INBOXES_MAX) {
				err_msg("agent: at most %d --inbox", AGENT_INBOXES_MAX);
				return EXIT_USAGE;
			}
			if (strncmp(v, "http://", 7) && strncmp(v, "https://", 8)) {
				err_msg("agent: --inbox \"%s\": expected an http:// or https:// inbox URL",
					v);
				return EXIT_USAGE;
			}
			o.inboxes[o.ninboxes++] = v;
		} else if (!strcmp(a[i], "--check"))
			o.check = 1;
		else if ((v = opt_value(cl->nrest, a, &i, "--kernel-build")))
			o.kernel_build = v;
		else if ((v = opt_value(cl->nrest, a, &i, "--kernel-config")))
			o.kernel_config = v;
		else if ((v = opt_value(cl->nrest, a, &i, "--build-jobs")))
			o.build_jobs = parse_count("--build-jobs", v, 4096);
		else if (!strcmp(a[i], "--vm"))
			o.vm = 1;
		else if ((v = opt_value(cl->nrest, a, &i, "--vm-accel"))) {
			if (strcmp(v, "kvm") && strcmp(v, "tcg")) {
				err_msg("agent: --vm-accel \"%s\": expected kvm or tcg", v);
				return EXIT_USAGE;
			}
			o.vmo.accel = v;
		} else if ((v = opt_value(cl->nrest, a, &i, "--vm-cpus")))
			o.vmo.cpus = parse_count("--vm-cpus", v, VM_CPUS_MAX);
		else if ((v = opt_value(cl->nrest, a, &i, "--vm-memory")))
			o.vmo.memory_mb = parse_count("--vm-memory", v, VM_MEMORY_MB_MAX);
		else if (!strcmp(a[i], "--vm-icount"))
			o.vmo.icount = 1;
		else if ((v = opt_value(cl->nrest, a, &i, "--vm-timeout")))
			o.vmo.timeout_s = parse_count("--vm-timeout", v, 86400);
		else if ((v = opt_value(cl->nrest, a, &i, "--qemu")))
			o.vmo.qemu = v;
		else if ((v = opt_value(cl->nrest, a, &i, "--busybox")))
			o.vmo.busybox = v;
		else {
			err_msg("agent: unexpected \"%s\"", a[i]);
			return EXIT_USAGE;
		}
	}
	if (o.kernel_build && !o.tree) {
		err_msg("agent: --kernel-build needs --tree DIR, the git tree kernels are built from");
		return EXIT_USAGE;
	}
	if (o.vm && !o.kernel_build) {
		err_msg("agent: --vm needs --kernel-build DIR, where the kernel it boots is built");
		return EXIT_USAGE;
	}
	if (o.vm) {
		static char work[4200];
		snprintf(work, sizeof(work), "%s/vm",
			 o.state_dir ? o.state_dir : AGENT_DEFAULT_STATE_DIR);
		o.vmo.workdir = work;
	}
	if (!o.catalogue) {
		err_msg("agent needs --catalogue FILE");
		return EXIT_USAGE;
	}
	if (o.ninboxes && !o.tree) {
		err_msg("agent: --inbox needs --tree DIR, the git tree series are applied in");
		return EXIT_USAGE;
	}
	if ((o.kernel_hook && !*o.kernel_hook) || (o.running_cmd && !*o.running_cmd) ||
	    (o.state_dir && !*o.state_dir) || (o.tree && !*o.tree)) {
		err_msg("agent: --kernel-hook, --running-cmd, --state and --tree need a value");
		return EXIT_USAGE;
	}
	return agent_command(&cl->cfg, &o);
}

static int cmd_flush(struct cli *cl)
{
	struct flush_stats st;
	int rc;

	if (cl->nrest) {
		err_msg("flush takes no arguments");
		return EXIT_USAGE;
	}
	rc = spool_flush(&cl->cfg, &st);
	if (rc == 1) {
		printf("kperf-collect: another flush is running on %s; nothing done\n", cl->cfg.spool);
		return 0;
	}
	if (rc)
		return EXIT_LOST;
	printf("kperf-collect: flush: %d delivered, %d rejected, %d pending\n", st.delivered,
	       st.rejected, st.pending);
	return st.pending ? EXIT_LOST : 0;
}

static int cmd_commits(struct cli *cl)
{
	struct commits_opts o;

	memset(&o, 0, sizeof(o));
	for (int i = 0; i < cl->nrest; i++) {
		char **a = cl->rest;
		const char *v;
		if ((v = opt_value(cl->nrest, a, &i, "--git")))
			o.git_dir = v;
		else if ((v = opt_value(cl->nrest, a, &i, "--series")))
			o.series = v;
		else if ((v = opt_value(cl->nrest, a, &i, "--branch")))
			o.branch = v;
		else if (!strcmp(a[i], "--dry-run"))
			o.dry_run = 1;
		else if (!strcmp(a[i], "--quiet"))
			progress_set_quiet(1);
		else if (a[i][0] == '-' || o.range) {
			err_msg("commits: unexpected \"%s\"", a[i]);
			return EXIT_USAGE;
		} else
			o.range = a[i];
	}
	if (!o.git_dir || !o.range) {
		err_msg("commits needs --git DIR and a RANGE");
		return EXIT_USAGE;
	}
	return commits_command(&cl->cfg, &o);
}

/* compare BASE TARGET, trend, series NAME: their options and positionals. */
static int cmd_review(struct cli *cl, const char *what)
{
	struct review_opts o;
	const char *pos[2] = {NULL, NULL};
	int npos = 0, want = !strcmp(what, "compare") ? 2 : !strcmp(what, "series") ? 1 : 0;

	memset(&o, 0, sizeof(o));
	for (int i = 0; i < cl->nrest; i++) {
		char **a = cl->rest;
		const char *v;
		if ((v = opt_value(cl->nrest, a, &i, "--suite")))
			o.suite = v;
		else if ((v = opt_value(cl->nrest, a, &i, "--metric")))
			o.metric = v;
		else if ((v = opt_value(cl->nrest, a, &i, "--machine")))
			o.machine = v;
		else if ((v = opt_value(cl->nrest, a, &i, "--params")))
			o.params = v;
		else if ((v = opt_value(cl->nrest, a, &i, "--variant")))
			o.variant = v;
		else if ((v = opt_value(cl->nrest, a, &i, "--format")))
			o.format = v;
		else if (a[i][0] == '-' || npos >= want) {
			err_msg("%s: unexpected \"%s\"", what, a[i]);
			return EXIT_USAGE;
		} else
			pos[npos++] = a[i];
	}
	if (npos < want) {
		err_msg("%s needs %s", what, want == 2 ? "a BASE and a TARGET" : "the series' NAME");
		return EXIT_USAGE;
	}
	if (!cl->cfg.server) {
		err_msg("%s needs --server URL (or KPERF_SERVER)", what);
		return EXIT_USAGE;
	}
	o.base = pos[0];
	o.target = pos[1];
	if (!strcmp(what, "compare"))
		return review_compare(&cl->cfg, &o);
	if (!strcmp(what, "series"))
		return review_series(&cl->cfg, &o);
	if (!o.machine || !o.suite || !o.metric) {
		err_msg("trend needs --machine, --suite and --metric (and --params, --variant"
			" when the machine ran several)");
		return EXIT_USAGE;
	}
	return review_trend(&cl->cfg, &o);
}

static int cmd_import(struct cli *cl, int deliver)
{
	struct import_opts o;
	json_t *params = json_object();
	char **files = xcalloc((size_t)cl->nrest + 1, sizeof(char *));
	int nfiles = 0, rc;

	memset(&o, 0, sizeof(o));
	for (int i = 0; i < cl->nrest; i++) {
		char **a = cl->rest;
		const char *v;
		if ((v = opt_value(cl->nrest, a, &i, "--format")))
			o.format = v;
		else if ((v = opt_value(cl->nrest, a, &i, "--suite")))
			o.meta.suite = v;
		else if ((v = opt_value(cl->nrest, a, &i, "--param")))
			add_kv(params, "--param", v);
		else if ((v = opt_value(cl->nrest, a, &i, "--commit")))
			o.meta.commit = v;
		else if ((v = opt_value(cl->nrest, a, &i, "--series")))
			o.meta.series = v;
		else if ((v = opt_value(cl->nrest, a, &i, "--release")))
			o.meta.release = v;
		else if (!strcmp(a[i], "--quiet"))
			progress_set_quiet(1);
		else if (a[i][0] == '-' && a[i][1]) {
			err_msg("unknown option \"%s\"", a[i]);
			free(files);
			json_decref(params);
			return EXIT_USAGE;
		} else
			files[nfiles++] = a[i];
	}
	if (!o.format || !nfiles) {
		err_msg("%s needs --format F and at least one FILE", deliver ? "import" : "parse");
		free(files);
		json_decref(params);
		return EXIT_USAGE;
	}
	o.meta.params = params;
	o.files = files;
	o.deliver = deliver;
	rc = import_command(&cl->cfg, &o);
	free(files);
	json_decref(params);
	return rc;
}

static int cmd_formats(void)
{
	for (const struct parser *p = parsers; p->format; p++)
		printf("%-16s %s\n", p->format, p->what);
	for (const struct dir_format *f = dir_formats; f->format; f++)
		printf("%-16s %s\n", f->format, f->what);
	return 0;
}

static void parse_cli(struct cli *cl, int argc, char **argv)
{
	static const struct {
		const char *flag, *key;
	} globals[] = {{"--server", "KPERF_SERVER"}, {"--token", "KPERF_TOKEN"},
		       {"--machine", "KPERF_MACHINE"}, {"--spool", "KPERF_SPOOL"},
		       {"--timeout", "KPERF_TIMEOUT"}};
	int i;

	memset(cl, 0, sizeof(*cl));
	for (i = 1; i < argc && !cl->command; i++) {
		const char *v = NULL;
		size_t g;
		if ((v = opt_value(argc, argv, &i, "--config"))) {
			cl->config_file = v;
			continue;
		}
		for (g = 0; g < sizeof(globals) / sizeof(globals[0]); g++)
			if ((v = opt_value(argc, argv, &i, globals[g].flag)))
				break;
		if (v) {
			if (cl->noverrides < 6) {
				cl->overrides[cl->noverrides][0] = globals[g].key;
				cl->overrides[cl->noverrides++][1] = v;
			}
			continue;
		}
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			cl->command = "help";
			continue;
		}
		if (argv[i][0] == '-') {
			err_msg("unknown option \"%s\"", argv[i]);
			fputs(usage_text, stderr);
			exit(EXIT_USAGE);
		}
		cl->command = argv[i];
	}
	cl->rest = argv + i;
	cl->nrest = argc - i;
}

int main(int argc, char **argv)
{
	struct cli cl;
	int rc;

	parse_cli(&cl, argc, argv);
	if (!cl.command || !strcmp(cl.command, "help")) {
		fputs(usage_text, cl.command ? stdout : stderr);
		return cl.command ? 0 : EXIT_USAGE;
	}
	if (config_load(&cl.cfg, cl.config_file))
		return EXIT_USAGE;
	for (int i = 0; i < cl.noverrides; i++) {
		if (config_set(&cl.cfg, cl.overrides[i][0], cl.overrides[i][1])) {
			err_msg("bad value \"%s\" for %s", cl.overrides[i][1], cl.overrides[i][0]);
			config_release(&cl.cfg);
			return EXIT_USAGE;
		}
	}
	post_global_init();
	if (!strcmp(cl.command, "run"))
		rc = cmd_run(&cl);
	else if (!strcmp(cl.command, "agent"))
		rc = cmd_agent(&cl);
	else if (!strcmp(cl.command, "flush"))
		rc = cmd_flush(&cl);
	else if (!strcmp(cl.command, "commits"))
		rc = cmd_commits(&cl);
	else if (!strcmp(cl.command, "parse"))
		rc = cmd_import(&cl, 0);
	else if (!strcmp(cl.command, "import"))
		rc = cmd_import(&cl, 1);
	else if (!strcmp(cl.command, "formats"))
		rc = cmd_formats();
	else if (!strcmp(cl.command, "compare") || !strcmp(cl.command, "trend") ||
		 !strcmp(cl.command, "series"))
		rc = cmd_review(&cl, cl.command);
	else {
		err_msg("unknown command \"%s\"", cl.command);
		fputs(usage_text, stderr);
		rc = EXIT_USAGE;
	}
	post_cleanup();
	config_release(&cl.cfg);
	return rc;
}
