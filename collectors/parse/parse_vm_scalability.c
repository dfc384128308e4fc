/*
 * parse_vm_scalability.c - vm-scalability case output into LKP's metrics:
 * throughput (sum of per-process KB/s per case run, averaged over runs),
 * stddev%, median, free_time, workload and the *_fault family. Follows LKP's
 * stats/vm-scalability rule for rule, so numbers compare with LKP reports.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/base/cutil.h"
#include "collectors/parse/parse.h"
#include "collectors/parse/rx.h"

enum { RX_USECS, RX_DD, RX_TRUNC, RX_FAULT, RX_MIGRATE, RX_REMAP, RX_FREE, RX_CASE, RX_N };

static const char *const patterns[RX_N] = {
	"^\\.*([0-9]+) bytes / ([0-9]+) usecs = ([0-9]+) KB.s",
	"([0-9]+) bytes \\([0-9.]+ .B(, [0-9.]+ .iB)?\\) copied, ([0-9.]+) s, ([0-9.]+) .B.s",
	"([0-9]+) bytes truncated in ([0-9.]+)-([0-9.]+) seconds",
	"([0-9]+) bytes faulted in ([0-9.]+)-([0-9.]+) seconds",
	"[0-9]+ \\* [0-9]+ bytes migrated, [0-9]+ usecs, ([0-9]+) MB.s",
	"([0-9]+) bytes remapped, ([0-9]+) usecs, ([0-9]+) MB.s",
	"([0-9]+) usecs to free memory",
	"\\./case-[a-z-]+",
};

struct series {
	struct dvec kbps, throughput, median;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* One case run ends: its processes' KB/s make one throughput sample. */
static void add_one_sample(struct series *s)
{
	if (!s->kbps.n)
		return;
	dvec_push(&s->throughput, sum_kb(s->kbps.v, s->kbps.n));
	qsort(s->kbps.v, s->kbps.n, sizeof(double), cmp_double);
	dvec_push(&s->median, s->kbps.v[s->kbps.n / 2]);
}

/* Relative standard deviation: across runs, or within the only run. */
static double cal_stddev(const struct series *s)
{
	if (s->throughput.n > 1)
		return dvec_pstddev(&s->throughput) / dvec_mean(&s->throughput);
	return dvec_pstddev(&s->kbps) * (double)s->kbps.n / dvec_mean(&s->kbps);
}

static double cal_median_stddev(const struct series *s)
{
	if (s->median.n > 1)
		return dvec_pstddev(&s->median) / dvec_mean(&s->median);
	return 0.0;
}

static void series_release(struct series *s)
{
	dvec_release(&s->kbps);
	dvec_release(&s->throughput);
	dvec_release(&s->median);
}

static int add_bytes(struct parse_ctx *pc, uint64_t *total, uint64_t n)
{
	if (*total + n < *total)
		return parse_fail(pc, "byte count overflows");
	*total += n;
	return 0;
}

static int interval(struct parse_ctx *pc, struct rx *r, double *dt)
{
	double t1, t2;
	if (rx_double(r, 2, &t1) || rx_double(r, 3, &t2))
		return parse_fail(pc, "bad time stamps");
	*dt = t1 - t2;
	if (!(*dt != 0.0))
		return parse_fail(pc, "zero duration");
	return 0;
}

