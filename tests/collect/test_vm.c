/*
 * test_vm.c - what the kernel lab reads (collectors/kernel/): the guest's
 * serial console split into its sections, the compiler's lines of a failed
 * Kbuild run, the name of a guest's shape. The end to end on a real kernel
 * is tests/kernel/ (make test-kernel).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/kernel/kbuild.h"
#include "collectors/kernel/vm.h"
#include "tests/collect/testutil.h"

struct seen {
	char names[16][64];
	char bodies[16][512];
	int n;
};

static void keep(void *arg, const char *name, const char *body, size_t n)
{
	struct seen *s = arg;
	cr_assert_lt(s->n, 16);
	snprintf(s->names[s->n], sizeof(s->names[0]), "%s", name);
	snprintf(s->bodies[s->n], sizeof(s->bodies[0]), "%.*s", (int)n, body);
	s->n++;
}

/* A serial console as QEMU's TCG guest prints it: the kernel's lines first,
 * CR LF line ends, a blank line before each marker. */
static const char console[] =
    "SeaBIOS (version 1.16.2-debian-1.16.2-1)\r\n"
    "[    0.000000] Linux version 6.1.158-g0123456789ab (gcc) #1 SMP\r\n"
    "[    1.201000] Run /init as init process\r\n"
    "\r\n@@kperf release\r\n6.1.158-g0123456789ab\r\n"
    "\r\n@@kperf before-vmstat\r\nnr_free_pages 230000\r\npgfault 1200\r\n"
    "\r\n@@kperf output\r\n"
    "readtwice: 1 processes, 67108864 bytes each, file cache dropped with posix_fadvise\r\n"
    "readtwice: total: 1 processes, 67108864 bytes in 0.120 s: 1118.48 MB/s\r\n"
    "\r\n@@kperf after-vmstat\r\nnr_free_pages 213000\r\npgfault 17700\r\n"
    "\r\n@@kperf status\r\n0\r\n"
    "\r\n@@kperf end\r\n"
    "[    3.900000] reboot: Power down\r\n";

Test(vm, serial_console_sections)
{
	struct seen s = {0};

	cr_assert_eq(vm_sections(console, strlen(console), keep, &s), 6);
	cr_assert_str_eq(s.names[0], "release");
	cr_assert_str_eq(s.bodies[0], "6.1.158-g0123456789ab");
	cr_assert_str_eq(s.names[1], "before-vmstat");
	cr_assert_str_eq(s.bodies[1], "nr_free_pages 230000\npgfault 1200");
	cr_assert_str_eq(s.names[2], "output");
	cr_assert_str_eq(s.bodies[2],
			 "readtwice: 1 processes, 67108864 bytes each, file cache dropped with "
			 "posix_fadvise\nreadtwice: total: 1 processes, 67108864 bytes in 0.120 s: "
			 "1118.48 MB/s");
	cr_assert_str_eq(s.names[4], "status");
	cr_assert_str_eq(s.bodies[4], "0");
	/* the kernel's power-down line after the last marker belongs to "end" */
	cr_assert_str_eq(s.names[5], "end");
	cr_assert_str_eq(s.bodies[5], "[    3.900000] reboot: Power down");
}

Test(vm, a_console_cut_short_has_no_end)
{
	struct seen s = {0};
	const char cut[] = "[    0.5] Linux version\r\n\r\n@@kperf release\r\n6.1.0\r\n\r\n@@kperf out";

	cr_assert_eq(vm_sections(cut, strlen(cut), keep, &s), 2);
	cr_assert_str_eq(s.names[1], "out");
	cr_assert_str_eq(s.bodies[1], "");
	cr_assert_eq(vm_sections("no marker at all\r\n", 18, keep, &s), 0);
}

/* gcc 12's own words for mm/swap.c with "int kperf_broken = ;" (Kbuild's
 * output around them as make -j2 prints it). */
