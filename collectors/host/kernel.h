/*
 * kernel.h - facts about the running kernel for a run's "kernel" block and
 * environment: the release (uname -r), /proc/version, /proc/cmdline and the
 * config options that matter to memory-management work, from
 * /proc/config.gz or /boot/config-<release>. Paths from root_proc/root_boot.
 */
#ifndef KPERF_KERNEL_H
#define KPERF_KERNEL_H

#include <jansson.h>

/* Longest release the server takes. */
#define KERNEL_RELEASE_MAX 128

struct kernel_facts {
	char release[KERNEL_RELEASE_MAX + 1]; /* never empty ("unknown" at worst) */
	char *version;                         /* /proc/version, or NULL */
	char *cmdline;                         /* /proc/cmdline, or NULL */
	json_t *config;                        /* CONFIG_X -> "y"/"m"/"n"/value, or NULL */
	char config_source[512];               /* the file config was read from */
};

/* Fill k from the running system (or the fixture roots); never fails. */
void kernel_facts_read(struct kernel_facts *k);
void kernel_facts_release(struct kernel_facts *k);

/*
 * The options kperf cares about from a kernel config's text: each listed
 * option that is set maps to its value ("y", "m", a string without quotes),
 * each "# CONFIG_X is not set" to "n". Returns a new object.
 */
json_t *kernel_config_parse(const char *text, size_t len);

/* The wanted options, ended by NULL. */
extern const char *const kernel_config_options[];

#endif