static int scan(struct parse_ctx *pc, struct rx *rx, struct series *main_s, struct series *fault,
		struct dvec *free_secs, uint64_t *bytes, uint64_t *bytes_fault, const char *text,
		size_t len)
{
	struct lines it;
	char *line;
	int rc = 0;

	lines_init(&it, text, len);
	while (!rc && (line = lines_next(&it))) {
		uint64_t b, u, mbps;
		double kbps, secs, dt;

		pc->line = it.no;
		if (rx_match(&rx[RX_USECS], line)) {
			if (rx_u64(&rx[RX_USECS], 1, &b) || rx_double(&rx[RX_USECS], 3, &kbps))
				rc = parse_fail(pc, "bad number");
			else if (!(rc = add_bytes(pc, bytes, b)))
				dvec_push(&main_s->kbps, kbps);
		} else if (rx_match(&rx[RX_DD], line)) {
			if (rx_u64(&rx[RX_DD], 1, &b) || rx_double(&rx[RX_DD], 3, &secs))
				rc = parse_fail(pc, "bad number");
			else if (secs == 0.0)
				rc = parse_fail(pc, "zero duration");
			else if (!(rc = add_bytes(pc, bytes, b)))
				dvec_push(&main_s->kbps, (double)(b >> 10) / secs);
		} else if (rx_match(&rx[RX_TRUNC], line)) {
			if (rx_u64(&rx[RX_TRUNC], 1, &b))
				rc = parse_fail(pc, "bad number");
			else if (!(rc = interval(pc, &rx[RX_TRUNC], &dt)) &&
				 !(rc = add_bytes(pc, bytes, b)))
				dvec_push(&main_s->kbps, (double)(b >> 10) / dt);
		} else if (rx_match(&rx[RX_FAULT], line)) {
			if (rx_u64(&rx[RX_FAULT], 1, &b))
				rc = parse_fail(pc, "bad number");
			else if (!(rc = interval(pc, &rx[RX_FAULT], &dt)) &&
				 !(rc = add_bytes(pc, bytes_fault, b)))
				dvec_push(&fault->kbps, (double)(b >> 10) / dt);
		} else if (rx_match(&rx[RX_MIGRATE], line)) {
			/* LKP adds the MB/s figure to the byte count; kept for equal workloads. */
			if (rx_u64(&rx[RX_MIGRATE], 1, &mbps))
				rc = parse_fail(pc, "bad number");
			else if (!(rc = add_bytes(pc, bytes, mbps)))
				parse_metric(pc, "migrate_mbps", (double)mbps);
		} else if (rx_match(&rx[RX_REMAP], line)) {
			if (rx_u64(&rx[RX_REMAP], 1, &b) || rx_u64(&rx[RX_REMAP], 2, &u))
				rc = parse_fail(pc, "bad number");
			else if ((u >> 10) == 0)
				rc = parse_fail(pc, "duration under 1024 usecs");
			else if (!(rc = add_bytes(pc, bytes, b)))
				dvec_push(&main_s->kbps, (double)(b / (u >> 10)));
		} else if (rx_match(&rx[RX_FREE], line)) {
			if (rx_u64(&rx[RX_FREE], 1, &u))
				rc = parse_fail(pc, "bad number");
			else
				dvec_push(free_secs, (double)u / 1000000.0);
		} else if (rx_match(&rx[RX_CASE], line)) {
			add_one_sample(main_s);
			add_one_sample(fault);
			main_s->kbps.n = 0;
			fault->kbps.n = 0;
		}
	}
	lines_release(&it);
	return rc;
}

int parse_vm_scalability(struct parse_ctx *pc, const char *text, size_t len)
{
	struct series m = {DVEC_INIT, DVEC_INIT, DVEC_INIT};
	struct series f = {DVEC_INIT, DVEC_INIT, DVEC_INIT};
	struct dvec free_secs = DVEC_INIT;
	uint64_t bytes = 0, bytes_fault = 0;
	struct rx rx[RX_N];
	int rc;

	for (int i = 0; i < RX_N; i++)
		rx_init(&rx[i], patterns[i]);
	rc = scan(pc, rx, &m, &f, &free_secs, &bytes, &bytes_fault, text, len);
	if (rc || !(add_one_sample(&m), add_one_sample(&f), m.throughput.n))
		goto out;
	parse_metric(pc, "throughput", trunc(dvec_mean(&m.throughput)));
	parse_unit(pc, "throughput", "KB/s");
	if (!m.kbps.n)
		goto out; /* LKP: incomplete output, the throughput alone */
	parse_metric(pc, "stddev%", cal_stddev(&m) * 100);
	if (free_secs.n) {
		parse_metric(pc, "free_time", dvec_mean(&free_secs));
		parse_unit(pc, "free_time", "s");
	}
	parse_metric(pc, "median", trunc(dvec_mean(&m.median)));
	parse_unit(pc, "median", "KB/s");
	parse_metric(pc, "median_stddev%", cal_median_stddev(&m) * 100);
	parse_metric(pc, "workload", (double)bytes / 1024);
	if (f.throughput.n) {
		parse_metric(pc, "throughput_fault", trunc(dvec_mean(&f.throughput)));
		parse_unit(pc, "throughput_fault", "KB/s");
		parse_metric(pc, "stddev_fault%", cal_stddev(&f) * 100);
		parse_metric(pc, "median_fault", trunc(dvec_mean(&f.median)));
		parse_metric(pc, "median_fault_stddev%", cal_median_stddev(&f) * 100);
	}
out:
	for (int i = 0; i < RX_N; i++)
		rx_release(&rx[i]);
	series_release(&m);
	series_release(&f);
	dvec_release(&free_secs);
	(void)bytes_fault;
	return rc;
}
