/*
 * test_kernel.c - kernel, machine and variant facts from fixture trees:
 * release, /proc/version, cmdline, the wanted options of /proc/config.gz
 * (written here with zlib, or gzip without it) and of /boot/config-<release>,
 * CPU model, sockets, memory, NUMA nodes, and the lru_gen/thp/swap/memcg
 * knobs.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef KPERF_HAVE_ZLIB
#include <zlib.h>
#endif

#include "collectors/base/cutil.h"
#include "collectors/host/kernel.h"
#include "collectors/host/knobs.h"
#include "collectors/host/machine.h"
#include "tests/collect/testutil.h"

static const char config_text[] = "#\n# Automatically generated file; DO NOT EDIT.\n"
				  "CONFIG_LRU_GEN=y\nCONFIG_LRU_GEN_ENABLED=y\n"
				  "CONFIG_MEMCG=y\n# CONFIG_LOCK_STAT is not set\n"
				  "CONFIG_TRANSPARENT_HUGEPAGE=y\nCONFIG_HZ=1000\n"
				  "CONFIG_LOCALVERSION=\"-lru\"\nCONFIG_SLUB=y\n";

static void write_gz(const char *dir, const char *rel, const char *text)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
#ifdef KPERF_HAVE_ZLIB
	{
		gzFile f = gzopen(path, "wb");
		cr_assert_not_null(f);
		cr_assert_eq(gzwrite(f, text, (unsigned)strlen(text)), (int)strlen(text));
		gzclose(f);
	}
#else
	{
		char cmd[8600];
		tu_write(dir, "config.txt", text);
		snprintf(cmd, sizeof(cmd), "gzip -c '%s/config.txt' > '%s'", dir, path);
		cr_assert_eq(system(cmd), 0);
	}
#endif
}

static void set_roots(const char *dir)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/proc", dir);
	setenv("KPERF_PROC_ROOT", p, 1);
	snprintf(p, sizeof(p), "%s/sys", dir);
	setenv("KPERF_SYS_ROOT", p, 1);
	snprintf(p, sizeof(p), "%s/boot", dir);
	setenv("KPERF_BOOT_ROOT", p, 1);
}

Test(kernel, facts_from_proc_and_config_gz)
{
	char dir[4096];
	struct kernel_facts k;

	tu_tmpdir(dir, sizeof(dir));
	tu_write(dir, "proc/sys/kernel/osrelease", "5.9.0-rc2-lru-v18\n");
	tu_write(dir, "proc/version", "Linux version 5.9.0-rc2-lru-v18 (gcc 10) #1 SMP\n");
	tu_write(dir, "proc/cmdline", "console=ttyS0 transparent_hugepage=never\n");
	write_gz(dir, "proc/config.gz", config_text);
	set_roots(dir);
	kernel_facts_read(&k);
	cr_expect_str_eq(k.release, "5.9.0-rc2-lru-v18");
	cr_expect_str_eq(k.cmdline, "console=ttyS0 transparent_hugepage=never");
	cr_expect_str_eq(k.version, "Linux version 5.9.0-rc2-lru-v18 (gcc 10) #1 SMP");
	cr_assert_not_null(k.config, "config.gz not read");
	cr_expect_str_eq(json_string_value(json_object_get(k.config, "CONFIG_LRU_GEN")), "y");
	cr_expect_str_eq(json_string_value(json_object_get(k.config, "CONFIG_LRU_GEN_ENABLED")),
			 "y");
	cr_expect_str_eq(json_string_value(json_object_get(k.config, "CONFIG_MEMCG")), "y");
	cr_expect_str_eq(json_string_value(json_object_get(k.config, "CONFIG_LOCK_STAT")), "n");
	cr_expect_str_eq(
		json_string_value(json_object_get(k.config, "CONFIG_TRANSPARENT_HUGEPAGE")), "y");
	cr_expect_str_eq(json_string_value(json_object_get(k.config, "CONFIG_HZ")), "1000");
	cr_expect_null(json_object_get(k.config, "CONFIG_SLUB"), "only the options that matter");
	kernel_facts_release(&k);
}

Test(kernel, config_from_boot_when_no_config_gz)
{
	char dir[4096];
	struct kernel_facts k;

	tu_tmpdir(dir, sizeof(dir));
	tu_write(dir, "proc/sys/kernel/osrelease", "5.14.0-mglru\n");
	tu_write(dir, "boot/config-5.14.0-mglru", "CONFIG_LRU_GEN=y\n# CONFIG_LRU_GEN_ENABLED is not set\n");
	set_roots(dir);
	kernel_facts_read(&k);
	cr_expect_str_eq(k.release, "5.14.0-mglru");
	cr_assert_not_null(k.config);
	cr_expect_str_eq(json_string_value(json_object_get(k.config, "CONFIG_LRU_GEN")), "y");
	cr_expect_str_eq(json_string_value(json_object_get(k.config, "CONFIG_LRU_GEN_ENABLED")),
			 "n");
	cr_expect_null(k.cmdline, "no /proc/cmdline in this tree");
	kernel_facts_release(&k);
}

Test(kernel, machine_facts)
{
	char dir[4096];
	struct machine_facts m;
	json_t *j;

	tu_tmpdir(dir, sizeof(dir));
	tu_write(dir, "proc/cpuinfo",
		 "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) CPU E7-8890 v4 @ 2.20GHz\n"
		 "physical id\t: 0\n\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) CPU E7-8890 "
		 "v4 @ 2.20GHz\nphysical id\t: 1\n\nprocessor\t: 2\nphysical id\t: 1\n\n");
	tu_write(dir, "proc/meminfo", "MemTotal:       262144000 kB\nMemFree: 1 kB\n");
	tu_write(dir, "sys/devices/system/node/node0/cpulist", "0\n");
	tu_write(dir, "sys/devices/system/node/node1/cpulist", "1-2\n");
	tu_write(dir, "sys/devices/system/node/possible", "0-1\n");
	set_roots(dir);
	cr_assert_eq(machine_facts_read(&m, "lkp bdw/ex2"), 0);
	cr_expect_str_eq(m.name, "lkp-bdw-ex2", "name cleaned to A-Za-z0-9._-");
	cr_expect_str_eq(m.cpu_model, "Intel(R) Xeon(R) CPU E7-8890 v4 @ 2.20GHz");
	cr_expect_eq(m.nr_cpus, 3);
	cr_expect_eq(m.sockets, 2);
	cr_expect_eq(m.memory_mb, 256000);
	cr_expect_eq(m.numa_nodes, 2);
	j = machine_json(&m);
	cr_expect_eq(json_integer_value(json_object_get(j, "nr_cpus")), 3);
	json_decref(j);
	cr_expect_eq(machine_facts_read(&m, "///"), 0);
	cr_expect_str_eq(m.name, "---");
}

Test(kernel, variant_knobs_and_environment)
{
	static const struct {
		const char *lru_gen, *thp, *swaps, *cgroups;
		const char *want_lru_gen, *want_thp, *want_swap, *want_memcg;
	} rows[] = {
		{"0x0007\n", "always [madvise] never\n",
		 "Filename\tType\tSize\tUsed\tPriority\n/dev/sda2 partition 8388604 0 -2\n",
		 "#subsys_name\thierarchy\tnum_cgroups\tenabled\nmemory\t0\t120\t1\n", "on", "madvise",
		 "on", "on"},
		{"0x0000\n", "always madvise [never]\n", "Filename\tType\tSize\tUsed\tPriority\n",
		 "#subsys_name\thierarchy\tnum_cgroups\tenabled\nmemory\t0\t1\t0\n", "off", "never",
		 "off", "off"},
		{NULL, "[always] madvise never\n", NULL, NULL, NULL, "always", NULL, NULL},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char dir[4096];
		json_t *v, *env;

		tu_tmpdir(dir, sizeof(dir));
		if (rows[i].lru_gen)
			tu_write(dir, "sys/kernel/mm/lru_gen/enabled", rows[i].lru_gen);
		tu_write(dir, "sys/kernel/mm/transparent_hugepage/enabled", rows[i].thp);
		tu_write(dir, "sys/kernel/mm/transparent_hugepage/defrag", "[defer] never\n");
		if (rows[i].swaps)
			tu_write(dir, "proc/swaps", rows[i].swaps);
		if (rows[i].cgroups)
			tu_write(dir, "proc/cgroups", rows[i].cgroups);
		tu_write(dir, "proc/sys/vm/swappiness", "60\n");
		set_roots(dir);
		v = knobs_variant();
		if (rows[i].want_lru_gen)
			cr_expect_str_eq(json_string_value(json_object_get(v, "lru_gen")),
					 rows[i].want_lru_gen, "row %zu", i);
		else
			cr_expect_null(json_object_get(v, "lru_gen"), "row %zu", i);
		cr_expect_str_eq(json_string_value(json_object_get(v, "thp")), rows[i].want_thp);
		if (rows[i].want_swap)
			cr_expect_str_eq(json_string_value(json_object_get(v, "swap")),
					 rows[i].want_swap, "row %zu", i);
		if (rows[i].want_memcg)
			cr_expect_str_eq(json_string_value(json_object_get(v, "memcg")),
					 rows[i].want_memcg, "row %zu", i);
		env = knobs_environment("Linux version x");
		cr_expect_str_eq(json_string_value(json_object_get(env, "sysctl.vm.swappiness")), "60");
		cr_expect_str_eq(json_string_value(json_object_get(env, "thp.defrag")), "defer");
		cr_expect_str_eq(json_string_value(json_object_get(env, "kernel.version")),
				 "Linux version x");
		json_decref(v);
		json_decref(env);
	}
}
