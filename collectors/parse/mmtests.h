/*
 * mmtests.h - formats that are a directory, not a file: an mmtests results
 * tree (work/log/<run>/iter-<N>/<test>/logs/...), read into one run per
 * benchmark execution. `kperf-collect parse|import --format mmtests-sysbench DIR`.
 */
#ifndef KPERF_MMTESTS_H
#define KPERF_MMTESTS_H

#include <jansson.h>
#include <stddef.h>

/*
 * What a directory format yields: runs, an array of objects
 *   {"tag": "iter0-t4-2", "params": {"nr_threads": "4"}, "metrics": {...}}
 * (tag: unique among the runs, 1-40 of A-Za-z0-9._-, for the run_id), and
 * units and directions shared by all. Owned by the caller: dir_runs_release.
 */
struct dir_runs {
	json_t *runs;
	json_t *units;
	json_t *directions;
};

/* Reads dir into out (appending); returns 0, or -1 with err set ("path:line: ..."). */
typedef int (*dir_read_fn)(const char *dir, struct dir_runs *out, char *err, size_t errsz);

struct dir_format {
	const char *format; /* --format */
	const char *suite;  /* test.suite of its runs */
	dir_read_fn read;
	const char *what;   /* one line for `formats` */
};

/* The table, ended by a row whose format is NULL. */
extern const struct dir_format dir_formats[];
/* The directory format called name, or NULL. */
const struct dir_format *dir_format_find(const char *name);

void dir_runs_init(struct dir_runs *r);
void dir_runs_release(struct dir_runs *r);

/*
 * mmtests' sysbench shellpack: every sysbench-raw-<threads>-<i> file under
 * dir (at most 8 levels down, symlinks not followed) is one execution of
 * sysbench: one run with params nr_threads=<threads>, metrics from the
 * sysbench parser, tagged iter<N>-t<threads>-<i> where N comes from the
 * nearest iter-<N> directory (0 without one). Fails when there is none, when
 * one is compressed, or when one holds no sysbench results.
 */
int mmtests_sysbench_read(const char *dir, struct dir_runs *out, char *err, size_t errsz);

#endif
