/*
 * route.h - the one static route table: method, path, handler, and what
 * the request needs (a token of which role, a JSON body). The table itself
 * lives in api/routes.c, the server knows api/ only through it; route_match
 * (route.c) looks a request up in it.
 */
#ifndef KPERF_ROUTE_H
#define KPERF_ROUTE_H

#include "server/http/http.h"

enum route_auth { AUTH_PUBLIC, AUTH_COLLECTOR, AUTH_ADMIN };

typedef void (*route_fn)(struct request *rq, struct reply *rp);

struct route {
	const char *method;
	/* exact path; a trailing star segment matches one segment, a double star the rest */
	const char *path;
	route_fn fn;
	enum route_auth auth;
	int json_body; /* needs Content-Type application/json and a bounded body */
	int cached;    /* a read whose answers the read cache may keep (readcache.h) */
};

extern const struct route routes[];

/*
 * The route for method and path, with *arg set to the wildcard part.
 * NULL when none; *path_known is set when the path exists for another method.
 */
const struct route *route_match(const char *method, const char *path, const char **arg,
				int *path_known);

#endif
