/*
 * catalogue.h - the agent's catalogue: the tests this lab machine offers,
 * read from a file of [name] sections of "key = value" lines (format in
 * README, "Agent"). A job from kperfd only names a (suite, params) of it:
 * the command always comes from this file, never from the server.
 */
#ifndef KPERF_CATALOGUE_H
#define KPERF_CATALOGUE_H

#include <jansson.h>
#include <stddef.h>

/* Limits on a catalogue file, so a hostile one fails with a message. */
#define CATALOGUE_FILE_MAX (1u << 20)   /* bytes of the file */
#define CATALOGUE_LINE_MAX 4096         /* bytes of one line */
#define CATALOGUE_TESTS_MAX 256         /* tests: what one claim may list (kperfd's limit) */
#define CATALOGUE_PAIRS_MAX 64          /* k=v pairs of params or variant */
#define CATALOGUE_KEY_MAX 64            /* bytes of a param or variant key (the server's) */
#define CATALOGUE_VALUE_MAX 256         /* bytes of a param or variant value (the server's) */
#define CATALOGUE_NAME_MAX 64           /* bytes of a [name] or a suite */
#define CATALOGUE_WORDS_MAX 256         /* words of a command */
#define CATALOGUE_ITERATIONS_MAX 100000 /* as `run --iterations` */

struct cat_test {
	char name[CATALOGUE_NAME_MAX + 1]; /* from its [name] header */
	size_t line;                       /* line of that header */
	char *suite;                       /* 1-64 of A-Za-z0-9._- */
	json_t *params;                    /* object of strings, never NULL */
	json_t *variant;                   /* knobs the test sets itself, never NULL */
	char *format;                      /* a parser's format, or NULL: the suite's */
	long iterations;                   /* 1..CATALOGUE_ITERATIONS_MAX, default 1 */
	int profile;                       /* profile = yes: as `run --profile` */
	int lock_contention;               /* lock_contention = yes: as `run --lock-contention` */
	char **argv;                       /* the command, NULL-terminated, >= 1 word */
};

struct catalogue {
	char *path;
	struct cat_test *tests;
	size_t n;
};

/*
 * Read path into cat. Returns 0, or -1 with err set to "path:line: what is
 * wrong" (the file, a line, a key or a limit); cat is then empty. Release
 * with catalogue_release either way.
 */
int catalogue_load(struct catalogue *cat, const char *path, char *err, size_t errsz);
void catalogue_release(struct catalogue *cat);

/* The test with this suite and params (an object of strings), or NULL. Borrowed. */
const struct cat_test *catalogue_find(const struct catalogue *cat, const char *suite,
				      const json_t *params);

/* What a claim offers: a new array of {"suite", "params"}. */
json_t *catalogue_offer(const struct catalogue *cat);

/*
 * Split s into words as a POSIX shell would, without expanding anything and
 * without running a shell: blanks separate words, '...' is literal, "..."
 * keeps \" \\ \$ \` escapes, a backslash outside quotes escapes the next
 * character. Returns a NULL-terminated array (free with catalogue_words_free)
 * or NULL with err set (unterminated quote, more than maxwords, no word).
 */
char **catalogue_words(const char *s, size_t maxwords, char *err, size_t errsz);
void catalogue_words_free(char **words);

#endif
