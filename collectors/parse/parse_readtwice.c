/*
 * parse_readtwice.c - the readtwice page-cache microbenchmark (the seed's
 * "docker-ized readtwice": N processes each read a file twice) into
 * readtwice.throughput (total MB/s), readtwice.avg_throughput (mean MB/s
 * per process, the seed's figure) and readtwice.nr_processes.
 */

/*
 * Lines it reads (anything else is ignored):
 *   readtwice: process <id>: <bytes> bytes read twice in <s> s: <x> MB/s
 *   readtwice: total: <n> processes, <bytes> bytes in <s> s: <x> MB/s
 * and, per process, dd(1)'s summary line, as the original case-lru-file-
 * readtwice prints it: "<bytes> bytes (...) copied, <s> s, <x> <unit>/s"
 * with unit kB, MB, GB (powers of 1000) or KiB, MiB, GiB (powers of 1024).
 */
#include <ctype.h>
#include <string.h>

#include "collectors/base/cutil.h"
#include "collectors/parse/parse.h"

/* The number just before "<unit>/s" at rate (which points at the unit). */
static int number_before(const char *line, const char *unit_at, double *out)
{
	const char *end = unit_at, *start;

	while (end > line && end[-1] == ' ')
		end--;
	start = end;
	while (start > line && (isdigit((unsigned char)start[-1]) || start[-1] == '.'))
		start--;
	if (start == end)
		return -1;
	return cparse_double_n(start, (size_t)(end - start), out);
}

/* dd's rate in MB/s, or -1 when line is not dd's summary. */
static int dd_rate(const char *line, double *mbps)
{
	static const struct {
		const char *unit;
		double to_mb;
	} units[] = {
		{" B/s", 1e-6},	     {" kB/s", 1e-3}, {" MB/s", 1},	   {" GB/s", 1e3},
		{" TB/s", 1e6},	     {" KiB/s", 1024.0 / 1e6}, {" MiB/s", 1048576.0 / 1e6},
		{" GiB/s", 1073741824.0 / 1e6}, {NULL, 0},
	};
	const char *copied = strstr(line, " copied, ");

	if (!copied || !strstr(line, " bytes"))
		return -1;
	for (int i = 0; units[i].unit; i++) {
		const char *u = strstr(copied, units[i].unit);
		double v;
		if (u && !number_before(line, u + 1, &v)) {
			*mbps = v * units[i].to_mb;
			return 0;
		}
	}
	return -1;
}

int parse_readtwice(struct parse_ctx *pc, const char *text, size_t len)
{
	struct dvec per = DVEC_INIT;
	double total = 0;
	int have_total = 0, rc = 0;
	struct lines it;
	char *line;

	lines_init(&it, text, len);
	while (!rc && (line = lines_next(&it))) {
		const char *mb = strstr(line, " MB/s");
		double v;

		pc->line = it.no;
		if (!strncmp(line, "readtwice: total:", 17) && mb) {
			if (number_before(line, mb + 1, &v)) {
				rc = parse_fail(pc, "no MB/s figure");
				break;
			}
			total = v;
			have_total = 1;
		} else if (!strncmp(line, "readtwice: process ", 19) && mb) {
			if (number_before(line, mb + 1, &v)) {
				rc = parse_fail(pc, "no MB/s figure");
				break;
			}
			dvec_push(&per, v);
		} else if (!dd_rate(line, &v)) {
			dvec_push(&per, v);
		}
	}
	if (!rc && (have_total || per.n)) {
		parse_metric(pc, "throughput", have_total ? total : sum_kb(per.v, per.n));
		parse_unit(pc, "throughput", "MB/s");
		if (per.n) {
			parse_metric(pc, "avg_throughput", dvec_mean(&per));
			parse_unit(pc, "avg_throughput", "MB/s");
			parse_direction(pc, "avg_throughput", "higher");
			parse_metric(pc, "nr_processes", (double)per.n);
		}
	}
	dvec_release(&per);
	lines_release(&it);
	return rc;
}
