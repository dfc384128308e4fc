/*
 * kswitch.h - which kernel this lab machine runs, and the switch to another
 * one: the agent's seam to the site. The running kernel comes from
 * --running-cmd (a sha, a release, or both) or /proc/sys/kernel/osrelease;
 * the switch is the site's kernel hook (build, install, kexec or reboot).
 */
#ifndef KPERF_KSWITCH_H
#define KPERF_KSWITCH_H

#include <stddef.h>

#include "collectors/host/kernel.h"

struct running {
	char sha[41];                         /* lower case, "" when not known */
	char release[KERNEL_RELEASE_MAX + 1]; /* "" only when cmd printed a sha alone
						 and osrelease could not be read */
	int release_given;                    /* printed by --running-cmd: runs carry it */
};

/*
 * Fill r. cmd (words, may be NULL) is run with a timeout and must print a
 * 40-hex sha, a release, or a sha then a release; without it, or when it
 * prints a sha alone, the release is root_proc()/sys/kernel/osrelease.
 * Returns 0, or -1 with err saying what went wrong.
 */
int kswitch_running(char **cmd, struct running *r, char *err, size_t errsz);

/* Whether r is the kernel of commit sha (40 hex or "") and release (or ""). */
int kswitch_is(const struct running *r, const char *sha, const char *release);

/* "commit <sha> (release <r>)" or "release <r>" into out. */
void kswitch_text(const struct running *r, char *out, size_t outsz);

/*
 * Run the kernel hook: hook's words, then sha and release (either may be
 * ""), with its output echoed on stdout. Returns its exit status (128 + the
 * signal that killed it), or -1 (errno) when it cannot start; *tail gets the
 * last tailmax bytes of its output (malloc'd, never NULL).
 */
int kswitch_hook(char **hook, const char *sha, const char *release, size_t tailmax,
		 char **tail);

/* Whether s is 40 hex digits; whether it is a release kperfd takes (1-128 printable). */
int kswitch_hex40(const char *s);
int kswitch_release_ok(const char *s);

#endif
