/*
 * routes.c - the route table: every URL kperfd answers, who may call it and
 * whether it carries a JSON body. Keep api/openapi.yaml in step with it.
 */
#include <string.h>

#include "server/http/route.h"
#include "server/http/static.h"
#include "api/api.h"

const struct route routes[] = {
	{"POST", "/api/v1/runs", api_runs_post, AUTH_COLLECTOR, 1, 0},
	{"GET", "/api/v1/runs", api_runs_list, AUTH_PUBLIC, 0, 0},
	{"GET", "/api/v1/runs/*", api_run_get, AUTH_PUBLIC, 0, 0},
	{"POST", "/api/v1/commits", api_commits_post, AUTH_COLLECTOR, 1, 0},
	{"GET", "/api/v1/commits", api_commits_list, AUTH_PUBLIC, 0, 0},
	{"GET", "/api/v1/machines", api_machines_list, AUTH_PUBLIC, 0, 0},
	{"GET", "/api/v1/tests", api_tests_list, AUTH_PUBLIC, 0, 0},
	{"GET", "/api/v1/metrics", api_metrics_list, AUTH_PUBLIC, 0, 0},
	{"GET", "/api/v1/compare", api_compare, AUTH_PUBLIC, 0, 1},
	{"GET", "/api/v1/trend", api_trend, AUTH_PUBLIC, 0, 1},
	{"GET", "/api/v1/series", api_series_list, AUTH_PUBLIC, 0, 0},
	{"GET", "/api/v1/series/*", api_series_get, AUTH_PUBLIC, 0, 0},
	{"GET", "/api/v1/regressions", api_regressions_list, AUTH_PUBLIC, 0, 0},
	{"GET", "/api/v1/regressions/*", api_regression_get, AUTH_PUBLIC, 0, 0},
	{"POST", "/api/v1/regressions/*", api_regression_triage, AUTH_ADMIN, 1, 0},
	{"DELETE", "/api/v1/runs/*", api_run_invalidate, AUTH_ADMIN, 0, 0},
	{"POST", "/api/v1/subscriptions", api_subscriptions_post, AUTH_ADMIN, 1, 0},
	{"GET", "/api/v1/subscriptions", api_subscriptions_list, AUTH_ADMIN, 0, 0},
	{"DELETE", "/api/v1/subscriptions/*", api_subscription_delete, AUTH_ADMIN, 0, 0},
	{"GET", "/api/v1/unsubscribe", api_unsubscribe, AUTH_PUBLIC, 0, 0},
	{"POST", "/api/v1/unsubscribe", api_unsubscribe, AUTH_PUBLIC, 0, 0},
	{"GET", "/api/v1/alerts", api_alerts_list, AUTH_ADMIN, 0, 0},
	{"POST", "/api/v1/alerts/**", api_alert_action, AUTH_ADMIN, 0, 0},
	{"POST", "/api/v1/inboxes", api_inboxes_post, AUTH_ADMIN, 1, 0},
	{"GET", "/api/v1/inboxes", api_inboxes_list, AUTH_PUBLIC, 0, 0},
	{"POST", "/api/v1/plans", api_plans_post, AUTH_ADMIN, 1, 0},
	{"GET", "/api/v1/plans", api_plans_list, AUTH_PUBLIC, 0, 0},
	{"POST", "/api/v1/jobs", api_jobs_post, AUTH_ADMIN, 1, 0},
	{"GET", "/api/v1/jobs", api_jobs_list, AUTH_PUBLIC, 0, 0},
	{"POST", "/api/v1/jobs/claim", api_jobs_claim, AUTH_COLLECTOR, 1, 0},
	{"GET", "/api/v1/jobs/*", api_job_get, AUTH_PUBLIC, 0, 0},
	{"DELETE", "/api/v1/jobs/*", api_job_cancel, AUTH_ADMIN, 0, 0},
	{"POST", "/api/v1/jobs/**", api_job_action, AUTH_COLLECTOR, 1, 0},
	{"GET", "/api/v1/agents", api_jobs_agents, AUTH_PUBLIC, 0, 0},
	{"GET", "/api/v1/bisections", api_bisections_list, AUTH_PUBLIC, 0, 0},
	{"POST", "/api/v1/bisections", api_bisections_post, AUTH_ADMIN, 1, 0},
	{"GET", "/api/v1/bisections/*", api_bisection_get, AUTH_PUBLIC, 0, 0},
	{"GET", "/healthz", api_healthz, AUTH_PUBLIC, 0, 0},
	{"GET", "/metrics", api_prometheus, AUTH_PUBLIC, 0, 0},
	{"GET", "/", static_serve, AUTH_PUBLIC, 0, 0},
	{"GET", "/static/**", static_serve, AUTH_PUBLIC, 0, 0},
	{"GET", "/trend", static_page, AUTH_PUBLIC, 0, 0},
	{"GET", "/compare", static_page, AUTH_PUBLIC, 0, 0},
	{"GET", "/lru-lock", static_page, AUTH_PUBLIC, 0, 0},
	{"GET", "/mglru", static_page, AUTH_PUBLIC, 0, 0},
	{"GET", "/subscriptions", static_page, AUTH_PUBLIC, 0, 0},
	{"GET", "/jobs", static_page, AUTH_PUBLIC, 0, 0},
	{"GET", "/series/*", static_page, AUTH_PUBLIC, 0, 0},
	{"GET", "/runs/*", static_page, AUTH_PUBLIC, 0, 0},
	{"GET", "/regressions/*", static_page, AUTH_PUBLIC, 0, 0},
	{NULL, NULL, NULL, AUTH_PUBLIC, 0, 0},
};

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
