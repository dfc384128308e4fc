/*
 * parse_lock_stat.c - /proc/lock_stat text: the reader LKP's stats/lock_stat
 * describes (class rows with a column per header name, call-site rows summed
 * into "<class>.contentions.<function>"), the lock_stat format for `parse`,
 * and the delta rule for snapshots taken around a benchmark.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "collectors/base/cutil.h"
#include "collectors/parse/lockstat.h"
#include "collectors/parse/metrics.h"
#include "collectors/parse/parse.h"
#include "collectors/parse/rx.h"

#define LS_COLUMNS 16

static void add(json_t *out, const char *key, double v)
{
	json_t *old = json_object_get(out, key);
	json_object_set_new(out, key, json_real(v + (old ? json_number_value(old) : 0)));
}

static char *no_spaces(char *s)
{
	size_t o = 0;
	for (size_t i = 0; s[i]; i++)
		if (s[i] != ' ')
			s[o++] = s[i];
	s[o] = '\0';
	return s;
}

struct site {
	char func[128];
	double count;
};

static void flush_sites(json_t *out, char *lock, struct site *sites, size_t *nsites)
{
	size_t n = strlen(lock);

	if (!*nsites)
		return;
	if (n >= 2 && !strcmp(lock + n - 2, "-R"))
		lock[n - 2] = '\0';
	for (size_t i = 0; i < *nsites; i++) {
		struct buf key = BUF_INIT;
		buf_printf(&key, "%s.contentions.%s", lock, sites[i].func);
		add(out, buf_str(&key), sites[i].count);
		buf_release(&key);
	}
	*nsites = 0;
}

int lockstat_read(const char *text, size_t len, json_t *out, char *msg, size_t msgsz)
{
	char *names[LS_COLUMNS], header[4096];
	struct site sites[64];
	size_t nnames, nsites = 0;
	struct rx class_rx, site_rx;
	char lock[512] = "";
	const char *version;
	struct lines it;
	char *line;

	lines_init(&it, text, len);
	line = lines_next(&it);
	version = line ? strstr(line, "lock_stat version 0.") : NULL;
	if (!version || (version[20] != '3' && version[20] != '4')) {
		snprintf(msg, msgsz, "1: not lock_stat version 0.3 or 0.4");
		lines_release(&it);
		return -1;
	}
	line = lines_next(&it);
	if (!line || !strstr(line, "---------------------")) {
		snprintf(msg, msgsz, "2: expected a line of dashes");
		lines_release(&it);
		return -1;
	}
	line = lines_next(&it);
	snprintf(header, sizeof(header), "%s", line ? line : "");
	nnames = split_ws(header, names, LS_COLUMNS);
	if (nnames < 5) {
		snprintf(msg, msgsz, "3: expected the column names");
		lines_release(&it);
		return -1;
	}
	rx_init(&class_rx, " +(.+): +([0-9.]+ +[0-9.]+ +[0-9.]+ +.*)");
	rx_init(&site_rx, " +([0-9]+) +\\[<[0-9a-f]+>\\] ([a-zA-Z0-9_]+)");
	while ((line = lines_next(&it))) {
		if (rx_match(&class_rx, line)) {
			char values[2048], *v[LS_COLUMNS];
			size_t nv;
			rx_str(&class_rx, 1, lock, sizeof(lock));
			no_spaces(lock);
			rx_str(&class_rx, 2, values, sizeof(values));
			nv = split_ws(values, v, LS_COLUMNS);
			for (size_t i = 0; i < nv; i++) {
				const char *col = i + 2 < nnames ? names[i + 2] : "";
				struct buf key = BUF_INIT;
				double x;
				if (cparse_double(v[i], &x))
					x = 0; /* Ruby's to_f/to_i of junk */
				if (!strstr(col, "time"))
					x = trunc(x);
				buf_printf(&key, "%s.%s", lock, col);
				add(out, buf_str(&key), x);
				buf_release(&key);
			}
		} else if (rx_match(&site_rx, line)) {
			char func[128], num[32];
			double c;
			size_t i;
			rx_str(&site_rx, 2, func, sizeof(func));
			if (cparse_double(rx_str(&site_rx, 1, num, sizeof(num)), &c))
				continue;
			for (i = 0; i < nsites && strcmp(sites[i].func, func); i++)
				;
			if (i == nsites) {
				if (nsites == sizeof(sites) / sizeof(sites[0]))
					continue;
				snprintf(sites[nsites].func, sizeof(sites[0].func), "%s", func);
				sites[nsites++].count = 0;
			}
			sites[i].count += c;
		} else if (!line[0]) {
			flush_sites(out, lock, sites, &nsites);
		}
	}
	rx_release(&class_rx);
	rx_release(&site_rx);
	lines_release(&it);
	return 0;
}

