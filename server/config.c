/*
 * config.c - one table of settings, each with its environment name, its
 * flag and its type, applied from the file, the environment and argv.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/config.h"
#include "lib/kperf_limits.h"
#include "lib/util.h"

struct config cfg;

enum kind { K_STR, K_LONG };

struct setting {
	const char *env;  /* without the KPERF_ prefix */
	const char *flag;
	enum kind kind;
	size_t offset;
	long min, max;
	const char *help;
};

#define STR(f) K_STR, offsetof(struct config, f), 0, 0
#define NUM(f, lo, hi) K_LONG, offsetof(struct config, f), lo, hi

static const struct setting settings[] = {
	{"DATABASE_URL", "--database", STR(database_url), "libpq conninfo or postgresql:// URI"},
	{"READ_DATABASE_URL", "--read-database", STR(read_database_url),
	 "libpq conninfo of hot standbys that answer reads (may name several hosts)"},
	{"LISTEN", "--listen", STR(listen), "address to listen on (127.0.0.1)"},
	{"PORT", "--port", NUM(port, 0, 65535), "TCP port (8080; 0 picks a free one)"},
	{"PUBLIC_URL", "--public-url", STR(public_url), "base URL used in links in mail"},
	{"SMTP_URL", "--smtp-url", STR(smtp_url), "smtp://host:port for alert mail"},
	{"MAIL_FROM", "--mail-from", STR(mail_from), "sender address of alert mail"},
	{"SMTP_USER", NULL, STR(smtp_user), "SMTP login"},
	{"SMTP_PASSWORD", NULL, STR(smtp_password), "SMTP password"},
	{"SMTP_MAX_ATTEMPTS", NULL, NUM(smtp_max_attempts, 1, 100),
	 "deliveries tried before a message is failed (8)"},
	{"SMTP_RETRY_S", NULL, NUM(smtp_retry_s, 0, 86400), "first retry delay, doubling (30)"},
	{"ALERT_SETTLE_S", NULL, NUM(alert_settle_s, 0, 86400),
	 "seconds after a commit's last decision before its mail goes (120)"},
	{"BODY_LIMIT", "--body-limit", NUM(body_limit, 1024, LIMIT_BODY_BYTES_MAX),
	 "largest request body in bytes (4194304)"},
	{"THREADS", "--threads", NUM(threads, 0, LIMIT_THREADS_MAX),
	 "requests using the database at once (0: four per core)"},
	{"READ_CACHE_BYTES", NULL, NUM(read_cache_bytes, 0, LIMIT_READ_CACHE_MAX),
	 "bytes of trend and compare answers kept for repeated reads (16777216; 0: off)"},
	{"STATIC_DIR", "--static", STR(static_dir), "directory of the dashboard files"},
	{"PORT_FILE", "--port-file", STR(port_file), "file to write the bound port into"},
	{"TRUSTED_PROXIES", NULL, STR(trusted_proxies),
	 "comma list of proxy addresses whose X-Forwarded-For is believed"},
	{"FLOORS", "--floors", STR(floors),
	 "verdict floors per metric glob, e.g. perf-profile.*=2pp,lock_stat.*=3%"},
	{"WORKER", "--worker", NUM(worker, 0, 1), "run the decision worker (1) or not (0)"},
	{"CONFIRM_RUNS", NULL, NUM(confirm_runs, 0, 100),
	 "runs per side a KPI change needs before it is mailed (3; 0 or 1: no confirmation)"},
	{"CONFIRM_TIMEOUT_S", NULL, NUM(confirm_timeout_s, 0, 30 * 86400),
	 "seconds to wait for confirmation runs, then mail unconfirmed (21600)"},
	{"BISECT", NULL, NUM(bisect, 0, 1), "bisect confirmed regressions to the first bad commit (1)"},
	{"ANCESTOR_DEPTH", NULL, NUM(ancestor_depth, 1, 100000),
	 "first-parent commits searched for a tested ancestor (1000)"},
	{"BOOTSTRAP_TOKEN", NULL, STR(bootstrap_token), "collector token to create at start"},
	{"BOOTSTRAP_ADMIN_TOKEN", NULL, STR(bootstrap_admin_token), "admin token to create at start"},
	{NULL, NULL, K_STR, 0, 0, 0, NULL},
};

