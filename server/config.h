/*
 * config.h - kperfd's one configuration struct. Built at start-up from
 * defaults, then the KPERF_CONFIG file, then KPERF_* environment variables,
 * then command-line flags (later wins); read-only afterwards.
 */
#ifndef KPERF_CONFIG_H
#define KPERF_CONFIG_H

#include <stddef.h>

struct config {
	char *database_url;  /* KPERF_DATABASE_URL, --database: libpq conninfo or URI */
	char *listen;        /* KPERF_LISTEN, --listen: address to bind */
	long port;           /* KPERF_PORT, --port: 0 picks a free port */
	char *public_url;    /* KPERF_PUBLIC_URL: base of links in mail */
	char *read_database_url; /* KPERF_READ_DATABASE_URL: hot standbys for reads */
	char *smtp_url;      /* KPERF_SMTP_URL */
	char *mail_from;     /* KPERF_MAIL_FROM */
	char *smtp_user;     /* KPERF_SMTP_USER */
	char *smtp_password; /* KPERF_SMTP_PASSWORD */
	long smtp_max_attempts; /* KPERF_SMTP_MAX_ATTEMPTS: then a message is failed */
	long smtp_retry_s;   /* KPERF_SMTP_RETRY_S: first retry delay, doubling */
	long alert_settle_s; /* KPERF_ALERT_SETTLE_S: wait after a commit's last decision */
	long body_limit;     /* KPERF_BODY_LIMIT, --body-limit: request body bytes */
	long threads;        /* KPERF_THREADS, --threads: pooled db connections, 0 = 4/core */
	long read_cache_bytes; /* KPERF_READ_CACHE_BYTES: answers of trend and compare kept */
	char *static_dir;    /* KPERF_STATIC_DIR, --static: dashboard files */
	char *port_file;     /* KPERF_PORT_FILE, --port-file: write the bound port here */
	char *trusted_proxies; /* KPERF_TRUSTED_PROXIES: peers whose X-Forwarded-For counts */
	char *floors;        /* KPERF_FLOORS: verdict floor overrides, "glob=2%,glob=1pp" */
	long worker;         /* KPERF_WORKER: 1 runs the decision worker (default), 0 not */
	long confirm_runs;   /* KPERF_CONFIRM_RUNS: runs a KPI change needs per side (3) */
	long confirm_timeout_s; /* KPERF_CONFIRM_TIMEOUT_S: then mailed unconfirmed (21600) */
	long bisect;         /* KPERF_BISECT: 1 bisects confirmed regressions (default) */
	long ancestor_depth; /* KPERF_ANCESTOR_DEPTH: commits searched for a tested ancestor */
	char *bootstrap_token;       /* KPERF_BOOTSTRAP_TOKEN: collector token to ensure */
	char *bootstrap_admin_token; /* KPERF_BOOTSTRAP_ADMIN_TOKEN: admin token to ensure */
};

extern struct config cfg;

/*
 * Fill cfg from all sources. Flags are read from argv[*argi] on and *argi
 * is left at the first argument that is not a flag. Returns 0, or -1 with
 * a message in err naming the bad setting.
 */
int config_load(int argc, char **argv, int *argi, char *err, size_t errlen);

/* Print the settings and flags, for --help. */
void config_usage(void);

#endif
