/*
 * parse_vmstat.c - the two vmstat formats: vmstat(8)'s sample table (LKP's
 * stats/vmstat: one value per sample for procs.r ... cpu.st and the sample's
 * time) and /proc/vmstat's "key value" lines (LKP's stats/proc-vmstat).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collectors/base/cutil.h"
#include "collectors/parse/parse.h"

static const char *const keys[] = {
	"procs.r", "procs.b",   "memory.swpd", "memory.free", "memory.buff", "memory.cache",
	"swap.si", "swap.so",   "io.bi",       "io.bo",       "system.in",   "system.cs",
	"cpu.us",  "cpu.sy",    "cpu.id",      "cpu.wa",      "cpu.st",      "time",
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static const char *const old_keys[] = {
	"time",	 "procs.r", "procs.b", "memory.swpd", "memory.free", "memory.buff",
	"memory.cache", "swap.si", "swap.so", "io.bi", "io.bo", "system.in",
	"system.cs", "cpu.us", "cpu.sy", "cpu.id", "cpu.wa", "cpu.st",
};

/* "2015-01-11" "20:18:35" -> seconds since the epoch, read as UTC; -1 when bad. */
static int parse_stamp(const char *date, const char *clock, double *out)
{
	struct tm tm;
	char *end;

	memset(&tm, 0, sizeof(tm));
	end = strptime(date, "%Y-%m-%d", &tm);
	if (!end || *end)
		return -1;
	end = strptime(clock, "%H:%M:%S", &tm);
	if (!end || *end)
		return -1;
	*out = (double)timegm(&tm);
	return 0;
}

static int show_record(struct parse_ctx *pc, const char *const *names, char **f, size_t n)
{
	double v;

	for (size_t i = 0; i < n; i++) {
		if (cparse_double(f[i], &v))
			return parse_fail(pc, "bad number %s in column %s", f[i], names[i]);
		parse_metric(pc, names[i], v);
	}
	return 0;
}

int parse_vmstat(struct parse_ctx *pc, const char *text, size_t len)
{
	struct lines it;
	char *line;
	int rc = 0;

	lines_init(&it, text, len);
	while (!rc && (line = lines_next(&it))) {
		char *f[NKEYS + 3];
		size_t n;
		double t;

		pc->line = it.no;
		if (!strpbrk(line, "0123456789"))
			continue;
		n = split_ws(line, f, NKEYS + 3);
		if (n == NKEYS + 1) { /* ends with "date time" */
			if (parse_stamp(f[n - 2], f[n - 1], &t)) {
				rc = parse_fail(pc, "bad time stamp %s %s", f[n - 2], f[n - 1]);
				break;
			}
			rc = show_record(pc, keys, f, NKEYS - 1);
			if (!rc)
				parse_metric(pc, "time", t);
		} else if (n == NKEYS - 1) { /* no time stamp */
			rc = show_record(pc, keys, f, n);
		} else if (n == NKEYS - 2) { /* vmstat 3.3.8: no steal column */
			rc = show_record(pc, keys, f, n);
		} else if (n == NKEYS && isdigit((unsigned char)f[0][0])) {
			/* old LKP monitors: the time stamp in the first column */
			rc = show_record(pc, old_keys, f, n);
		}
	}
	lines_release(&it);
	return rc;
}

int parse_proc_vmstat(struct parse_ctx *pc, const char *text, size_t len)
{
	struct lines it;
	char *line;
	int rc = 0;

	lines_init(&it, text, len);
	while (!rc && (line = lines_next(&it))) {
		char *f[3];
		size_t n;
		double v;

		pc->line = it.no;
		n = split_ws(line, f, 3);
		if (n == 0)
			continue;
		if (n != 2) {
			rc = parse_fail(pc, "expected \"key value\"");
			break;
		}
		if (f[0][0] && f[0][strlen(f[0]) - 1] == ':')
			f[0][strlen(f[0]) - 1] = '\0';
		if (cparse_double(f[1], &v)) {
			rc = parse_fail(pc, "bad number %s for %s", f[1], f[0]);
			break;
		}
		parse_metric(pc, f[0], v);
	}
	lines_release(&it);
	return rc;
}
