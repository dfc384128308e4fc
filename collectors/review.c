/*
 * review.c - a reviewer's reads in the terminal: `compare`, `trend` and
 * `series` ask kperfd's read API and print what the pages show. compare's
 * table puts each test's KPIs first (kperfd's roles, the headline's kind
 * first), then event counters and the benchmark's other rows; monitors are
 * counted, not listed, unless --metric names them. Verdicts are coloured
 * on a terminal (not with NO_COLOR).
 */
#include <curl/curl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/buf.h"
#include "collectors/base/cutil.h"
#include "collectors/deliver/post.h"
#include "collectors/review.h"

static int colour;

static const char *paint(const char *verdict)
{
	if (!colour || !verdict)
		return "";
	if (!strcmp(verdict, "regression"))
		return "\033[1;31m";
	if (!strcmp(verdict, "improvement"))
		return "\033[1;34m";
	if (!strcmp(verdict, "changed"))
		return "\033[33m";
	return "\033[2m";
}

static const char *unpaint(void)
{
	return colour ? "\033[0m" : "";
}

/* "&key=value", URL-escaped, when value is set. */
static void query_add(struct buf *q, const char *key, const char *value)
{
	char *esc;

	if (!value || !*value)
		return;
	esc = curl_easy_escape(NULL, value, 0);
	buf_printf(q, "%s%s=%s", q->len && !strchr(buf_str(q), '?') ? "?" : "&", key,
		   esc ? esc : "");
	curl_free(esc);
}

/* GET path; the body (malloc'd) on 200, else NULL after saying why. */
static char *get(const struct collect_config *c, const char *path)
{
	struct post_result r;
	char *body = NULL;

	post_request(c, "GET", path, NULL, 0, c->timeout_s > 0 ? c->timeout_s : 60, NULL, NULL,
		     &r);
	if (r.status == 200) {
		body = r.body;
		r.body = NULL;
	} else if (!r.status) {
		err_msg("%s: no answer from %s: %s", path, c->server, r.error);
	} else {
		json_t *j = json_loads(r.body, 0, NULL);
		const char *m = json_string_value(json_object_get(j, "message"));
		err_msg("%s: HTTP %ld: %s", path, r.status, m ? m : r.body);
		json_decref(j);
	}
	post_result_release(&r);
	return body;
}

static json_t *get_json(const struct collect_config *c, const char *path)
{
	char *body = get(c, path);
	json_error_t e;
	json_t *j = body ? json_loads(body, 0, &e) : NULL;

	if (body && !j)
		err_msg("%s: not JSON: %s", path, e.text);
	free(body);
	return j;
}

/* "k=v,k=v" of a JSON object of strings. */
static void pairs(struct buf *b, json_t *o)
{
	const char *key;
	json_t *v;
	int first = 1;

	json_object_foreach(o, key, v) {
		buf_printf(b, "%s%s=%s", first ? "" : ",", key,
			   json_is_string(v) ? json_string_value(v) : "?");
		first = 0;
	}
}

