/*
 * vm.c - one iteration of a test in a QEMU guest (see vm.h).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collectors/base/cutil.h"
#include "collectors/base/runcmd.h"
#include "collectors/kernel/vm.h"
#include "lib/banned.h"
#include "lib/util.h"

/*
 * The guest's /init: mounts, a memory cgroup of its own, the counters
 * before and after the test, the test's output and status, each after a
 * "@@kperf NAME" line; then power-off, which ends QEMU. Its argument words
 * are in /kperf/argv, shell-quoted by the host.
 */
static const char guest_init[] =
	"#!/bin/busybox sh\n"
	"/bin/busybox mkdir -p /proc /sys /dev /tmp /bin\n"
	"/bin/busybox --install -s /bin\n"
	"export PATH=/kperf/bin:/bin\n"
	"mount -t proc proc /proc\n"
	"mount -t sysfs sysfs /sys\n"
	"mount -t devtmpfs devtmpfs /dev 2>/dev/null\n"
	"mount -t tmpfs tmpfs /tmp\n"
	"cg=\n"
	"if mkdir -p /sys/fs/cgroup && mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null; then\n"
	"  echo +memory > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null\n"
	"  mkdir -p /sys/fs/cgroup/kperf && echo $$ > /sys/fs/cgroup/kperf/cgroup.procs &&\n"
	"    [ -r /sys/fs/cgroup/kperf/memory.stat ] && cg=/sys/fs/cgroup/kperf/memory.stat\n"
	"fi\n"
	"mark() { echo; echo \"@@kperf $1\"; }\n"
	"snap() {\n"
	"  mark $1-vmstat; cat /proc/vmstat\n"
	"  mark $1-meminfo; cat /proc/meminfo\n"
	"  [ -n \"$cg\" ] && { mark $1-memory.stat; cat $cg; }\n"
	"  [ -r /proc/lock_stat ] && { mark $1-lock_stat; cat /proc/lock_stat; }\n"
	"}\n"
	"mark release; uname -r\n"
	"snap before\n"
	"mark output\n"
	"eval \"set -- $(cat /kperf/argv)\"\n"
	"cd /tmp && \"$@\" 2>&1\n"
	"st=$?\n"
	"snap after\n"
	"mark status; echo $st\n"
	"mark end\n"
	"poweroff -f\n";

void vm_shape_of(const struct vm_opts *o, struct vm_shape *s)
{
	int fd;

	memset(s, 0, sizeof(*s));
	if (o->accel && *o->accel) {
		snprintf(s->accel, sizeof(s->accel), "%s", o->accel);
	} else {
		fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
		snprintf(s->accel, sizeof(s->accel), "%s", fd >= 0 ? "kvm" : "tcg");
		if (fd >= 0)
			close(fd);
	}
	s->icount = o->icount && !strcmp(s->accel, "tcg");
	s->cpus = s->icount ? 1 : o->cpus > 0 ? o->cpus : 2;
	s->memory_mb = o->memory_mb > 0 ? o->memory_mb : VM_DEFAULT_MEMORY_MB;
}

void vm_shape_text(const struct vm_shape *s, char *out, size_t outsz)
{
	snprintf(out, outsz, "%s%s-%ldcpu-%ldM", s->accel, s->icount ? "-icount" : "", s->cpus,
		 s->memory_mb);
}

void vm_iteration_init(struct vm_iteration *it)
{
	memset(it, 0, sizeof(*it));
	buf_init(&it->output);
	it->status = -1;
}

void vm_iteration_release(struct vm_iteration *it)
{
	buf_release(&it->output);
	snapshot_release(&it->before);
	snapshot_release(&it->after);
}

int vm_sections(const char *text, size_t len,
		void (*fn)(void *arg, const char *name, const char *body, size_t n), void *arg)
{
	struct buf body = BUF_INIT;
	struct lines it;
	char name[64] = "", *line;
	int n = 0;

	lines_init(&it, text, len);
	for (;;) {
		line = lines_next(&it);
		if (!line || !strncmp(line, "@@kperf ", 8)) {
			if (name[0]) {
				/* the blank line the guest prints before each marker */
				if (body.len && body.data[body.len - 1] == '\n')
					body.len--;
				if (body.len && body.data[body.len - 1] == '\n')
					body.len--;
				fn(arg, name, buf_str(&body), body.len);
				n++;
			}
			if (!line)
				break;
			snprintf(name, sizeof(name), "%s", line + 8);
			buf_reset(&body);
			continue;
		}
		if (name[0]) {
			buf_puts(&body, line);
			buf_putc(&body, '\n');
		}
	}
	lines_release(&it);
	buf_release(&body);
	return n;
}

