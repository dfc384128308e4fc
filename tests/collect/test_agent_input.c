/*
 * test_agent_input.c - what `kperf-collect agent` reads before it claims
 * anything: catalogues (bad lines, unknown keys, missing suite or command,
 * sizes past the limits) are refused naming the file and line, exit 65;
 * bad options exit 64; state files that are broken, hold a bad job or
 * belong to another machine are refused before any work.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/collect/testutil.h"

#define SHA_A "aaaa1631f313f75c9d8f4b5e0e9cba1c1bd1d68e"

TestSuite(agent_input, .timeout = 120);

struct bad_catalogue {
	const char *text; /* NULL: built by the test */
	const char *want; /* in the message, after "catalogue <file>" */
};

static const struct bad_catalogue bad_catalogues[] = {
	{"suite = x\n", ":1: suite before the first [name] header"},
	{"[a]\nsuite = x\ncommand = y\nfoo = 1\n", ":4: unknown key \"foo\""},
	{"[a]\ncommand = y\n", ":1: test \"a\" has no suite"},
	{"# c\n[a]\nsuite = x\n\n", ":2: test \"a\" has no command"},
	{"[a]\nsuite = x\ncommand = y\nsuite = z\n", ":4: suite is given twice in test \"a\""},
	{"[a]\nsuite = read twice\n", ":2: suite \"read twice\": expected 1-64 of A-Za-z0-9._-"},
	{"[a]\nsuite = x\ncommand = sh -c 'echo\n", ":3: command: unterminated ' quote"},
	{"[a]\nsuite = x\ncommand = sh \"-c\n", ":3: command: unterminated \" quote"},
	{"[a]\nsuite = x\ncommand =\n", ":3: command has no value"},
	{"[a]\nsuite = x\ncommand = ''\n", ":3: command: the first word is empty"},
	{"[a]\nsuite = x\ncommand = y\niterations = 0\n",
	 ":4: iterations \"0\": expected a whole number from 1 to 100000"},
	{"[a]\nsuite = x\ncommand = y\niterations = 3x\n", ":4: iterations \"3x\""},
	{"[a]\nsuite = x\ncommand = y\nformat = nope\n", ":4: unknown format \"nope\""},
	{"[a]\nsuite = x\ncommand = y\nparams = nr=1 nr=2\n", ":4: nr is given twice"},
	{"[a]\nsuite = x\ncommand = y\nparams = =1\n", ":4: \"=1\": expected key=value"},
	{"[a]\nsuite = x\ncommand = y\nvariant = thp\n", ":4: \"thp\": expected key=value"},
	{"[a]\nsuite = x\ncommand = y\nparams = a/b=1\n", ":4: key \"a/b\""},
	{"[a]\nsuite = x\ncommand = y\nthis line\n", ":4: expected \"key = value\" or a [name]"},
	{"[a b]\n", ":1: test name \"a b\""},
	{"[a\n", ":1: a section header is [name]"},
	{"[a]\nsuite = x\ncommand = y\n[a]\n", ":4: test \"a\" is defined twice (first at line 1)"},
	{"[a]\nsuite = x\ncommand = y\n[b]\nsuite = x\ncommand = z\n",
	 ":4: test \"b\" has the suite and params of test \"a\" (line 1)"},
	{"[a]\nsuite = x\ncommand = y\x01z\n", ":3: control character 0x01"},
	{"[a]\nsuite = x\ncommand = y\xff\xfe\n", ":3: not UTF-8"},
	{"", ": no tests"},
	{"# only a comment\n", ": no tests"},
	{NULL, NULL},
};

static void expect_refused(const char *path, const char *want, int status)
{
	const char *args[] = {"agent", "--catalogue", path, "--check", NULL};
	char *out, *err, full[4400];
	int rc = tu_collect(args, NULL, &out, &err);

	snprintf(full, sizeof(full), "catalogue %s%s", path, want);
	cr_expect_eq(rc, status, "%s: exit %d, stderr: %s", want, rc, err);
	cr_expect(strstr(err, full) != NULL, "expected \"%s\" in: %s", full, err);
	cr_expect_str_eq(out, "", "nothing printed for a refused catalogue");
	free(out);
	free(err);
}

