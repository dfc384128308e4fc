/*
 * testutil.c - helpers for the collector's Criterion tests (testutil.h).
 * Test machinery only: it may assert, and it leaks nothing it returns.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/integration/harness.h"
#include "tests/collect/testutil.h"

void tu_tmpdir(char *out, size_t outsz)
{
	const char *base = getenv("KPERF_TEST_TMP") ? getenv("KPERF_TEST_TMP") : "/tmp";
	snprintf(out, outsz, "%s/collect.XXXXXX", base);
	cr_assert_not_null(mkdtemp(out), "mkdtemp %s: %s", out, strerror(errno));
}

static void mkdirs(char *path)
{
	for (char *s = path + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
}

void tu_write(const char *dir, const char *rel, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	mkdirs(path);
	f = fopen(path, "w");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
}


int tu_collect(const char *const *args, const char *const *env, char **out, char **err)
{
	const char *bin = getenv("KPERF_COLLECT_BIN") ? getenv("KPERF_COLLECT_BIN")
						      : "build/kperf-collect";
	char errfile[4200], dir[4096];
	const char *argv[64];
	int po[2], status, n = 0, fd;
	pid_t pid;

	tu_tmpdir(dir, sizeof(dir));
	snprintf(errfile, sizeof(errfile), "%s/stderr", dir);
	argv[n++] = bin;
	while (*args && n < 63)
		argv[n++] = *args++;
	argv[n] = NULL;
	cr_assert_eq(pipe(po), 0);
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(po[1], 1);
		dup2(fd, 2);
		close(po[0]);
		setenv("KPERF_COLLECT_CONFIG", "/dev/null", 1);
		unsetenv("KPERF_SERVER");
		unsetenv("KPERF_TOKEN");
		for (; env && *env; env++)
			putenv((char *)*env);
		execv(bin, (char *const *)argv);
		_exit(126);
	}
	close(po[1]);
	*out = harness_read_fd(po[0]);
	close(po[0]);
	waitpid(pid, &status, 0);
	fd = open(errfile, O_RDONLY);
	*err = fd >= 0 ? harness_read_fd(fd) : strdup("");
	if (fd >= 0)
		close(fd);
	unlink(errfile);
	rmdir(dir);
	cr_assert(WIFEXITED(status), "%s did not exit normally", bin);
	cr_assert_neq(WEXITSTATUS(status), 126, "cannot exec %s", bin);
	return WEXITSTATUS(status);
}

json_t *tu_expected(const char *path)
{
	FILE *f = fopen(path, "r");
	json_t *exp = json_object();
	char line[4096];

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *sep, *v;
		json_t *arr;
		size_t n = strlen(line);

		while (n && (line[n - 1] == '\n' || line[n - 1] == ' '))
			line[--n] = '\0';
		if (!n || line[0] == '#')
			continue;
		sep = strstr(line, ": ");
		cr_assert_not_null(sep, "%s: bad line %s", path, line);
		*sep = '\0';
		v = sep + 2;
		while (*v == ' ')
			v++;
		arr = json_object_get(exp, line);
		if (!arr) {
			arr = json_array();
			json_object_set_new(exp, line, arr);
		}
		json_array_append_new(arr, json_string(v));
	}
	fclose(f);
	return exp;
}

void tu_assert_metrics(const char *what, const char *program, json_t *metrics, json_t *expected)
{
	const char *key;
	json_t *vals;
	char name[1024];

	json_object_foreach(expected, key, vals) {
		json_t *got;
		size_t i;
		json_t *s;

		if (program[0])
			snprintf(name, sizeof(name), "%s.%s", program, key);
		else
			snprintf(name, sizeof(name), "%s", key);
		got = json_object_get(metrics, name);
		cr_assert_not_null(got, "%s: metric %s missing", what, name);
		cr_assert_eq(json_array_size(got), json_array_size(vals),
			     "%s: %s has %zu values, expected %zu", what, name, json_array_size(got),
			     json_array_size(vals));
		json_array_foreach(vals, i, s) {
			const char *txt = json_string_value(s), *dot = strchr(txt, '.');
			double want = strtod(txt, NULL);
			double have = json_number_value(json_array_get(got, i));
			int decimals = dot ? (int)strlen(dot + 1) : 0;
			/* equal to the printed precision, and to 1e-9 relative for long prints */
			double tol = 0.5 * pow(10, -decimals) + 1e-9 * fabs(want);
			cr_assert(fabs(have - want) <= tol, "%s: %s[%zu] = %.17g, expected %s", what,
				  name, i, have, txt);
		}
	}
	json_object_foreach(metrics, key, vals) {
		const char *k = key;
		size_t pl = strlen(program);
		if (pl) {
			cr_assert(!strncmp(key, program, pl) && key[pl] == '.',
				  "%s: metric %s lacks the prefix %s.", what, key, program);
			k = key + pl + 1;
		}
		cr_assert_not_null(json_object_get(expected, k), "%s: unexpected metric %s", what,
				   key);
	}
}

int tu_count_files(const char *dir, const char *suffix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name), sl = strlen(suffix);
		if (e->d_name[0] != '.' && l >= sl && !strcmp(e->d_name + l - sl, suffix))
			n++;
	}
	closedir(d);
	return n;
}