struct collected {
	struct vm_iteration *it;
	int ended, have_status;
};

static json_t **snap_field(struct snapshot *s, const char *what)
{
	if (!strcmp(what, "vmstat"))
		return &s->vmstat;
	if (!strcmp(what, "meminfo"))
		return &s->meminfo;
	if (!strcmp(what, "memory.stat"))
		return &s->memcg;
	return NULL;
}

static void on_section(void *arg, const char *name, const char *body, size_t n)
{
	struct collected *c = arg;
	struct vm_iteration *it = c->it;
	const char *dash = strchr(name, '-');

	if (!strcmp(name, "release")) {
		snprintf(it->release, sizeof(it->release), "%.*s", (int)strcspn(body, "\n"), body);
	} else if (!strcmp(name, "output")) {
		buf_reset(&it->output);
		buf_append(&it->output, body, n);
		if (n)
			buf_putc(&it->output, '\n');
	} else if (!strcmp(name, "status")) {
		c->have_status = sscanf(body, "%d", &it->status) == 1;
	} else if (!strcmp(name, "end")) {
		c->ended = 1;
	} else if (dash && (!strncmp(name, "before-", 7) || !strncmp(name, "after-", 6))) {
		struct snapshot *s = name[0] == 'b' ? &it->before : &it->after;
		json_t **f = snap_field(s, dash + 1);
		if (f) {
			json_decref(*f);
			*f = proc_kv_parse(body, n);
		} else if (!strcmp(dash + 1, "lock_stat")) {
			json_decref(s->lockstat);
			s->lockstat = snapshot_lockstat(body, n);
		}
	}
}

/* Shell-quote each word: 'it'\''s'. */
static void quote_words(char *const *argv, struct buf *out)
{
	for (size_t i = 0; argv[i]; i++) {
		buf_puts(out, i ? " '" : "'");
		for (const char *p = argv[i]; *p; p++) {
			if (*p == '\'')
				buf_puts(out, "'\\''");
			else
				buf_putc(out, *p);
		}
		buf_putc(out, '\'');
	}
	buf_putc(out, '\n');
}

static int copy_file(const char *from, const char *to, mode_t mode)
{
	size_t len;
	char *data = read_file(from, 1u << 30, &len);
	int rc;

	if (!data)
		return -1;
	rc = write_file_atomic(to, data, len);
	free(data);
	return rc ? -1 : chmod(to, mode);
}

/* sh -c script with $1 and $2; its exit status. */
static int sh(const char *script, const char *a1, const char *a2)
{
	const char *argv[] = {"sh", "-c", script, "sh", a1, a2, NULL};
	struct runcmd c;

	runcmd_init(&c);
	c.argv = argv;
	c.in = RUNCMD_IN_NULL;
	return runcmd_run(&c);
}

