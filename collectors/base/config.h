/*
 * config.h - where kperf-collect sends runs and keeps them meanwhile: server
 * URL, token, machine name, spool directory, HTTP timeout. Layers: the file
 * $KPERF_COLLECT_CONFIG (default /etc/kperf/collect.conf, KEY=value), then
 * $KPERF_SERVER, $KPERF_TOKEN, $KPERF_MACHINE, $KPERF_SPOOL, $KPERF_TIMEOUT,
 * then command-line flags (main.c).
 */
#ifndef KPERF_CONFIG_H
#define KPERF_CONFIG_H

#define CONFIG_DEFAULT_FILE "/etc/kperf/collect.conf"
#define CONFIG_DEFAULT_SPOOL "/var/spool/kperf"
/* Seconds one HTTP request may take, connecting included. */
#define CONFIG_DEFAULT_TIMEOUT_S 60

struct collect_config {
	char *server;  /* "http://host:port", no trailing slash; NULL when unset */
	char *token;   /* NULL when unset */
	char *machine; /* NULL: the host name */
	char *spool;   /* never NULL after config_load */
	long timeout_s;
};

/*
 * Fill c from file (NULL: $KPERF_COLLECT_CONFIG or the default; a missing
 * file is fine) and the environment. Returns 0, or -1 with a message on
 * stderr when the file exists but has a bad line.
 */
int config_load(struct collect_config *c, const char *file);
void config_release(struct collect_config *c);

/* Set one key ("KPERF_SERVER", ...) to value; returns 0, -1 for an unknown key or bad value. */
int config_set(struct collect_config *c, const char *key, const char *value);

#endif
