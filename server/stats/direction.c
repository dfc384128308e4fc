/*
 * direction.c - metric directions from their names: the table of globs in
 * DESIGN.md ("Samples and directions"); lower-is-better patterns win.
 */
#include <fnmatch.h>
#include <string.h>

#include "server/stats/direction.h"

static const char *const lower_better[] = {
	"perf-profile.*", "lock_stat.*", "*latency*", "*.time.*", "*_time", "*elapsed*", NULL,
};

static const char *const higher_better[] = {
	"*.throughput", "*.median", "*_ops", "*/s", "*.tps", "*_per_sec", NULL,
};

static int any_match(const char *const *globs, const char *name)
{
	for (; *globs; globs++)
		if (fnmatch(*globs, name, 0) == 0)
			return 1;
	return 0;
}

enum direction direction_of_name(const char *metric)
{
	if (any_match(lower_better, metric))
		return DIR_LOWER;
	if (any_match(higher_better, metric))
		return DIR_HIGHER;
	return DIR_NONE;
}

enum direction direction_parse(const char *s, enum direction dflt)
{
	if (!s)
		return dflt;
	if (!strcmp(s, "higher"))
		return DIR_HIGHER;
	if (!strcmp(s, "lower"))
		return DIR_LOWER;
	if (!strcmp(s, "none"))
		return DIR_NONE;
	return dflt;
}

const char *direction_name(enum direction d)
{
	return d == DIR_HIGHER ? "higher" : d == DIR_LOWER ? "lower" : "none";
}
