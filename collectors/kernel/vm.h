/*
 * vm.h - a kernel image booted in QEMU to run one iteration of a test: the
 * guest is an initramfs of busybox-static, an /init script and the test's
 * static program; it prints its counters, the test's output and exit status
 * between marker lines on the serial console, and powers off. No disk, no
 * network. KVM when /dev/kvm can be opened, else TCG; with icount the
 * guest's clock counts instructions, so its timings do not move with the
 * host's load. The agent's --vm; `kperf-collect run` iterations call it.
 */
#ifndef KPERF_VM_H
#define KPERF_VM_H

#include <stddef.h>
#include <stdio.h>

#include "collectors/host/proc.h"
#include "lib/buf.h"

#define VM_DEFAULT_QEMU "qemu-system-x86_64"
#define VM_DEFAULT_BUSYBOX "/bin/busybox"
#define VM_DEFAULT_MEMORY_MB 1024
/* Seconds from QEMU's start to the guest's power-off: boot (4 s under TCG
 * with icount) and one iteration. */
#define VM_DEFAULT_TIMEOUT_S 600
/* Bytes of the serial console kept (a failure quotes its end). */
#define VM_SERIAL_MAX (4u << 20)
#define VM_CPUS_MAX 256
#define VM_MEMORY_MB_MAX (1024 * 1024)

struct vm_opts {
	const char *qemu;    /* NULL: VM_DEFAULT_QEMU from $PATH */
	const char *busybox; /* a static busybox; NULL: VM_DEFAULT_BUSYBOX */
	const char *accel;   /* "kvm", "tcg" or NULL: kvm when /dev/kvm opens */
	long cpus;           /* <= 0: 2, or 1 with icount */
	long memory_mb;      /* <= 0: VM_DEFAULT_MEMORY_MB */
	int icount;          /* -icount shift=0,sleep=off (TCG only, one CPU) */
	long timeout_s;      /* <= 0: VM_DEFAULT_TIMEOUT_S */
	const char *workdir; /* scratch: the initramfs and the serial log */
};

/* The accelerator, CPUs and memory o resolves to. */
struct vm_shape {
	char accel[8];
	long cpus, memory_mb;
	int icount;
};
void vm_shape_of(const struct vm_opts *o, struct vm_shape *s);
/* "tcg-icount-1cpu-1024M": what a run's variant says of the guest. */
void vm_shape_text(const struct vm_shape *s, char *out, size_t outsz);

/* What one boot brought out. */
struct vm_iteration {
	struct buf output;        /* the test's stdout and stderr */
	char release[128];        /* the guest's uname -r */
	int status;               /* the test's exit status */
	struct snapshot before, after; /* the guest's counters around the test */
	double seconds;           /* QEMU's start to its exit, host wall time */
	double boot_seconds;      /* QEMU's start to the guest's /init (its first
				   * "@@kperf" line), host wall time; 0: never */
	char serial_log[4200];    /* where the whole serial console was kept */
};
void vm_iteration_init(struct vm_iteration *it);
void vm_iteration_release(struct vm_iteration *it);

/*
 * Boot image with kernel command line extras none, run argv (argv[0] a
 * static program on this machine, copied into the guest; the other words
 * as they are) once, and fill it. Returns 0 when the guest reported the
 * test's end (it->status says how the test exited); -1 with why naming what
 * went wrong: QEMU missing or failing, a boot that did not reach /init or
 * hung (the timeout), a kernel panic (its line), and where the serial log
 * is kept.
 */
int vm_run(const struct vm_opts *o, const char *image, char *const *argv,
	   struct vm_iteration *it, char *why, size_t whysz);

/*
 * Split a serial console's text into the guest's sections: each starts at
 * a line "@@kperf NAME" and ends at the next. Calls fn for each with its
 * lines (without '\r', joined by '\n'); lines before the first marker
 * (the kernel's own) are skipped. Returns the number of sections.
 */
int vm_sections(const char *text, size_t len,
		void (*fn)(void *arg, const char *name, const char *body, size_t n), void *arg);

/*
 * What a VM lab needs, said on out a line each (agent --check): QEMU and its
 * version, the accelerator and the guest's shape, a static busybox for the
 * initramfs. Returns how many problems it found.
 */
int vm_check(const struct vm_opts *o, FILE *out);

#endif
