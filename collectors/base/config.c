/*
 * config.c - the collector's configuration: file, then environment, then
 * flags (main.c), each layer overriding the one before.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/base/config.h"
#include "collectors/base/cutil.h"

static void set(char **slot, const char *value)
{
	free(*slot);
	*slot = xstrdup(value);
}

int config_set(struct collect_config *c, const char *key, const char *value)
{
	if (!strcmp(key, "KPERF_SERVER")) {
		size_t n;
		set(&c->server, value);
		n = strlen(c->server);
		while (n > 0 && c->server[n - 1] == '/')
			c->server[--n] = '\0';
	} else if (!strcmp(key, "KPERF_TOKEN")) {
		set(&c->token, value);
	} else if (!strcmp(key, "KPERF_MACHINE")) {
		set(&c->machine, value);
	} else if (!strcmp(key, "KPERF_SPOOL")) {
		set(&c->spool, value);
	} else if (!strcmp(key, "KPERF_TIMEOUT")) {
		int64_t t;
		if (cparse_int64(value, 1, 86400, &t))
			return -1;
		c->timeout_s = (long)t;
	} else {
		return -1;
	}
	return 0;
}

static int load_file(struct collect_config *c, const char *path, int must_exist)
{
	size_t len;
	char *text = read_file(path, 1u << 20, &len), *line;
	struct lines it;
	int rc = 0;

	if (!text) {
		if (errno == ENOENT && !must_exist)
			return 0;
		err_msg("%s: cannot read: %s", path, strerror(errno));
		return -1;
	}
	lines_init(&it, text, len);
	while ((line = lines_next(&it))) {
		char *s = str_trim(line), *eq;
		if (!*s || *s == '#')
			continue;
		eq = strchr(s, '=');
		if (!eq) {
			err_msg("%s:%zu: expected KEY=value", path, it.no);
			rc = -1;
			break;
		}
		*eq = '\0';
		if (config_set(c, str_trim(s), str_trim(eq + 1))) {
			err_msg("%s:%zu: unknown key or bad value \"%s\"", path, it.no, str_trim(s));
			rc = -1;
			break;
		}
	}
	lines_release(&it);
	free(text);
	return rc;
}

int config_load(struct collect_config *c, const char *file)
{
	static const char *const keys[] = {"KPERF_SERVER", "KPERF_TOKEN", "KPERF_MACHINE",
					   "KPERF_SPOOL", "KPERF_TIMEOUT", NULL};
	const char *env_file = getenv("KPERF_COLLECT_CONFIG");

	memset(c, 0, sizeof(*c));
	c->timeout_s = CONFIG_DEFAULT_TIMEOUT_S;
	if (load_file(c, file ? file : env_file && *env_file ? env_file : CONFIG_DEFAULT_FILE,
		      file != NULL))
		return -1;
	for (const char *const *k = keys; *k; k++) {
		const char *v = getenv(*k);
		if (v && *v && config_set(c, *k, v)) {
			err_msg("$%s: bad value \"%s\"", *k, v);
			return -1;
		}
	}
	if (!c->spool)
		c->spool = xstrdup(CONFIG_DEFAULT_SPOOL);
	return 0;
}

void config_release(struct collect_config *c)
{
	free(c->server);
	free(c->token);
	free(c->machine);
	free(c->spool);
	memset(c, 0, sizeof(*c));
}
