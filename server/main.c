/*
 * main.c - kperfd's command line: serve (the daemon), migrate, and token
 * management. Start-up is the only place that may die().
 */
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/db/archive.h"
#include "server/config.h"
#include "server/decide/confirm.h"
#include "server/db/db.h"
#include "server/http/http.h"
#include "server/mail/mailer.h"
#include "server/robot/robot.h"
#include "server/db/migrate.h"
#include "server/decide/roles.h"
#include "server/reads/readcache.h"
#include "server/decide/regress.h"
#include "server/http/static.h"
#include "server/stats/stats.h"
#include "server/db/token.h"
#include "lib/util.h"

#define KPERF_VERSION "0.1.0"

static void usage(void)
{
	fprintf(stderr,
		"usage: kperfd [serve] [flags]          serve the API and dashboard\n"
		"       kperfd migrate [flags]          apply database migrations and exit\n"
		"       kperfd token create NAME [--role collector|admin] [--machines GLOB,...]\n"
		"       kperfd token list\n"
		"       kperfd token revoke NAME\n"
		"       kperfd archive --before YYYY-MM [--dump DIR]   summarise and detach older months\n"
		"       kperfd archive --list\n"
		"       kperfd restore-archive YYYY-MM [--file DUMP]  bring an archived month back\n"
		"       kperfd --version\n"
		"flags and their environment variables:\n");
	config_usage();
}

/* Connect and bring the schema up to date; dies with the reason on failure. */
static PGconn *open_migrated(void)
{
	char err[1024];
	PGconn *c = NULL;
	int applied;

	/* The server may still be starting (make run, CI): wait up to ~10 s. */
	for (int i = 0; i < 20 && !c; i++) {
		c = db_connect(cfg.database_url, err, sizeof(err));
		if (!c)
			usleep(500000);
	}
	if (!c)
		die("database \"%s\" unreachable: %s", cfg.database_url, err);
	applied = migrate_run(c, err, sizeof(err));
	if (applied < 0) {
		PQfinish(c);
		die("%s", err);
	}
	if (applied)
		log_info("applied %d migration(s); schema is at version %d", applied,
			 migrate_latest());
	return c;
}

static void bootstrap_tokens(PGconn *c)
{
	char err[512];

	if (cfg.bootstrap_token &&
	    token_ensure(c, "bootstrap", "collector", cfg.bootstrap_token, err, sizeof(err)))
		die("KPERF_BOOTSTRAP_TOKEN: %s", err);
	if (cfg.bootstrap_admin_token &&
	    token_ensure(c, "bootstrap-admin", "admin", cfg.bootstrap_admin_token, err, sizeof(err)))
		die("KPERF_BOOTSTRAP_ADMIN_TOKEN: %s", err);
}

/*
 * Links in mail need the address readers open. Without KPERF_PUBLIC_URL it is
 * the one kperfd serves on (--listen, the bound port); a wildcard listen
 * address names this host. Said at start, since a proxy in front of kperfd
 * needs KPERF_PUBLIC_URL instead.
 */
static void derive_public_url(int port)
{
	const char *host = cfg.listen && *cfg.listen ? cfg.listen : "127.0.0.1";
	char name[256], url[400];

	if (!strcmp(host, "0.0.0.0") || !strcmp(host, "::") || !strcmp(host, "[::]")) {
		if (gethostname(name, sizeof(name)) || !*name)
			snprintf(name, sizeof(name), "localhost");
		name[sizeof(name) - 1] = '\0';
		host = name;
	}
	if (strchr(host, ':') && *host != '[')
		snprintf(url, sizeof(url), "http://[%s]:%d", host, port);
	else
		snprintf(url, sizeof(url), "http://%s:%d", host, port);
	free(cfg.public_url);
	cfg.public_url = xstrdup(url);
	log_info("links in mail use %s (from --listen and --port; KPERF_PUBLIC_URL sets another)",
		 url);
}