Test(agent_input, hostile_catalogues_are_refused_naming_the_line)
{
	char dir[4096], path[4200], *big;
	FILE *f;

	tu_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/catalogue", dir);
	for (const struct bad_catalogue *c = bad_catalogues; c->text; c++) {
		tu_write(dir, "catalogue", c->text);
		expect_refused(path, c->want, 65);
	}
	/* NUL bytes, which tu_write cannot write */
	f = fopen(path, "w");
	fwrite("[a]\nsuite = x\0y\n", 1, 16, f);
	fclose(f);
	expect_refused(path, ":2: NUL byte", 65);

	/* sizes: a line, a value, a count of tests, the file */
	big = malloc(2u << 20);
	memset(big, 'x', 5000);
	big[5000] = '\0';
	f = fopen(path, "w");
	fprintf(f, "[a]\nsuite = x\ncommand = %s\n", big);
	fclose(f);
	expect_refused(path, ":3: line longer than 4096 bytes", 65);
	big[300] = '\0';
	f = fopen(path, "w");
	fprintf(f, "[a]\nsuite = x\ncommand = y\nparams = k=%s\n", big);
	fclose(f);
	expect_refused(path, ":4: the value of k is longer than 256 bytes", 65);
	f = fopen(path, "w");
	fprintf(f, "[a]\nsuite = x\ncommand = y\nparams =");
	for (int i = 0; i < 65; i++)
		fprintf(f, " k%d=1", i);
	fprintf(f, "\n");
	fclose(f);
	expect_refused(path, ":4: more than 64 pairs", 65);
	f = fopen(path, "w");
	fprintf(f, "[a]\nsuite = x\ncommand =");
	for (int i = 0; i < 257; i++)
		fprintf(f, " w");
	fprintf(f, "\n");
	fclose(f);
	expect_refused(path, ":3: command: more than 256 words", 65);
	f = fopen(path, "w");
	for (int i = 0; i < 257; i++)
		fprintf(f, "[t%d]\nsuite = s\nparams = n=%d\ncommand = y\n", i, i);
	fclose(f);
	expect_refused(path, ":1025: more than 256 tests", 65);
	memset(big, '#', (2u << 20) - 1);
	big[(2u << 20) - 1] = '\0';
	tu_write(dir, "catalogue", big);
	expect_refused(path, ": larger than 1048576 bytes", 65);
	free(big);

	/* a missing file; a good one is printed */
	snprintf(path, sizeof(path), "%s/none", dir);
	expect_refused(path, ": No such file or directory", 65);
	tu_write(dir, "catalogue",
		 "[vm]\nsuite = vm-scalability\nparams = test=lru-file-mmap-read runtime=300s\n"
		 "variant = lru_gen=on\niterations = 3\n"
		 "command = ./case-lru-file-mmap-read --size \"1 GiB\" 'a b' c\\ d\n");
	snprintf(path, sizeof(path), "%s/catalogue", dir);
	{
		const char *args[] = {"agent", "--catalogue", path, "--check", NULL};
		char *out, *err;
		cr_assert_eq(tu_collect(args, NULL, &out, &err), 0, "%s", err);
		cr_expect_str_eq(out, "[vm] line 1: suite vm-scalability, params "
				      "{\"runtime\":\"300s\",\"test\":\"lru-file-mmap-read\"}, variant "
				      "{\"lru_gen\":\"on\"}, format (the suite's), 3 iterations, "
				      "command: [./case-lru-file-mmap-read] [--size] [1 GiB] [a b] [c d]\n");
		free(out);
		free(err);
	}
}

