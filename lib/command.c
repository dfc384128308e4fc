/*
 * command.c - a command line's work arguments: its words split as a shell
 * would split plain, single- and double-quoted words, each option matched
 * against the names benchmarks use for duration, parallelism and size.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "lib/command.h"
#include "lib/util.h"

#define WORDS_MAX 512

/* Substrings of option names that set the amount of work. */
static const char *const work_names[] = {
	"time",	  "duration", "runtime", "thread", "job",   "proc",	"worker",  "client",
	"conn",	  "size",     "bytes",	 "iodepth", "count", "number", "iteration", "loops",
	"ops",	  "vm",	      "cpu",	 "memory", "mem",   "rate",	"events",  "requests",
	"keys",	  "depth",    "batch",	 "fork",   "task",  "instances",
};

/* Short options that set the amount of work in the benchmarks kperf
 * parses: -t threads or time, -T duration, -c clients, -j jobs, -n
 * requests or count, -s size or scale, -l loops, -P pipelines, -d data size. */
static const char short_work[] = "tTcjnslPdNg";

static int is_work_name(const char *name, size_t len)
{
	char low[64];

	if (len == 1)
		return strchr(short_work, name[0]) != NULL;
	if (len >= sizeof(low))
		return 0;
	for (size_t i = 0; i < len; i++)
		low[i] = (char)tolower((unsigned char)name[i]);
	low[len] = '\0';
	for (size_t i = 0; i < sizeof(work_names) / sizeof(work_names[0]); i++)
		if (strstr(low, work_names[i]))
			return 1;
	return 0;
}

/* The words of s (malloc'd, NUL-separated in *store); their count. */
static size_t split_words(const char *s, char **store, char **words, size_t max)
{
	char *o = xmalloc(strlen(s) + 1);
	size_t n = 0;

	*store = o;
	while (*s && n < max) {
		char quote = 0;
		while (*s && isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		words[n++] = o;
		for (; *s && (quote || !isspace((unsigned char)*s)); s++) {
			if (!quote && (*s == '\'' || *s == '"'))
				quote = *s;
			else if (quote && *s == quote)
				quote = 0;
			else if (*s == '\\' && quote != '\'' && s[1])
				*o++ = *++s;
			else
				*o++ = *s;
		}
		*o++ = '\0';
	}
	return n;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void command_work_args(const char *cmdline, struct buf *out)
{
	char *words[WORDS_MAX], *store, *args[WORDS_MAX];
	size_t n = split_words(cmdline ? cmdline : "", &store, words, WORDS_MAX), na = 0;

	for (size_t i = 0; i < n; i++) {
		const char *w = words[i], *name, *eq, *value = NULL;
		size_t len;

		if (w[0] != '-' || !w[1] || isdigit((unsigned char)w[1]))
			continue;
		name = w + (w[1] == '-' ? 2 : 1);
		eq = strchr(name, '=');
		len = eq ? (size_t)(eq - name) : strlen(name);
		if (w[1] != '-' && len > 1 && strchr(short_work, name[0]) &&
		    isdigit((unsigned char)name[1])) {
			/* "-t4": a short option with its value attached */
			len = 1;
			value = name + 1;
		} else if (!len || !is_work_name(name, len)) {
			continue;
		}
		if (!value && eq)
			value = eq + 1;
		if (!value && i + 1 < n &&
		    (words[i + 1][0] != '-' || isdigit((unsigned char)words[i + 1][1])))
			value = words[++i];
		if (!value)
			value = "";
		{
			struct buf a = BUF_INIT;
			buf_printf(&a, "%.*s=%s", (int)len, name, value);
			args[na++] = xstrdup(buf_str(&a));
			buf_release(&a);
		}
	}
	qsort(args, na, sizeof(args[0]), str_cmp);
	for (size_t i = 0; i < na; i++) {
		buf_printf(out, "%s%s", i ? " " : "", args[i]);
		free(args[i]);
	}
	free(store);
}

/* The value of name in a work-argument string, or NULL. */
static const char *arg_value(char *const *args, size_t n, const char *name, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (!strncmp(args[i], name, len) && args[i][len] == '=')
			return args[i] + len + 1;
	return NULL;
}

int command_work_diff(const char *base, const char *target, struct buf *out)
{
	char *bw[WORDS_MAX], *tw[WORDS_MAX], *bs, *ts;
	size_t nb = split_words(base ? base : "", &bs, bw, WORDS_MAX);
	size_t nt = split_words(target ? target : "", &ts, tw, WORDS_MAX);
	int differ = 0;

	for (int side = 0; side < 2; side++) {
		char **from = side ? tw : bw, **other = side ? bw : tw;
		size_t nfrom = side ? nt : nb, nother = side ? nb : nt;

		for (size_t i = 0; i < nfrom; i++) {
			size_t len = strcspn(from[i], "=");
			const char *mine = from[i] + len + (from[i][len] == '=');
			const char *theirs = arg_value(other, nother, from[i], len);

			if (side && theirs) /* listed from the base's side already */
				continue;
			if (theirs && !strcmp(mine, theirs))
				continue;
			buf_printf(out, "%s%.*s %s -> %s", differ ? ", " : "", (int)len, from[i],
				   side ? "-" : mine, side ? mine : theirs ? theirs : "-");
			differ++;
		}
	}
	free(bs);
	free(ts);
	return differ;
}