static int serve(void)
{
	sigset_t set;
	int sig, port;
	long roles;
	char err[512];
	PGconn *c;

	/*
	 * Two malloc arenas, not eight per core: a large answer (a 5,000-metric
	 * compare takes ~40 MB while it is built) leaves its arena grown, and an
	 * arena per thread would keep one such peak per thread.
	 */
	mallopt(M_ARENA_MAX, 2);
	/*
	 * Blocks of 256 KiB and more always get their own mapping, returned to
	 * the system when freed. Left to itself glibc raises this threshold to
	 * the largest block freed so far, after which a compare's megabytes
	 * come from the heap, where one long-lived block (a read-cache answer)
	 * above them keeps all of them resident.
	 */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	/*
	 * Setting that threshold also fixes the trim threshold at its 128 KiB
	 * default: freeing a compare's results (thousands of libpq blocks) then
	 * shrank the heap again and again, and the next rows faulted the pages
	 * back in (a third of a computed compare). The heap keeps 8 MiB free
	 * at its top; once computed reads pause, malloc_trim (http_idle)
	 * gives the rest back.
	 */
	mallopt(M_TRIM_THRESHOLD, 8 * 1024 * 1024);
	c = open_migrated();
	if (regress_configure(cfg.floors, err, sizeof(err)))
		die("KPERF_FLOORS: %s", err);
	bootstrap_tokens(c);
	if ((roles = roles_refresh(c, err, sizeof(err))) < 0)
		log_error("%s", err);
	else if (roles)
		log_info("set the role of the decisions of %ld (test, metric) pairs", roles);
	if (alert_secret_ensure(c))
		die("cannot store the unsubscribe secret");
	PQfinish(c);
	if (static_load(cfg.static_dir) < 0)
		log_error("static directory \"%s\" unreadable: the dashboard is off", cfg.static_dir);
	db_setup(cfg.database_url);
	db_setup_read(cfg.read_database_url);
	readcache_limit((size_t)cfg.read_cache_bytes);

	/* Worker threads inherit this mask; only the main thread takes signals. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	port = http_start();
	if (port < 0)
		die("cannot serve on %s:%ld", cfg.listen, cfg.port);
	if (!cfg.public_url || !*cfg.public_url)
		derive_public_url(port);
	lab_policy.confirm_runs = cfg.confirm_runs;
	lab_policy.confirm_timeout_s = (double)cfg.confirm_timeout_s;
	lab_policy.bisect = (int)cfg.bisect;
	lab_policy.ancestor_depth = cfg.ancestor_depth;
	lab_policy.settle_s = (double)cfg.alert_settle_s;
	if (cfg.worker && regress_start((double)cfg.alert_settle_s))
		die("cannot start the decision worker");
	{
		struct alert_config a = {cfg.mail_from, cfg.public_url, (double)cfg.alert_settle_s,
					 cfg.smtp_max_attempts, (double)cfg.smtp_retry_s};
		struct smtp_server s = {cfg.smtp_url, cfg.smtp_user, cfg.smtp_password, 60};
		if (cfg.worker && mailer_start(&a, &s))
			die("cannot start the mailer");
	}
	{
		struct report_config r = {cfg.mail_from, cfg.public_url};
		if (cfg.worker && robot_start(&r))
			die("cannot start the robot");
	}
	if (cfg.port_file) {
		char tmp[4096];
		FILE *f;
		snprintf(tmp, sizeof(tmp), "%s.tmp", cfg.port_file);
		f = fopen(tmp, "w");
		if (!f || fprintf(f, "%d\n", port) < 0 || fclose(f) || rename(tmp, cfg.port_file))
			die("cannot write port file \"%s\"", cfg.port_file);
	}
	for (;;) { /* signals, and every 0.1 s the idle work */
		const struct timespec tick = {0, 100 * 1000 * 1000};
		sig = sigtimedwait(&set, NULL, &tick);
		if (sig > 0)
			break;
		http_idle();
	}
	log_info("%s received, stopping", sig == SIGINT ? "SIGINT" : "SIGTERM");
	http_stop();
	robot_stop();
	mailer_stop();
	regress_stop();
	static_unload();
	return 0;
}

static int token_cmd(int argc, char **argv)
{
	char err[1024], secret[TOKEN_MAX + 1];
	const char *role = "collector";
	PGconn *c;
	int rc = 0;

	if (argc < 1) {
		usage();
		return 2;
	}
	if (!strcmp(argv[0], "create")) {
		const char *machines = NULL;
		if (argc < 2 || argc % 2) {
			usage();
			return 2;
		}
		for (int i = 2; i < argc; i += 2) {
			if (!strcmp(argv[i], "--role")) {
				role = argv[i + 1];
			} else if (!strcmp(argv[i], "--machines")) {
				machines = argv[i + 1];
			} else {
				usage();
				return 2;
			}
		}
		c = open_migrated();
		if (token_create(c, argv[1], role, machines, secret, err, sizeof(err))) {
			fprintf(stderr, "kperfd: token create: %s\n", err);
			rc = 1;
		} else {
			printf("%s\n", secret);
			fprintf(stderr, "kperfd: created %s token \"%s\"; it is shown only this once\n",
				role, argv[1]);
		}
	} else if (!strcmp(argv[0], "list") && argc == 1) {
		c = open_migrated();
		if (token_list(c, err, sizeof(err))) {
			fprintf(stderr, "kperfd: token list: %s\n", err);
			rc = 1;
		}
	} else if (!strcmp(argv[0], "revoke") && argc == 2) {
		c = open_migrated();
		rc = token_revoke(c, argv[1], err, sizeof(err));
		if (rc < 0)
			fprintf(stderr, "kperfd: token revoke: %s\n", err);
		else if (rc > 0)
			fprintf(stderr, "kperfd: token revoke: no active token named \"%s\"\n",
				argv[1]);
		else
			fprintf(stderr, "kperfd: revoked token \"%s\"\n", argv[1]);
		rc = rc ? 1 : 0;
	} else {
		usage();
		return 2;
	}
	PQfinish(c);
	return rc;
}

