/*
 * cutil.h - the collector's process-wide basics: allocation that aborts on
 * OOM, messages on stderr, bounded number parsing, whole-file reads and the
 * overridable roots of /proc, /sys and /boot. Allocation comes from lib/.
 */
#ifndef KPERF_CUTIL_H
#define KPERF_CUTIL_H

#include <stddef.h>
#include <stdint.h>
/* Before banned.h, whose macros would break their declarations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Allocators: never return NULL; print a message and abort when memory is exhausted. */

/* "kperf-collect: <msg>" on stderr. warn_msg for notes, err_msg for failures. */
void warn_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void err_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Parse a whole decimal integer in [min, max] (surrounding blanks allowed).
 * Returns 0 and sets *out, or -1 when s is empty, has other characters or is
 * out of range.
 */
int cparse_int64(const char *s, int64_t min, int64_t max, int64_t *out);
/* Parse a whole finite decimal number; 0 or -1 like cparse_int64. */
int cparse_double(const char *s, double *out);
/* Parse the n bytes at s as a finite decimal number; 0 or -1. */
int cparse_double_n(const char *s, size_t n, double *out);

/*
 * Read a whole file (at most max bytes; more is an error) into a malloc'd,
 * NUL-terminated string the caller frees. Returns NULL with errno set when it
 * cannot be read.
 */
char *read_file(const char *path, size_t max, size_t *len);

/* Write len bytes to path via a temporary file, fsync and rename: 0 or -1 (errno). */
int write_file_atomic(const char *path, const char *data, size_t len);

/*
 * The roots of the kernel's file systems, so tests can point the collector at
 * fixture trees: $KPERF_PROC_ROOT (default /proc), $KPERF_SYS_ROOT (/sys),
 * $KPERF_BOOT_ROOT (/boot). Returned strings are static.
 */
const char *root_proc(void);
const char *root_sys(void);
const char *root_boot(void);

/* Strip leading and trailing white space in place; returns s. */
char *str_trim(char *s);

/* A growable array of doubles; DVEC_INIT or zeroed; dvec_release frees. */
struct dvec {
	double *v;
	size_t n, cap;
};
#define DVEC_INIT {NULL, 0, 0}
void dvec_push(struct dvec *d, double x);
void dvec_release(struct dvec *d);
/* Mean (Kahan-Babuska sum / n) and population standard deviation; 0 when empty. */
double dvec_mean(const struct dvec *d);
double dvec_pstddev(const struct dvec *d);

/* Kahan-Babuska summation of n doubles (what Ruby's Array#sum does). */
double sum_kb(const double *v, size_t n);

#include "lib/util.h" /* allocation: xmalloc & co., shared with kperfd */
#include "lib/banned.h"

/* Exit status of a command as a shell reports it: 128 + signal when killed. */
int exit_status_of(int wait_status);

/*
 * Line iteration over a text that need not end in a newline and may hold
 * NUL bytes (they end the line early). Each line is copied NUL-terminated
 * without its newline (and without a trailing '\r').
 */
struct lines {
	const char *p, *end;
	size_t no; /* number of the line last returned, from 1 */
	char *buf;
	size_t cap;
};
void lines_init(struct lines *it, const char *text, size_t len);
/* Returns the next line (owned by the iterator) or NULL at the end. */
char *lines_next(struct lines *it);
void lines_release(struct lines *it);

#endif