/* The initramfs in o->workdir/initramfs.cpio.gz for argv; argv[0] copied in. */
static int make_initramfs(const struct vm_opts *o, char *const *argv, char *out, size_t outsz,
			  char *why, size_t whysz)
{
	char root[4200], path[4400];
	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	struct buf words = BUF_INIT;
	char **guest_argv;
	size_t n = 0;
	int rc = -1;

	snprintf(root, sizeof(root), "%s/initramfs", o->workdir);
	if (sh("rm -rf \"$1\" && mkdir -p \"$1/bin\" \"$1/kperf/bin\"", root, "")) {
		snprintf(why, whysz, "cannot make %s", root);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/bin/busybox", root);
	if (copy_file(o->busybox ? o->busybox : VM_DEFAULT_BUSYBOX, path, 0755)) {
		snprintf(why, whysz, "cannot copy %s into the guest: %s (apt-get install busybox-static)",
			 o->busybox ? o->busybox : VM_DEFAULT_BUSYBOX, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/init", root);
	if (write_file_atomic(path, guest_init, strlen(guest_init)) || chmod(path, 0755)) {
		snprintf(why, whysz, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	if (strchr(argv[0], '/')) {
		snprintf(path, sizeof(path), "%s/kperf/bin/%s", root, base);
		if (copy_file(argv[0], path, 0755)) {
			snprintf(why, whysz, "cannot copy the test's program %s into the guest: %s",
				 argv[0], strerror(errno));
			return -1;
		}
	}
	while (argv[n])
		n++;
	guest_argv = xcalloc(n + 1, sizeof(*guest_argv));
	for (size_t i = 0; i < n; i++)
		guest_argv[i] = i ? argv[i] : (char *)base;
	quote_words(guest_argv, &words);
	free(guest_argv);
	snprintf(path, sizeof(path), "%s/kperf/argv", root);
	if (write_file_atomic(path, buf_str(&words), words.len)) {
		snprintf(why, whysz, "cannot write %s: %s", path, strerror(errno));
		goto out;
	}
	snprintf(out, outsz, "%s/initramfs.cpio.gz", o->workdir);
	if (sh("cd \"$1\" && find . | cpio -o -H newc --quiet | gzip -1 > \"$2.tmp\" &&"
	       " mv \"$2.tmp\" \"$2\"",
	       root, out)) {
		snprintf(why, whysz, "cannot pack the initramfs %s (cpio and gzip needed)", out);
		goto out;
	}
	rc = 0;
out:
	buf_release(&words);
	return rc;
}

/* The last line of text holding needle, into out. */
static void line_with(const char *text, size_t len, const char *needle, char *out, size_t outsz)
{
	struct lines it;
	char *line;

	out[0] = '\0';
	lines_init(&it, text, len);
	while ((line = lines_next(&it)))
		if (strstr(line, needle))
			snprintf(out, outsz, "%s", line);
	lines_release(&it);
}

/* The first "@@kperf" of the console: the guest's /init has begun. */
struct boot_watch {
	double t0, at;
	char tail[8];
	size_t ntail;
};

static void watch_boot(void *arg, int err, const char *data, size_t n)
{
	struct boot_watch *w = arg;
	char edge[12];
	size_t k = n < 6 ? n : 6;

	(void)err;
	if (w->at > 0 || !n)
		return;
	/* a marker split between two reads: the 6 bytes before, the first 6 now */
	memcpy(edge, w->tail, w->ntail);
	memcpy(edge + w->ntail, data, k);
	if (memmem(edge, w->ntail + k, "@@kperf", 7) || memmem(data, n, "@@kperf", 7)) {
		w->at = (double)now_us() / 1e6 - w->t0;
		return;
	}
	if (n >= 6) {
		memcpy(w->tail, data + n - 6, 6);
		w->ntail = 6;
	} else {
		size_t total = w->ntail + n, keep = total < 6 ? total : 6;
		memcpy(edge + w->ntail, data, n);
		memcpy(w->tail, edge + total - keep, keep);
		w->ntail = keep;
	}
}

int vm_run(const struct vm_opts *o, const char *image, char *const *argv,
	   struct vm_iteration *it, char *why, size_t whysz)
{
	struct vm_shape s;
	char initrd[4300], smp[32], mem[32], panic[512];
	const char *qargv[40];
	struct collected c = {it, 0, 0};
	struct buf serial = BUF_INIT;
	struct boot_watch bw = {0};
	struct runcmd rc;
	size_t n = 0;
	int st;
	double t0;

	if (make_initramfs(o, argv, initrd, sizeof(initrd), why, whysz))
		return -1;
	vm_shape_of(o, &s);
	snprintf(smp, sizeof(smp), "%ld", s.cpus);
	snprintf(mem, sizeof(mem), "%ldM", s.memory_mb);
	qargv[n++] = o->qemu ? o->qemu : VM_DEFAULT_QEMU;
	qargv[n++] = "-accel";
	qargv[n++] = s.accel;
	if (s.icount) {
		qargv[n++] = "-icount";
		qargv[n++] = "shift=0,sleep=off";
	}
	qargv[n++] = "-smp";
	qargv[n++] = smp;
	qargv[n++] = "-m";
	qargv[n++] = mem;
	qargv[n++] = "-nic";
	qargv[n++] = "none";
	qargv[n++] = "-display";
	qargv[n++] = "none";
	qargv[n++] = "-monitor";
	qargv[n++] = "none";
	qargv[n++] = "-serial";
	qargv[n++] = "stdio";
	qargv[n++] = "-no-reboot";
	qargv[n++] = "-kernel";
	qargv[n++] = image;
	qargv[n++] = "-initrd";
	qargv[n++] = initrd;
	qargv[n++] = "-append";
	qargv[n++] = "console=ttyS0 panic=-1 quiet loglevel=1";
	qargv[n] = NULL;
	runcmd_init(&rc);
	rc.argv = qargv;
	rc.in = RUNCMD_IN_NULL;
	rc.out = RUNCMD_OUT_CAPTURE;
	rc.err = RUNCMD_OUT_MERGE;
	rc.out_buf = &serial;
	rc.cap = VM_SERIAL_MAX;
	rc.keep_tail = 1;
	rc.timeout_ms = (o->timeout_s > 0 ? o->timeout_s : VM_DEFAULT_TIMEOUT_S) * 1000;
	rc.new_group = 1;
	t0 = (double)now_us() / 1e6;
	bw.t0 = t0;
	rc.on_output = watch_boot;
	rc.arg = &bw;
	st = runcmd_run(&rc);
	it->seconds = (double)now_us() / 1e6 - t0;
	it->boot_seconds = bw.at;
	snprintf(it->serial_log, sizeof(it->serial_log), "%s/serial.log", o->workdir);
	if (write_file_atomic(it->serial_log, buf_str(&serial), serial.len))
		it->serial_log[0] = '\0';
	vm_sections(buf_str(&serial), serial.len, on_section, &c);
	line_with(buf_str(&serial), serial.len, "Kernel panic", panic, sizeof(panic));
	if (c.ended && c.have_status) {
		buf_release(&serial);
		return 0;
	}
	if (st == 127 || st < 0)
		snprintf(why, whysz, "%s cannot be run (apt-get install qemu-system-x86): %.300s",
			 qargv[0], buf_str(&serial));
	else if (panic[0])
		snprintf(why, whysz, "the guest kernel panicked after %.0f s: %s (serial log %s)",
			 it->seconds, panic, it->serial_log);
	else if (rc.timed_out)
		snprintf(why, whysz, "the guest did not power off within %ld s%s (serial log %s)",
			 o->timeout_s > 0 ? o->timeout_s : VM_DEFAULT_TIMEOUT_S,
			 it->release[0] ? "" : ": the boot never reached /init", it->serial_log);
	else
		snprintf(why, whysz, "QEMU exited with status %d before the guest reported the test's "
			 "end%s (serial log %s)", st,
			 it->release[0] ? "" : ": the boot never reached /init", it->serial_log);
	buf_release(&serial);
	return -1;
}

/* 1 when path is an ELF executable with no interpreter (static), 0 when it
 * has one, -1 when it is no ELF file. */
static int elf_static(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;

	if (fd < 0)
		return -1;
	if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
	    !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh.e_phentsize == sizeof(ph)) {
		rc = 1;
		for (unsigned i = 0; i < eh.e_phnum; i++) {
			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
			    (ssize_t)sizeof(ph)) {
				rc = -1;
				break;
			}
			if (ph.p_type == PT_INTERP)
				rc = 0;
		}
	}
	close(fd);
	return rc;
}

int vm_check(const struct vm_opts *o, FILE *out)
{
	const char *qemu = o->qemu ? o->qemu : VM_DEFAULT_QEMU;
	const char *busybox = o->busybox ? o->busybox : VM_DEFAULT_BUSYBOX;
	const char *argv[] = {qemu, "--version", NULL};
	struct vm_shape s;
	struct runcmd r;
	struct buf b = BUF_INIT;
	char shape[64];
	int problems = 0, st;

	runcmd_init(&r);
	r.argv = argv;
	r.in = RUNCMD_IN_NULL;
	r.out = RUNCMD_OUT_CAPTURE;
	r.err = RUNCMD_OUT_MERGE;
	r.out_buf = &b;
	r.cap = 4096;
	r.timeout_ms = 30000;
	st = runcmd_run(&r);
	if (st) {
		fprintf(out, "vm: problem: %s --version %s (apt-get install qemu-system-x86)\n", qemu,
			st < 0 || st == 127 ? "cannot be run" : "fails");
		problems++;
	} else {
		fprintf(out, "vm: %.*s\n", (int)strcspn(buf_str(&b), "\r\n"), buf_str(&b));
	}
	buf_release(&b);
	vm_shape_of(o, &s);
	vm_shape_text(&s, shape, sizeof(shape));
	if (!strcmp(s.accel, "kvm") && access("/dev/kvm", R_OK | W_OK)) {
		fprintf(out, "vm: problem: --vm-accel kvm, but /dev/kvm cannot be opened: %s\n",
			strerror(errno));
		problems++;
	}
	fprintf(out, "vm: guest %s%s\n", shape,
		!strcmp(s.accel, "tcg") && !s.icount && access("/dev/kvm", F_OK)
		    ? " (no /dev/kvm: TCG, the guest's clock counts instructions only with --vm-icount)"
		    : "");
	switch (elf_static(busybox)) {
	case 1:
		fprintf(out, "vm: busybox %s: static\n", busybox);
		break;
	case 0:
		fprintf(out, "vm: problem: busybox %s is not static: the guest has no libc"
			     " (apt-get install busybox-static)\n", busybox);
		problems++;
		break;
	default:
		fprintf(out, "vm: problem: busybox %s: no 64-bit ELF program there (apt-get install"
			     " busybox-static)\n", busybox);
		problems++;
	}
	return problems;
}
