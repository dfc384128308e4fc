/*
 * import.h - `kperf-collect parse` and `kperf-collect import`: existing
 * benchmark outputs (files) into run documents, printed or delivered.
 */
#ifndef KPERF_IMPORT_H
#define KPERF_IMPORT_H

#include "collectors/base/config.h"
#include "collectors/deliver/rundoc.h"

struct import_opts {
	struct run_meta meta; /* meta.suite defaults to the format's suite */
	const char *format;
	char **files;         /* NULL-terminated; each file is one iteration, or each a
				 directory for a directory format (mmtests.h) */
	int deliver;          /* 0: parse (print JSON), 1: import (post or spool) */
};

/*
 * Parse the files and print the run(s) as JSON (one run object, or
 * {"runs": [...]} when a format yields several) or deliver each. The runs of
 * a matrix or directory format get run_ids "<run_id>.<tag>". Returns the
 * exit status: 0; 65 when a file is malformed (message names file and line);
 * 64 for a bad command line; 75 when a run was neither posted nor spooled.
 */
int import_command(const struct collect_config *c, const struct import_opts *o);

#endif
