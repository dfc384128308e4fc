/*
 * test_command.c - the work arguments of the command lines the reviewer's
 * first hour ran (sysbench, stress-ng, fio), and what differs between two.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "lib/command.h"

static void expect_args(const char *cmdline, const char *want)
{
	struct buf b = BUF_INIT;
	command_work_args(cmdline, &b);
	cr_expect_str_eq(buf_str(&b), want, "%s", cmdline);
	buf_release(&b);
}

Test(command, work_arguments)
{
	expect_args("sysbench --threads=2 --time=3 cpu run", "threads=2 time=3");
	expect_args("sysbench cpu --time=2 run", "time=2");
	expect_args("stress-ng --vm 1 --timeout 3s --metrics-brief", "timeout=3s vm=1");
	expect_args("stress-ng --vm 2 --vm-bytes 256M --timeout 2s", "timeout=2s vm-bytes=256M vm=2");
	expect_args("fio --name=rr --rw=randread --bs=4k --size=64M --runtime=3 --numjobs=2"
		    " --output-format=json",
		    "numjobs=2 runtime=3 size=64M");
	expect_args("pgbench -c 4 -j 2 -T 10 -S bench", "T=10 c=4 j=2");
	expect_args("redis-benchmark -n 10000 -q --csv", "n=10000");
	expect_args("hackbench -t4 -l 100", "l=100 t=4");
	expect_args("build/readtwice --procs 4 --size-mb 256", "procs=4 size-mb=256");
	/* quoted words are one word; a negative number is a value */
	expect_args("fio --name 'rand read' --time \"3\"", "time=3");
	expect_args("x --count -1", "count=-1");
	expect_args("", "");
	expect_args("./case-lru-file-mmap-read", "");
}

Test(command, differences)
{
	struct buf b = BUF_INIT;

	cr_assert_eq(command_work_diff("threads=2 time=3", "threads=2 time=3", &b), 0);
	cr_expect_str_eq(buf_str(&b), "");
	cr_assert_eq(command_work_diff("time=3", "time=2", &b), 1);
	cr_expect_str_eq(buf_str(&b), "time 3 -> 2");
	buf_release(&b);
	cr_assert_eq(command_work_diff("timeout=3s vm=1", "timeout=2s vm=2", &b), 2);
	cr_expect_str_eq(buf_str(&b), "timeout 3s -> 2s, vm 1 -> 2");
	buf_release(&b);
	cr_assert_eq(command_work_diff("time=3", "threads=4 time=3", &b), 1);
	cr_expect_str_eq(buf_str(&b), "threads - -> 4");
	buf_release(&b);
	cr_assert_eq(command_work_diff("numjobs=2 runtime=3", "runtime=3", &b), 1);
	cr_expect_str_eq(buf_str(&b), "numjobs 2 -> -");
	buf_release(&b);
}