int parse_lock_stat(struct parse_ctx *pc, const char *text, size_t len)
{
	json_t *vals = json_object();
	const char *key;
	json_t *v;
	char msg[256];
	int rc = 0;

	if (lockstat_read(text, len, vals, msg, sizeof(msg))) {
		char *colon = strchr(msg, ':');
		int64_t line = 0;
		if (colon) {
			*colon = '\0';
			cparse_int64(msg, 0, INT32_MAX, &line);
		}
		pc->line = (size_t)line;
		rc = parse_fail(pc, "%s", colon ? colon + 2 : msg);
	} else {
		json_object_foreach(vals, key, v)
			parse_metric(pc, key, json_number_value(v));
	}
	json_decref(vals);
	return rc;
}

/* ---- two snapshots -> one iteration ---- */

struct ranked {
	char *cls;
	double contentions;
};

static int by_contentions(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->contentions != y->contentions)
		return x->contentions > y->contentions ? -1 : 1;
	return strcmp(x->cls, y->cls);
}

static double get(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return v ? json_number_value(v) : 0.0;
}

static double num(const json_t *o, const char *cls, const char *col)
{
	struct buf key = BUF_INIT;
	double v;

	buf_printf(&key, "%s.%s", cls, col);
	v = get(o, buf_str(&key));
	buf_release(&key);
	return v;
}

static int wanted(const char *cls, const struct ranked *r, size_t n)
{
	if (strstr(cls, "lru_lock"))
		return 1;
	for (size_t i = 0; i < n && i < LOCKSTAT_TOP_CLASSES; i++)
		if (!strcmp(r[i].cls, cls))
			return 1;
	return 0;
}

size_t lockstat_delta(const json_t *before, const json_t *after, json_t *metrics)
{
	struct ranked *r = NULL;
	size_t n = 0, cap = 0, kept = 0;
	const char *key;
	json_t *v;

	/* Rank the classes by contentions during the interval. */
	json_object_foreach((json_t *)after, key, v) {
		const char *dot = strrchr(key, '.');
		double d;
		if (!dot || strcmp(dot, ".contentions"))
			continue;
		d = json_number_value(v) - get(before, key);
		if (!(d > 0))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			r = xrealloc(r, cap * sizeof(*r));
		}
		r[n].cls = xstrndup(key, (size_t)(dot - key));
		r[n].contentions = d;
		n++;
	}
	qsort(r, n, sizeof(*r), by_contentions);
	json_object_foreach((json_t *)after, key, v) {
		const char *site = strstr(key, ".contentions.");
		const char *col = site ? site : strrchr(key, '.');
		struct buf name = BUF_INIT;
		double out;
		char *cls;

		if (!col)
			continue;
		cls = xstrndup(key, (size_t)(col - key));
		col++;
		if (!wanted(cls, r, n)) {
			free(cls);
			continue;
		}
		if (!site && (strstr(col, "-min") || strstr(col, "-max"))) {
			out = json_number_value(v);
		} else if (!site && (!strcmp(col, "waittime-avg") || !strcmp(col, "holdtime-avg"))) {
			const char *total = col[0] == 'w' ? "waittime-total" : "holdtime-total";
			const char *count = col[0] == 'w' ? "contentions" : "acquisitions";
			double dc = num(after, cls, count) - num(before, cls, count);
			out = dc > 0 ? (num(after, cls, total) - num(before, cls, total)) / dc : 0;
		} else {
			out = json_number_value(v) - get(before, key);
		}
		buf_printf(&name, "lock_stat.%s", key);
		metrics_add(metrics, buf_str(&name), out);
		if (!site && !strcmp(col, "contentions"))
			kept++;
		buf_release(&name);
		free(cls);
	}
	for (size_t i = 0; i < n; i++)
		free(r[i].cls);
	free(r);
	return kept;
}
