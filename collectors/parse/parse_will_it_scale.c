/*
 * parse_will_it_scale.c - will-it-scale's runtest.py CSV into LKP's metrics:
 * "<tasks>.<column>" per row, per_process_ops, per_thread_ops, scalability,
 * workload, and one counter per failed assertion, as LKP's parser names them.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "collectors/base/cutil.h"
#include "collectors/parse/parse.h"
#include "collectors/parse/rx.h"

#define WIS_COLUMNS 32

static int all_in(const char *s, const char *set)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!strchr(set, *s))
			return 0;
	return 1;
}

/* "Assertion `ret == 1' failed" -> "Assertion_ret_==_1_failed" (LKP's tr + squeeze). */
static void assertion_key(const char *what, struct buf *out)
{
	const char *colon = NULL;

	for (const char *p = what; (p = strstr(p, ": ")); p += 2)
		colon = p;
	if (colon)
		what = colon + 2;
	for (; *what; what++) {
		char ch = *what;
		if (!(isalnum((unsigned char)ch) || strchr("<>!=", ch)))
			ch = '_';
		if (ch == '_' && out->len && out->data[out->len - 1] == '_')
			continue;
		buf_putc(out, ch);
	}
}

/* Split at commas in place; returns the count (at most max). */
static size_t split_commas(char *s, char **f, size_t max)
{
	size_t n = 0;

	while (n < max) {
		f[n++] = s;
		s = strchr(s, ',');
		if (!s)
			break;
		*s++ = '\0';
	}
	return n;
}

int parse_will_it_scale(struct parse_ctx *pc, const char *text, size_t len)
{
	char *names[WIS_COLUMNS], *vals[WIS_COLUMNS];
	char namebuf[512] = "";
	size_t nnames = 0;
	struct dvec scal = DVEC_INIT, per_process = DVEC_INIT, per_thread = DVEC_INIT;
	double workload = 0;
	struct lines it;
	struct rx assert_rx;
	char *line;
	int rc = 0;

	rx_init(&assert_rx, "(Assertion .* failed)");
	lines_init(&it, text, len);
	while (!rc && (line = lines_next(&it))) {
		pc->line = it.no;
		if (all_in(line, "abcdefghijklmnopqrstuvwxyz_,")) {
			snprintf(namebuf, sizeof(namebuf), "%s", line);
			nnames = split_commas(namebuf, names, WIS_COLUMNS);
		} else if (all_in(line, "0123456789.,")) {
			size_t nv = split_commas(line, vals, WIS_COLUMNS);
			double tasks, processes, processes_f, threads, linear, v;
			int64_t nt;

			if (!strcmp(vals[0], "0"))
				continue;
			if (nnames < 2 || nv < 4) {
				rc = parse_fail(pc, "values before a header line");
				break;
			}
			if (cparse_int64(vals[0], 0, INT32_MAX, &nt) || cparse_double(vals[1], &processes) ||
			    cparse_double(vals[3], &threads) || cparse_double(vals[nv - 1], &linear)) {
				rc = parse_fail(pc, "bad number");
				break;
			}
			/* Ruby's to_i of the counts: whole numbers only. */
			processes_f = processes;
			processes = trunc(processes);
			threads = trunc(threads);
			linear = trunc(linear);
			if (processes == 0 && threads == 0)
				continue; /* a bad sample: the benchmark died, see its assertions */
			if (nt == 0) {
				rc = parse_fail(pc, "task count is not a number");
				break;
			}
			tasks = (double)nt;
			if (linear != 0 && strcmp(vals[0], "1"))
				dvec_push(&scal, processes_f / linear);
			dvec_push(&per_process, processes / tasks);
			dvec_push(&per_thread, threads / tasks);
			workload += processes + threads;
			for (size_t i = 1; i < nnames && i < nv; i++) {
				char key[600];
				if (cparse_double(vals[i], &v)) {
					rc = parse_fail(pc, "bad number in column %s", names[i]);
					break;
				}
				snprintf(key, sizeof(key), "%s.%s", vals[0], names[i]);
				parse_metric(pc, key, v);
			}
		} else if (rx_match(&assert_rx, line)) {
			struct buf key = BUF_INIT;
			char what[1024];
			assertion_key(rx_str(&assert_rx, 1, what, sizeof(what)), &key);
			parse_metric(pc, buf_str(&key), 1);
			buf_release(&key);
		}
	}
	if (!rc) {
		if (scal.n)
			parse_metric(pc, "scalability", scal.v[scal.n - 1]);
		if (per_process.n)
			parse_metric(pc, "per_process_ops", trunc(dvec_mean(&per_process)));
		if (per_thread.n)
			parse_metric(pc, "per_thread_ops", trunc(dvec_mean(&per_thread)));
		if (workload != 0)
			parse_metric(pc, "workload", trunc(workload));
	}
	lines_release(&it);
	rx_release(&assert_rx);
	dvec_release(&scal);
	dvec_release(&per_process);
	dvec_release(&per_thread);
	return rc;
}
