/*
 * kbuild.h - a lab's kernel built from its git tree with Kbuild: the lab's
 * own config with what kperf needs merged on top (packaging/kernel/kperf.config,
 * carried in the binary), one build directory per lab so that a config kept
 * fixed rebuilds only what a commit changed, and ccache when it is there.
 * The agent's --kernel-build; the image boots in a VM (vm.h) or is
 * installed by the lab's kexec script (packaging/kernel/).
 */
#ifndef KPERF_KBUILD_H
#define KPERF_KBUILD_H

#include <stddef.h>
#include <stdio.h>

#include "lib/buf.h"

/* Seconds a build may take: an empty ccache on 2 busy cores needs 13 min. */
#define KBUILD_TIMEOUT_S 5400
/* Compiler lines kept of a failed build (the robot's report quotes them). */
#define KBUILD_ERROR_LINES_MAX 30
/* Bytes of a build's output kept for its failure. */
#define KBUILD_OUTPUT_TAIL_MAX 65536

/* What kperf.config and vm.config hold (generated from packaging/kernel/). */
extern const char kbuild_fragment_kperf[];
extern const char kbuild_fragment_vm[];

struct kbuild_opts {
	const char *tree;   /* the git tree, checked out at the commit to build */
	const char *out;    /* the build directory (make O=), made when missing */
	const char *config; /* the lab's config (a full .config or a fragment), or NULL:
			     * make tinyconfig */
	int vm;             /* merge vm.config too: the kernel boots in kperf's guest */
	long jobs;          /* make -j; <= 0: the machine's CPUs */
	long timeout_s;     /* <= 0: KBUILD_TIMEOUT_S */
	int quiet;          /* no echo of make's output */
};

struct kbuild_result {
	char image[4096];   /* the bzImage, when built */
	char release[128];  /* `make kernelrelease`: 6.1.158-g<sha12> */
	char compiler[256]; /* the first line of `$CC --version` */
	char config_sha[17];/* the first 16 hex of the merged .config's hash */
	double seconds;     /* the build's wall time */
	int ccache;         /* built through ccache */
	struct buf errors;  /* a failed build: the compiler's error lines, one a line */
	struct buf tail;    /* a failed build: the end of make's output */
};

void kbuild_result_init(struct kbuild_result *r);
void kbuild_result_release(struct kbuild_result *r);

/*
 * Configure (when the config's inputs changed since the last build in
 * o->out) and build bzImage. Returns 0 with r's image, release, compiler and
 * config_sha; 1 when the tree does not build (r->errors holds the compiler's
 * error lines, why says which file first); -1 when the build could not be
 * tried (no tree, make missing, a timeout), with why.
 */
int kbuild_image(const struct kbuild_opts *o, struct kbuild_result *r, char *why, size_t whysz);

/*
 * The lines of make's output that say why a build failed: the compiler's
 * "file:line:col: error: ..." lines and the "In function" lines before
 * them, and the linker's "undefined reference" lines; at most
 * KBUILD_ERROR_LINES_MAX, in order, appended to out, each without a leading
 * strip (the tree's path and '/', so that files read "mm/swap.c"; NULL:
 * as they are). Returns how many.
 */
int kbuild_error_lines(const char *output, size_t len, const char *strip, struct buf *out);

/*
 * What a lab needs to build kernels, said on out a line each (agent
 * --check): the tree (a git tree of Linux), Kbuild's tools and the compiler,
 * ccache, the config (and each option kperf's fragments set over the lab's
 * own), the build directory. Returns how many problems it found.
 */
int kbuild_check(const struct kbuild_opts *o, FILE *out);

#endif
