/*
 * route.c - route_match: the route of a request's method and path in the
 * table routes[] (api/routes.c), and the part a wildcard segment matched.
 */
#include <string.h>

#include "server/http/route.h"

/* 1 when path matches pattern; *arg gets the part a wildcard matched. */
static int path_match(const char *pattern, const char *path, const char **arg)
{
	size_t n = strlen(pattern);

	if (n >= 3 && !strcmp(pattern + n - 3, "/**")) {
		if (strncmp(pattern, path, n - 2))
			return 0;
		*arg = path + n - 2;
		return 1;
	}
	if (n >= 2 && !strcmp(pattern + n - 2, "/*")) {
		const char *rest = path + n - 1;
		if (strncmp(pattern, path, n - 1) || !*rest || strchr(rest, '/'))
			return 0;
		*arg = rest;
		return 1;
	}
	*arg = NULL;
	return !strcmp(pattern, path);
}

const struct route *route_match(const char *method, const char *path, const char **arg,
				int *path_known)
{
	*path_known = 0;
	for (const struct route *r = routes; r->method; r++) {
		if (!path_match(r->path, path, arg))
			continue;
		if (!strcmp(r->method, method) ||
		    (!strcmp(method, "HEAD") && !strcmp(r->method, "GET")))
			return r;
		*path_known = 1;
	}
	*arg = NULL;
	return NULL;
}
