/*
 * parse_hackbench.c - hackbench (rt-tests) into hackbench.time (s, one value
 * per "Time:" line, as LKP's job repeats the program in one output) and
 * hackbench.throughput (KB/s, LKP's figure: (tasks * messages * bytes) >> 10
 * divided by that time). A run cut before its "Time:" line is an error.
 */
#include <stdio.h>
#include <string.h>

#include "collectors/base/cutil.h"
#include "collectors/parse/parse.h"

/* The number after prefix at s, up to the next blank; -1 when none. */
static int after(const char *s, const char *prefix, double *out)
{
	const char *p = strstr(s, prefix);
	size_t n = 0;

	if (!p)
		return -1;
	p += strlen(prefix);
	while (p[n] && p[n] != ' ' && p[n] != ')')
		n++;
	return cparse_double_n(p, n, out);
}

int parse_hackbench(struct parse_ctx *pc, const char *text, size_t len)
{
	double tasks = 0, messages = 0, bytes = 0;
	size_t open_at = 0;
	int rc = 0;
	struct lines it;
	char *line;

	lines_init(&it, text, len);
	while (!rc && (line = lines_next(&it))) {
		double t;

		pc->line = it.no;
		if (!strncmp(line, "Running in ", 11)) {
			/* "Running in process mode with 4 groups using 40 file descriptors
			 * each (== 160 tasks)" */
			if (after(line, "(== ", &tasks) || tasks < 1)
				rc = parse_fail(pc, "expected \"(== N tasks)\"");
			messages = bytes = 0;
			open_at = it.no;
		} else if (!strncmp(line, "Each sender ", 12)) {
			/* "will pass 200 messages of 100 bytes" or "passed ... in average" */
			const char *m = strstr(line, " pass ") ? " pass " : " passed ";
			if (after(line, m, &messages) || after(line, " messages of ", &bytes))
				rc = parse_fail(pc, "expected \"Each sender will pass N messages of B "
						    "bytes\"");
		} else if (!strncmp(line, "Time:", 5)) {
			if (cparse_double(line + 5, &t) || t < 0)
				rc = parse_fail(pc, "\"%s\": not a time in seconds", line);
			else {
				parse_metric_as(pc, "time", t, "s", "lower");
				if (tasks > 0 && messages > 0 && bytes > 0 && t > 0 &&
				    tasks * messages * bytes < 9e18) {
					long long kb = (long long)(tasks * messages * bytes) >> 10;
					parse_metric_as(pc, "throughput", (double)kb / t, "KB/s",
							"higher");
				}
			}
			open_at = 0;
		}
	}
	if (!rc && open_at)
		rc = parse_fail(pc, "the run of line %zu has no \"Time:\" line: truncated output?",
				open_at);
	lines_release(&it);
	return rc;
}