static int apply(const struct setting *s, const char *value, const char *origin, char *err,
		 size_t errlen)
{
	char *base = (char *)&cfg;

	if (s->kind == K_STR) {
		char **p = (char **)(base + s->offset);
		free(*p);
		*p = xstrdup(value);
		return 0;
	}
	int64_t v;
	if (parse_int64(value, s->min, s->max, &v)) {
		snprintf(err, errlen, "%s: KPERF_%s must be an integer from %ld to %ld, not \"%s\"",
			 origin, s->env, s->min, s->max, value);
		return -1;
	}
	*(long *)(base + s->offset) = (long)v;
	return 0;
}

static int load_file(const char *path, int must_exist, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int lineno = 0;

	if (!f) {
		if (!must_exist && errno == ENOENT)
			return 0;
		snprintf(err, errlen, "config file \"%s\": %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *eq, *key = line, origin[512];
		const struct setting *s;

		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		while (*key == ' ' || *key == '\t')
			key++;
		if (!*key || *key == '#')
			continue;
		eq = strchr(key, '=');
		snprintf(origin, sizeof(origin), "%s:%d", path, lineno);
		if (!eq || strncmp(key, "KPERF_", 6)) {
			snprintf(err, errlen, "%s: expected KPERF_NAME=value", origin);
			fclose(f);
			return -1;
		}
		*eq = '\0';
		for (s = settings; s->env && strcmp(s->env, key + 6); s++)
			;
		if (!s->env) {
			snprintf(err, errlen, "%s: unknown setting \"%s\"", origin, key);
			fclose(f);
			return -1;
		}
		if (apply(s, eq + 1, origin, err, errlen)) {
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	return 0;
}

int config_load(int argc, char **argv, int *argi, char *err, size_t errlen)
{
	const char *file = getenv("KPERF_CONFIG");
	const struct setting *s;
	char name[64];

	cfg.listen = xstrdup("127.0.0.1");
	cfg.port = 8080;
	cfg.body_limit = LIMIT_BODY_BYTES_DEFAULT;
	cfg.read_cache_bytes = LIMIT_READ_CACHE_DEFAULT;
	cfg.database_url = xstrdup("dbname=kperf");
	cfg.static_dir = xstrdup("static");
	cfg.worker = 1;
	cfg.smtp_max_attempts = 8;
	cfg.smtp_retry_s = 30;
	cfg.alert_settle_s = 120;
	cfg.confirm_runs = 3;
	cfg.confirm_timeout_s = 21600;
	cfg.bisect = 1;
	cfg.ancestor_depth = 1000;
	cfg.mail_from = xstrdup("kperf@localhost");

	/* --config comes first so the file sits under the environment and flags. */
	for (int i = *argi; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--config"))
			file = argv[i + 1];
	if (load_file(file ? file : "/etc/kperf/kperfd.conf", file != NULL, err, errlen))
		return -1;
	for (s = settings; s->env; s++) {
		const char *v;
		snprintf(name, sizeof(name), "KPERF_%s", s->env);
		v = getenv(name);
		if (v && apply(s, v, "environment", err, errlen))
			return -1;
	}
	while (*argi < argc && !strncmp(argv[*argi], "--", 2)) {
		const char *flag = argv[*argi];
		if (!strcmp(flag, "--config")) {
			*argi += 2;
			continue;
		}
		for (s = settings; s->env && !(s->flag && !strcmp(s->flag, flag)); s++)
			;
		if (!s->env) {
			snprintf(err, errlen, "unknown flag \"%s\" (see kperfd --help)", flag);
			return -1;
		}
		if (*argi + 1 >= argc) {
			snprintf(err, errlen, "flag %s needs a value", flag);
			return -1;
		}
		if (apply(s, argv[*argi + 1], flag, err, errlen))
			return -1;
		*argi += 2;
	}
	return 0;
}

void config_usage(void)
{
	for (const struct setting *s = settings; s->env; s++)
		fprintf(stderr, "  %-14s KPERF_%-22s %s\n", s->flag ? s->flag : "", s->env, s->help);
	fprintf(stderr, "  %-14s KPERF_%-22s %s\n", "--config", "CONFIG",
		"KEY=value file (/etc/kperf/kperfd.conf)");
}