Test(agent_input, bad_options_and_state_files)
{
	char dir[4096], path[4200], state[4300], file[4400];
	char *out, *err;
	int rc;

	tu_tmpdir(dir, sizeof(dir));
	tu_write(dir, "catalogue", "[a]\nsuite = x\ncommand = true\n");
	snprintf(path, sizeof(path), "%s/catalogue", dir);
	snprintf(state, sizeof(state), "%s/state", dir);
	snprintf(file, sizeof(file), "%s/job.json", state);
	{
		const char *args[] = {"agent", NULL};
		cr_expect_eq(tu_collect(args, NULL, &out, &err), 64, "%s", err);
		cr_expect(strstr(err, "agent needs --catalogue FILE") != NULL, "%s", err);
		free(out);
		free(err);
	}
	{
		const char *args[] = {"agent", "--catalogue", path, NULL};
		cr_expect_eq(tu_collect(args, NULL, &out, &err), 64, "%s", err);
		cr_expect(strstr(err, "agent needs --server and --token") != NULL, "%s", err);
		free(out);
		free(err);
	}
	{
		const char *args[] = {"--server", "http://127.0.0.1:9", "--token", "t", "agent",
				      "--catalogue", path, "--kernel-hook", "hook 'x", "--state",
				      state, NULL};
		cr_expect_eq(tu_collect(args, NULL, &out, &err), 64, "%s", err);
		cr_expect(strstr(err, "--kernel-hook: unterminated ' quote") != NULL, "%s", err);
		free(out);
		free(err);
	}
	{
		const char *args[] = {"agent", "--catalogue", path, "--idle-exit", "0", NULL};
		cr_expect_eq(tu_collect(args, NULL, &out, &err), 64, "%s", err);
		cr_expect(strstr(err, "--idle-exit \"0\"") != NULL, "%s", err);
		free(out);
		free(err);
	}

	/* state files: not JSON, a bad job in it, another machine's */
	static const struct {
		const char *text, *want;
		int status;
	} states[] = {
		{"{\"version\":1,", "job.json:1: ", 65},
		{"{\"version\":2,\"server\":\"s\",\"machine\":\"m\",\"phase\":\"hook\",\"job\":{}}",
		 "not a version 1 agent state", 65},
		{"{\"version\":1,\"server\":\"http://127.0.0.1:9\",\"machine\":\"lab1\",\"phase\":"
		 "\"hook\",\"job\":{\"id\":7,\"commit\":\"xyz\",\"suite\":\"x\",\"runs\":1}}",
		 "job.json: job.commit: expected 40 hex digits or null", 65},
		{"{\"version\":1,\"server\":\"http://127.0.0.1:9\",\"machine\":\"lab1\",\"phase\":"
		 "\"hook\",\"job\":{\"id\":7,\"commit\":\"" SHA_A "\",\"suite\":\"x\",\"runs\":101}}",
		 "job.json: job.runs: expected a whole number from 0 to 100", 65},
		{"{\"version\":1,\"server\":\"http://127.0.0.1:9\",\"machine\":\"lab1\",\"phase\":"
		 "\"hook\",\"job\":{\"id\":7,\"commit\":\"" SHA_A "\",\"suite\":\"x\",\"runs\":1,"
		 "\"params\":{\"a\":[1]}}}",
		 "job.json: job.params: expected an object of short strings", 65},
		{"{\"version\":1,\"server\":\"http://127.0.0.1:9\",\"machine\":\"lab2\",\"phase\":"
		 "\"hook\",\"job\":{\"id\":7,\"commit\":\"" SHA_A "\",\"suite\":\"x\",\"runs\":1}}",
		 "holds job 7 of machine lab2 at http://127.0.0.1:9, and this agent is lab1", 64},
	};
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		const char *args[] = {"--server", "http://127.0.0.1:9", "--token", "t", "--machine",
				      "lab1", "--spool", dir, "agent", "--catalogue", path,
				      "--state", state, "--idle-exit", "1", NULL};
		tu_write(state, "job.json", states[i].text);
		rc = tu_collect(args, NULL, &out, &err);
		cr_expect_eq(rc, states[i].status, "%s: exit %d: %s", states[i].text, rc, err);
		cr_expect(strstr(err, states[i].want) != NULL, "expected \"%s\" in: %s",
			  states[i].want, err);
		free(out);
		free(err);
	}
}
