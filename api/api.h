/*
 * api.h - the handlers of every HTTP resource (one file per resource) and
 * the helpers they share. Only api/routes.c refers to the handlers.
 */
#ifndef KPERF_API_H
#define KPERF_API_H

#include "server/http/http.h"

#define API_LIST_FILTERS_MAX 16

/*
 * Answer a list query per the read contract: limit and offset from the query
 * string (a bad one is a 400 naming it), sql run with the n filter values as
 * $1..$n and limit, offset as $n+1, $n+2. sql must return one row of (total,
 * json array of the page's items); the answer is {"items", "total", "limit",
 * "offset"}.
 */
void api_list(struct request *rq, struct reply *rp, const char *sql, int n,
	      const char *const *filters);

void api_runs_post(struct request *rq, struct reply *rp);
void api_runs_list(struct request *rq, struct reply *rp);
void api_run_get(struct request *rq, struct reply *rp);
void api_commits_post(struct request *rq, struct reply *rp);
void api_commits_list(struct request *rq, struct reply *rp);
void api_machines_list(struct request *rq, struct reply *rp);
void api_tests_list(struct request *rq, struct reply *rp);
void api_metrics_list(struct request *rq, struct reply *rp);
void api_healthz(struct request *rq, struct reply *rp);
void api_prometheus(struct request *rq, struct reply *rp);
void api_compare(struct request *rq, struct reply *rp);
void api_trend(struct request *rq, struct reply *rp);
void api_regressions_list(struct request *rq, struct reply *rp);
void api_regression_get(struct request *rq, struct reply *rp);
void api_regression_triage(struct request *rq, struct reply *rp);
void api_run_invalidate(struct request *rq, struct reply *rp);
void api_series_list(struct request *rq, struct reply *rp);
void api_series_get(struct request *rq, struct reply *rp);
void api_subscriptions_post(struct request *rq, struct reply *rp);
void api_subscriptions_list(struct request *rq, struct reply *rp);
void api_subscription_delete(struct request *rq, struct reply *rp);
void api_unsubscribe(struct request *rq, struct reply *rp);
void api_alerts_list(struct request *rq, struct reply *rp);
void api_jobs_post(struct request *rq, struct reply *rp);
void api_jobs_claim(struct request *rq, struct reply *rp);
void api_jobs_list(struct request *rq, struct reply *rp);
void api_jobs_agents(struct request *rq, struct reply *rp);
void api_job_get(struct request *rq, struct reply *rp);
void api_job_cancel(struct request *rq, struct reply *rp);
void api_job_action(struct request *rq, struct reply *rp);
void api_bisections_list(struct request *rq, struct reply *rp);
void api_bisections_post(struct request *rq, struct reply *rp);
void api_bisection_get(struct request *rq, struct reply *rp);
void api_inboxes_post(struct request *rq, struct reply *rp);
void api_inboxes_list(struct request *rq, struct reply *rp);
void api_plans_post(struct request *rq, struct reply *rp);
void api_plans_list(struct request *rq, struct reply *rp);
void api_alert_action(struct request *rq, struct reply *rp);

#endif
