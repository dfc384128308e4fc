/*
 * command.h - the arguments of a benchmark's command line that set how much
 * work it does (duration, threads, processes, sizes, counts). Two runs whose
 * commands differ in one of them measured different work: that is no
 * kernel change. Shared by kperfd and kperf-collect.
 */
#ifndef KPERF_COMMAND_H
#define KPERF_COMMAND_H

#include "lib/buf.h"

/*
 * The work arguments of cmdline into out, "name=value" each, sorted and
 * joined by ' ' (e.g. "threads=2 time=3" of "sysbench --threads=2 --time=3
 * cpu run"); names lose their leading dashes, an option of the form
 * "-t 4" keeps its letter ("t=4"). Empty when there are none.
 */
void command_work_args(const char *cmdline, struct buf *out);

/*
 * What differs between two work-argument strings of command_work_args, as
 * "time 3 -> 2, threads 1 -> 2" ("-" for absent) into out; 0 when they are
 * the same, else the number of arguments that differ.
 */
int command_work_diff(const char *base, const char *target, struct buf *out);

#endif