/* Removes "name VALUE" (or a lone name when flag_only) from argv[from..];
 * returns VALUE (or name), NULL when absent. *bad set when VALUE is missing. */
static const char *take_opt(int *argc, char **argv, int from, const char *name, int flag_only,
			    int *bad)
{
	int w = flag_only ? 1 : 2;

	for (int i = from; i < *argc; i++) {
		const char *v;
		if (strcmp(argv[i], name))
			continue;
		if (!flag_only && i + 1 >= *argc) {
			*bad = 1;
			return NULL;
		}
		v = flag_only ? argv[i] : argv[i + 1];
		memmove(argv + i, argv + i + w, (size_t)(*argc - i - w + 1) * sizeof(*argv));
		*argc -= w;
		return v;
	}
	return NULL;
}

/* kperfd archive ... / kperfd restore-archive ...: argv[from..) after the flags */
static int archive_cmd(const char *cmd, const char *before, const char *dump, int list,
		       const char *file, int nargs, char **args)
{
	char err[1024], month[11];
	PGconn *c;
	int rc;

	if (!strcmp(cmd, "archive")) {
		if (nargs || (list && (before || dump)) || (!list && !before)) {
			fprintf(stderr, "kperfd archive: give --before YYYY-MM [--dump DIR], or --list"
					" alone\n");
			return 2;
		}
		if (before && archive_parse_month(before, month)) {
			fprintf(stderr, "kperfd archive: --before wants a month as YYYY-MM, not \"%s\"\n",
				before);
			return 2;
		}
		c = open_migrated();
		rc = list ? archive_list(c, err, sizeof(err))
			  : archive_months(c, cfg.database_url, month, dump, err, sizeof(err));
	} else {
		if (nargs != 1 || before || dump || list) {
			fprintf(stderr, "kperfd restore-archive: give one month, YYYY-MM [--file DUMP]\n");
			return 2;
		}
		if (archive_parse_month(args[0], month)) {
			fprintf(stderr, "kperfd restore-archive: wants a month as YYYY-MM, not \"%s\"\n",
				args[0]);
			return 2;
		}
		c = open_migrated();
		rc = archive_restore(c, cfg.database_url, month, file, err, sizeof(err));
	}
	if (rc)
		fprintf(stderr, "kperfd %s: %s\n", cmd, err);
	PQfinish(c);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *cmd = "serve";
	char err[1024];
	int argi = 1;

	setvbuf(stderr, NULL, _IOLBF, 0);
	stats_init();
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage();
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--version")) {
		printf("kperfd %s (schema %d)\n", KPERF_VERSION, migrate_latest());
		return 0;
	}
	if (argc > 1 && strncmp(argv[1], "--", 2))
		cmd = argv[argi++];
	if (!strcmp(cmd, "archive") || !strcmp(cmd, "restore-archive")) {
		int bad = 0;
		const char *before = take_opt(&argc, argv, argi, "--before", 0, &bad);
		const char *dump = take_opt(&argc, argv, argi, "--dump", 0, &bad);
		const char *file = take_opt(&argc, argv, argi, "--file", 0, &bad);
		int list = take_opt(&argc, argv, argi, "--list", 1, &bad) != NULL;

		if (bad) {
			usage();
			return 2;
		}
		if (config_load(argc, argv, &argi, err, sizeof(err)))
			die("%s", err);
		return archive_cmd(cmd, before, dump, list, file, argc - argi, argv + argi);
	}
	if (config_load(argc, argv, &argi, err, sizeof(err)))
		die("%s", err);
	if (!strcmp(cmd, "serve") && argi == argc)
		return serve();
	if (!strcmp(cmd, "migrate") && argi == argc) {
		PQfinish(open_migrated());
		printf("schema at version %d\n", migrate_latest());
		return 0;
	}
	if (!strcmp(cmd, "token"))
		return token_cmd(argc - argi, argv + argi);
	usage();
	return 2;
}
