/*
 * testutil.h - machinery shared by the collector's tests: scratch
 * directories, running the built kperf-collect, LKP-style expected-metric
 * files ("key: value" lines) and comparing metrics at printed precision.
 */
#ifndef KPERF_COLLECT_TESTUTIL_H
#define KPERF_COLLECT_TESTUTIL_H

#include <jansson.h>
#include <stddef.h>

/* A fresh directory under $KPERF_TEST_TMP (or /tmp) into out; asserts it worked. */
void tu_tmpdir(char *out, size_t outsz);

/* Write text to dir/rel, creating parent directories; asserts it worked. */
void tu_write(const char *dir, const char *rel, const char *text);

/*
 * Run $KPERF_COLLECT_BIN (default build/kperf-collect) with args (NULL-ended)
 * and env ("K=V" strings, NULL-ended, may be NULL) added to the environment;
 * KPERF_COLLECT_CONFIG=/dev/null unless env sets it. Returns the exit status;
 * stdout and stderr into *out and *err (malloc'd).
 */
int tu_collect(const char *const *args, const char *const *env, char **out, char **err);

/* Expected metrics: "key: value" lines of path, '#' lines skipped; key -> array of strings. */
json_t *tu_expected(const char *path);

/*
 * Assert that metrics (name -> array of numbers) hold exactly the keys of
 * expected with prefix "<program>." and equal values to the precision each
 * expected value is printed with. what names the case in messages.
 */
void tu_assert_metrics(const char *what, const char *program, json_t *metrics, json_t *expected);

/* Number of regular files named *suffix in dir. */
int tu_count_files(const char *dir, const char *suffix);

#endif