static double num(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *str(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

static int role_order(json_t *row)
{
	static const char *const roles[] = {"kpi", "event", "info", "monitor"};
	for (int i = 0; i < 4; i++)
		if (!strcmp(str(row, "role"), roles[i]))
			return i;
	return 2;
}

static int row_cmp(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	struct buf kx = BUF_INIT, ky = BUF_INIT;
	int c;
	double rx, ry;

	buf_printf(&kx, "%s %s ", str(x, "machine"), str(x, "suite"));
	pairs(&kx, json_object_get(x, "params"));
	buf_putc(&kx, ' ');
	pairs(&kx, json_object_get(x, "variant"));
	buf_printf(&ky, "%s %s ", str(y, "machine"), str(y, "suite"));
	pairs(&ky, json_object_get(y, "params"));
	buf_putc(&ky, ' ');
	pairs(&ky, json_object_get(y, "variant"));
	c = strcmp(buf_str(&kx), buf_str(&ky));
	buf_release(&kx);
	buf_release(&ky);
	if (c)
		return c;
	if (role_order(x) != role_order(y))
		return role_order(x) - role_order(y);
	rx = json_is_integer(json_object_get(x, "kpi_rank")) ? num(x, "kpi_rank") : 99;
	ry = json_is_integer(json_object_get(y, "kpi_rank")) ? num(y, "kpi_rank") : 99;
	if (rx != ry)
		return rx < ry ? -1 : 1;
	c = strcmp(str(x, "metric"), str(y, "metric"));
	return c ? c : strcmp(str(x, "target_ref"), str(y, "target_ref"));
}

/* As the pages write numbers: thousands grouped from 10,000 on, two
 * decimals below, three digits for what would print as 0.00. */
static void fmt_num(char *out, size_t n, double v)
{
	char digits[64];
	size_t len, o = 0;
	int lead;

	if (!isfinite(v)) {
		snprintf(out, n, "-");
	} else if (v != 0 && fabs(v) < 0.01) {
		snprintf(out, n, "%.3g", v);
	} else if (fabs(v) < 1e4 || fabs(v) >= 1e18) {
		snprintf(out, n, fabs(v) < 1e4 ? "%.2f" : "%.4g", v);
	} else {
		snprintf(digits, sizeof(digits), "%.0f", fabs(v));
		len = strlen(digits);
		lead = (int)(len % 3 ? len % 3 : 3);
		if (v < 0 && o + 1 < n)
			out[o++] = '-';
		for (size_t i = 0; i < len && o + 2 < n; i++) {
			if (i && (int)((i - (size_t)lead) % 3) == 0 && i >= (size_t)lead)
				out[o++] = ',';
			out[o++] = digits[i];
		}
		out[o] = '\0';
	}
}

static void print_row(json_t *row)
{
	json_t *w = json_object_get(row, "welch"), *ci = json_object_get(w, "ci95_pct");
	json_t *base = json_object_get(row, "base"), *tgt = json_object_get(row, "target");
	int absolute = !strncmp(str(row, "metric"), "perf-profile.", 13);
	const char *verdict = json_is_false(json_object_get(row, "judged")) ? "not judged"
									    : str(row, "verdict");
	char bm[32], tm[32], change[32], cis[48] = "-";

	fmt_num(bm, sizeof(bm), num(base, "mean"));
	fmt_num(tm, sizeof(tm), num(tgt, "mean"));
	if (absolute)
		snprintf(change, sizeof(change), "%+.2f pp", num(row, "change_abs"));
	else if (isfinite(num(row, "change_pct")))
		snprintf(change, sizeof(change), "%+.2f%%", num(row, "change_pct"));
	else
		snprintf(change, sizeof(change), "-");
	if (json_array_size(ci) == 2)
		snprintf(cis, sizeof(cis), "[%.2f, %.2f]", json_number_value(json_array_get(ci, 0)),
			 json_number_value(json_array_get(ci, 1)));
	printf("  %-44s %12s %10s %12s  %-18s %s%-11s%s %lld/%lld\n", str(row, "metric"), bm, change,
	       tm, cis, paint(str(row, "verdict")), verdict, unpaint(),
	       (long long)json_integer_value(json_object_get(base, "runs")),
	       (long long)json_integer_value(json_object_get(tgt, "runs")));
}

static void print_compare(json_t *j, int monitors)
{
	json_t *rows = json_object_get(j, "rows"), *d, *row;
	json_t **list;
	size_t i, n = json_array_size(rows), hidden = 0, zeros = 0;
	struct buf last = BUF_INIT;

	printf("base:   %s  %s (%lld runs)\n", str(json_object_get(j, "base"), "commit"),
	       str(json_object_get(j, "base"), "subject"),
	       (long long)json_integer_value(json_object_get(json_object_get(j, "base"), "runs")));
	json_array_foreach(json_object_get(j, "targets"), i, d)
		printf("target: %s  %s (%lld runs)\n", str(d, "commit"), str(d, "subject"),
		       (long long)json_integer_value(json_object_get(d, "runs")));
	d = json_object_get(j, "environment_diff");
	printf("\nWhat differs besides the kernel:%s\n", json_array_size(d) ? "" : " nothing");
	json_array_foreach(d, i, row) {
		char *b = json_dumps(json_object_get(row, "base"), JSON_COMPACT);
		char *t = json_dumps(json_object_get(row, "target"), JSON_COMPACT);
		printf("  %-12s %-24s %s -> %s\n", str(row, "kind"), str(row, "key"), b, t);
		free(b);
		free(t);
	}
	list = xcalloc(n + 1, sizeof(*list));
	for (i = 0; i < n; i++)
		list[i] = json_array_get(rows, i);
	qsort(list, n, sizeof(*list), row_cmp);
	for (i = 0; i < n; i++) {
		struct buf key = BUF_INIT;
		row = list[i];
		if (!monitors && !strcmp(str(row, "role"), "monitor")) {
			hidden++;
			continue;
		}
		if (num(json_object_get(row, "base"), "mean") == 0 &&
		    num(json_object_get(row, "target"), "mean") == 0) {
			zeros++;
			continue;
		}
		buf_printf(&key, "%s · %s", str(row, "machine"), str(row, "suite"));
		if (json_object_size(json_object_get(row, "params"))) {
			buf_puts(&key, " · ");
			pairs(&key, json_object_get(row, "params"));
		}
		if (json_object_size(json_object_get(row, "variant"))) {
			buf_puts(&key, " · variant ");
			pairs(&key, json_object_get(row, "variant"));
		}
		if (strcmp(buf_str(&key), buf_str(&last))) {
			printf("\n%s\n", buf_str(&key));
			if (json_is_false(json_object_get(row, "judged")))
				printf("  not judged as a kernel change: %s\n", str(row, "not_judged"));
			printf("  %-44s %12s %10s %12s  %-18s %-11s %s\n", "metric", "base", "change",
			       "target", "95% CI %", "verdict", "runs");
			buf_release(&last);
			buf_puts(&last, buf_str(&key));
		}
		buf_release(&key);
		print_row(row);
	}
	if (zeros)
		printf("\n%zu rows zero on both sides not shown\n", zeros);
	if (hidden)
		printf("%s%zu machine monitor rows (meminfo, nr_* gauges, memcg sizes, perf-profile)"
		       " not shown: --metric 'meminfo.*' (or another glob) lists them\n",
		       zeros ? "" : "\n", hidden);
	buf_release(&last);
	free(list);
}

int review_compare(const struct collect_config *c, const struct review_opts *o)
{
	struct buf q = BUF_INIT;
	const char *format = o->format ? o->format : "table";
	int rc = 1;

	colour = isatty(1) && !getenv("NO_COLOR");
	if (strcmp(format, "table") && strcmp(format, "lkp") && strcmp(format, "mmtests") &&
	    strcmp(format, "json")) {
		err_msg("--format must be table, lkp, mmtests or json, not \"%s\"", format);
		return 64;
	}
	buf_puts(&q, "/api/v1/compare");
	query_add(&q, "base", o->base);
	query_add(&q, "target", o->target);
	query_add(&q, "suite", o->suite);
	query_add(&q, "machine", o->machine);
	query_add(&q, "metric", o->metric);
	if (strcmp(format, "table") && strcmp(format, "json"))
		query_add(&q, "format", format);
	if (strcmp(format, "table")) {
		char *body = get(c, buf_str(&q));
		if (body) {
			fputs(body, stdout);
			if (*body && body[strlen(body) - 1] != '\n')
				putchar('\n');
			rc = 0;
		}
		free(body);
	} else {
		json_t *j = get_json(c, buf_str(&q));
		if (j) {
			print_compare(j, o->metric != NULL);
			rc = 0;
		}
		json_decref(j);
	}
	buf_release(&q);
	return rc;
}

int review_trend(const struct collect_config *c, const struct review_opts *o)
{
	struct buf q = BUF_INIT;
	json_t *j, *s, *p;
	size_t i, k;

	colour = isatty(1) && !getenv("NO_COLOR");
	buf_puts(&q, "/api/v1/trend");
	query_add(&q, "machine", o->machine);
	query_add(&q, "suite", o->suite);
	query_add(&q, "params", o->params);
	query_add(&q, "variant", o->variant);
	query_add(&q, "metric", o->metric);
	j = get_json(c, buf_str(&q));
	buf_release(&q);
	if (!j)
		return 1;
	printf("%s on %s, %s", str(j, "metric"), str(j, "machine"), str(j, "suite"));
	{
		struct buf b = BUF_INIT;
		pairs(&b, json_object_get(j, "params"));
		printf("%s%s\n", b.len ? " " : "", buf_str(&b));
		buf_release(&b);
	}
	json_array_foreach(json_object_get(j, "series"), i, s) {
		struct buf v = BUF_INIT;
		pairs(&v, json_object_get(s, "variant"));
		printf("\nvariant %s\n  %-12s %-40s %5s %14s %8s %14s %14s  %s\n",
		       v.len ? buf_str(&v) : "(none)", "commit", "subject", "n", "mean", "±%", "min",
		       "max", "decision");
		buf_release(&v);
		json_array_foreach(json_object_get(s, "points"), k, p) {
			json_t *d;
			size_t m;
			const char *commit = str(p, "commit");
			char mean[32], mn[32], mx[32], sd[16] = "-";
			double mu = num(p, "mean");

			fmt_num(mean, sizeof(mean), mu);
			fmt_num(mn, sizeof(mn), num(p, "min"));
			fmt_num(mx, sizeof(mx), num(p, "max"));
			if (isfinite(num(p, "stddev")) && mu != 0)
				snprintf(sd, sizeof(sd), "%.2f%%", 100 * num(p, "stddev") / fabs(mu));
			printf("  %-12.12s %-40.40s %5lld %14s %8s %14s %14s", *commit ? commit : str(p, "release"),
			       str(p, "subject"), (long long)json_integer_value(json_object_get(p, "n")), mean,
			       sd, mn, mx);
			json_array_foreach(json_object_get(s, "decisions"), m, d)
				if (!strcmp(str(d, "commit"), commit) && strcmp(str(d, "verdict"), "noise"))
					printf("  %s%s %+.2f%%%s", paint(str(d, "verdict")), str(d, "verdict"),
					       num(d, "change_pct"), unpaint());
			json_array_foreach(json_object_get(s, "change_points"), m, d)
				if (!strcmp(str(d, "commit"), commit))
					printf("  change point %+.2f%%", num(d, "shift_pct"));
			putchar('\n');
		}
	}
	json_decref(j);
	return 0;
}

int review_series(const struct collect_config *c, const struct review_opts *o)
{
	struct buf q = BUF_INIT;
	json_t *j, *v, *p, *d;
	size_t i, k, m;
	char *esc = curl_easy_escape(NULL, o->base ? o->base : "", 0);

	colour = isatty(1) && !getenv("NO_COLOR");
	buf_printf(&q, "/api/v1/series/%s", esc ? esc : "");
	curl_free(esc);
	j = get_json(c, buf_str(&q));
	buf_release(&q);
	if (!j)
		return 1;
	printf("series %s\n", str(j, "name"));
	json_array_foreach(json_object_get(j, "versions"), i, v) {
		json_t *base = json_object_get(v, "base");
		printf("\n%s: %zu patches on %.12s %s\n", str(v, "series"),
		       json_array_size(json_object_get(v, "patches")), str(base, "commit"),
		       str(base, "subject"));
		json_array_foreach(json_object_get(v, "patches"), k, p) {
			printf("  %2lld %.12s %s (%lld runs)\n",
			       (long long)json_integer_value(json_object_get(p, "position")),
			       str(p, "commit"), str(p, "subject"),
			       (long long)json_integer_value(json_object_get(p, "runs")));
			json_array_foreach(json_object_get(p, "kpis"), m, d) {
				json_t *ci = json_object_get(d, "ci95_pct");
				printf("       %-44s %s%+8.2f%% %-11s%s", str(d, "metric"),
				       paint(str(d, "verdict")), num(d, "change_pct"), str(d, "verdict"),
				       unpaint());
				if (json_array_size(ci) == 2)
					printf(" [%.2f, %.2f]", json_number_value(json_array_get(ci, 0)),
					       json_number_value(json_array_get(ci, 1)));
				printf(" vs %.12s\n", str(d, "base_commit"));
			}
		}
		if (json_array_size(json_object_get(v, "vs_previous"))) {
			printf("  against the previous version:\n");
			json_array_foreach(json_object_get(v, "vs_previous"), k, d)
				printf("       %-44s %s%+8.2f%% %s%s\n", str(d, "metric"),
				       paint(str(d, "verdict")), num(d, "change_pct"), str(d, "verdict"),
				       unpaint());
		}
	}
	json_decref(j);
	return 0;
}