static const char failed_build[] =
    "  CC      mm/filemap.o\n"
    "  CC      mm/swap.o\n"
    "../mm/swap.c: In function 'folio_mark_accessed':\n"
    "../mm/swap.c:439:28: error: expected expression before ';' token\n"
    "  439 |         int kperf_broken = ;\n"
    "      |                            ^\n"
    "../mm/swap.c:439:13: warning: unused variable 'kperf_broken' [-Wunused-variable]\n"
    "make[3]: *** [../scripts/Makefile.build:250: mm/swap.o] Error 1\n"
    "make[2]: *** [../scripts/Makefile.build:500: mm] Error 2\n"
    "ld: vmlinux.o: in function `start_kernel':\n"
    "main.c:(.init.text+0x9d): undefined reference to `kperf_missing'\n";

Test(kbuild, the_compilers_error_lines)
{
	struct buf b = BUF_INIT;

	cr_assert_eq(kbuild_error_lines(failed_build, strlen(failed_build), "../", &b), 3);
	cr_assert_str_eq(buf_str(&b),
			 "mm/swap.c: In function 'folio_mark_accessed':\n"
			 "mm/swap.c:439:28: error: expected expression before ';' token\n"
			 "main.c:(.init.text+0x9d): undefined reference to `kperf_missing'\n");
	buf_reset(&b);
	cr_assert_eq(kbuild_error_lines("  CC mm/swap.o\n  LD vmlinux\n", 26, NULL, &b), 0);
	buf_release(&b);
}

Test(kbuild, at_most_the_limit_of_lines)
{
	struct buf in = BUF_INIT, out = BUF_INIT;

	for (int i = 0; i < 100; i++)
		buf_printf(&in, "mm/x.c:%d:1: error: no\n", i + 1);
	cr_assert_eq(kbuild_error_lines(buf_str(&in), in.len, NULL, &out), KBUILD_ERROR_LINES_MAX);
	cr_assert(strstr(buf_str(&out), "mm/x.c:30:1: error") && !strstr(buf_str(&out), "mm/x.c:31:"));
	buf_release(&in);
	buf_release(&out);
}

Test(vm, shape_names_the_guest)
{
	struct vm_opts o = {0};
	struct vm_shape s;
	char text[96];

	o.accel = "tcg";
	o.icount = 1;
	o.cpus = 4; /* icount runs one CPU: the guest hangs at boot with two */
	vm_shape_of(&o, &s);
	vm_shape_text(&s, text, sizeof(text));
	cr_assert_str_eq(text, "tcg-icount-1cpu-1024M");
	o.accel = "kvm"; /* icount is TCG's */
	o.memory_mb = 2048;
	vm_shape_of(&o, &s);
	vm_shape_text(&s, text, sizeof(text));
	cr_assert_str_eq(text, "kvm-4cpu-2048M");
}

/* kperf.config holds what kperf reads, vm.config what the guest boots with. */
Test(kbuild, the_fragments_it_carries)
{
	cr_assert(strstr(kbuild_fragment_kperf, "\nCONFIG_LOCALVERSION_AUTO=y\n"));
	cr_assert(strstr(kbuild_fragment_kperf, "\nCONFIG_LRU_GEN=y\n"));
	cr_assert(strstr(kbuild_fragment_kperf, "\nCONFIG_MEMCG=y\n"));
	cr_assert(strstr(kbuild_fragment_kperf, "\nCONFIG_PERF_EVENTS=y\n"));
	cr_assert(strstr(kbuild_fragment_vm, "\nCONFIG_SERIAL_8250_CONSOLE=y\n"));
	cr_assert(strstr(kbuild_fragment_vm, "\nCONFIG_ACPI=y\n"));
}

/*
 * agent --check with --kernel-build and --vm: what a lab's kernel setup
 * lacks, a line each, and exit 65 when anything does. A git tree whose
 * Makefile says 6.1, a lab config that turns memcg off (kperf.config turns
 * it back on, and says so), a busybox that is not static, no QEMU.
 */
Test(kbuild, check_names_each_part_of_the_kernel_setup)
{
	char dir[512], cmd[4096], tree[700], build[700], cat[700], config[700], bb[700];
	char *out, *err;
	int st;

	tu_tmpdir(dir, sizeof(dir));
	snprintf(tree, sizeof(tree), "%s/linux", dir);
	tu_write(tree, "Makefile", "# SPDX-License-Identifier: GPL-2.0\nVERSION = 6\nPATCHLEVEL = 1\n"
				   "SUBLEVEL = 0\n");
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && git init -q && git add Makefile && git -c user.name=t -c user.email=t@t"
		 " commit -q -m 'Linux 6.1' && cd '%s' && printf 'int main(void) { return 0; }\\n' |"
		 " cc -static -x c -o static-true - && printf 'int main(void) { return 0; }\\n' |"
		 " cc -x c -o dynamic-true -",
		 tree, dir);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	tu_write(dir, "catalogue", "[t]\nsuite = readtwice\ncommand = /bin/true\n");
	tu_write(dir, "lab.config", "CONFIG_SMP=y\n# CONFIG_MEMCG is not set\n");
	snprintf(cat, sizeof(cat), "%s/catalogue", dir);
	snprintf(config, sizeof(config), "%s/lab.config", dir);
	snprintf(build, sizeof(build), "%s/build", dir);
	snprintf(bb, sizeof(bb), "%s/dynamic-true", dir);
	{
		const char *args[] = {"agent", "--catalogue", cat, "--check", "--tree", tree,
				      "--kernel-build", build, "--kernel-config", config, "--vm",
				      "--vm-accel", "tcg", "--qemu", "/nonexistent/qemu", "--busybox",
				      bb, NULL};
		st = tu_collect(args, NULL, &out, &err);
	}
	cr_assert_eq(st, 65, "exit %d\n%s%s", st, out, err);
	cr_assert(strstr(out, "kernel: tree "), "%s", out);
	cr_assert(strstr(out, "/linux: Linux 6.1, HEAD "), "%s", out);
	cr_assert(strstr(out, "kernel: compiler gcc"), "%s", out);
	cr_assert(strstr(out, "lab.config with kperf.config and vm.config on top\n"), "%s", out);
	cr_assert(strstr(out, "kernel: note: kperf.config sets CONFIG_MEMCG=y over the lab config's n\n"),
		  "%s", out);
	cr_assert_null(strstr(out, "CONFIG_SMP=y over"), "%s", out);
	cr_assert(strstr(out, "vm: problem: /nonexistent/qemu --version cannot be run"), "%s", out);
	cr_assert(strstr(out, "vm: guest tcg-2cpu-1024M"), "%s", out);
	cr_assert(strstr(out, "dynamic-true is not static"), "%s", out);
	cr_assert(strstr(err, "--check: 2 problems in the kernel setup"), "%s", err);
	free(out);
	free(err);

	/* a static busybox and no tree: the tree is the one problem */
	snprintf(bb, sizeof(bb), "%s/static-true", dir);
	{
		const char *args[] = {"agent", "--catalogue", cat, "--check", "--tree", dir,
				      "--kernel-build", build, "--vm", "--vm-accel", "tcg",
				      "--vm-icount", "--qemu", "/bin/true", "--busybox", bb, NULL};
		st = tu_collect(args, NULL, &out, &err);
	}
	cr_assert_eq(st, 65, "exit %d\n%s%s", st, out, err);
	cr_assert(strstr(out, "is not a git tree with a commit") ||
		      strstr(out, "no Linux tree (no VERSION in its Makefile)"),
		  "%s", out);
	cr_assert(strstr(out, "kernel: config tinyconfig with kperf.config and vm.config on top\n"),
		  "%s", out);
	cr_assert(strstr(out, "vm: guest tcg-icount-1cpu-1024M\n"), "%s", out);
	cr_assert(strstr(out, "static-true: static\n"), "%s", out);
	cr_assert(strstr(err, "--check: 1 problem in the kernel setup"), "%s", err);
	free(out);
	free(err);
}
