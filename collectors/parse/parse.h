/*
 * parse.h - the benchmark output parsers: one table of formats, one calling
 * convention. A parser reads the whole text of one output and appends
 * LKP-named metrics ("<program>.<key>") to the current run of a parse_ctx;
 * a few formats (LKP matrix.json) start more runs.
 */
#ifndef KPERF_PARSE_H
#define KPERF_PARSE_H

#include <jansson.h>
#include <stddef.h>

struct parse_ctx {
	const char *file;    /* the input's name, for messages */
	const char *program; /* metric prefix of the running parser */
	json_t *runs;        /* array of metrics objects; parsers add to the last */
	json_t *units;       /* metric name -> unit, shared by all runs */
	json_t *directions;  /* metric name -> "higher"/"lower", shared by all runs */
	size_t line;         /* line being parsed, for messages */
	char err[512];       /* "file:line: message" after a failure */
};

/* A parser: returns 0, or -1 with pc->err set (see parse_fail). */
typedef int (*parse_fn)(struct parse_ctx *pc, const char *text, size_t len);

struct parser {
	const char *format;  /* --format and --suite name */
	const char *program; /* metric prefix */
	parse_fn fn;
	const char *what;    /* one line for --help */
};

/* The format called name, or NULL. */
const struct parser *parser_find(const char *name);
/* The table, ended by a row whose format is NULL. */
extern const struct parser parsers[];

/* Start a context for file (the caller's string); release it with parse_ctx_release. */
void parse_ctx_init(struct parse_ctx *pc, const char *file);
void parse_ctx_release(struct parse_ctx *pc);

/*
 * Run p over text: on success returns 0 and the metrics are in pc->runs; on
 * failure -1 with pc->err naming file and line, and pc's runs, units and
 * directions as they were before the call (a truncated output adds nothing).
 * A parser that recognises nothing fails ("no <format> results").
 */
int parse_run(const struct parser *p, struct parse_ctx *pc, const char *text, size_t len);

/* For parsers: the current run's metrics object (borrowed). */
json_t *parse_metrics(struct parse_ctx *pc);
/* For parsers: start another run (matrix formats). */
void parse_new_run(struct parse_ctx *pc);
/* For parsers: append v to "<program>.<key>"; returns 0 or -1 (not finite). */
int parse_metric(struct parse_ctx *pc, const char *key, double v);
/* For parsers: record the unit of "<program>.<key>". */
void parse_unit(struct parse_ctx *pc, const char *key, const char *unit);
/* For parsers: record "higher" or "lower" is better for "<program>.<key>". */
void parse_direction(struct parse_ctx *pc, const char *key, const char *direction);
/*
 * For parsers: append v to "<program>.<key>" and record its unit and
 * direction ("higher"/"lower"), either of which may be NULL; 0 or -1 (not finite).
 */
int parse_metric_as(struct parse_ctx *pc, const char *key, double v, const char *unit,
		    const char *direction);
/*
 * For parsers: decode the JSON document text (duplicate keys rejected);
 * first_line is the line of the input text starts on (1 for the whole
 * input). Returns a new reference, or NULL with pc->err naming line and column.
 */
json_t *parse_load_json(struct parse_ctx *pc, const char *text, size_t len, size_t first_line);
/*
 * For parsers: the line of text where the object key key ("key" then ':')
 * first appears, for messages about a value; 1 when it cannot be found.
 */
size_t parse_key_line(const char *text, size_t len, const char *key);
/* For parsers: set pc->err to "file:line: <fmt>" and return -1. */
int parse_fail(struct parse_ctx *pc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Limits of the formats whose names come from the input (kv, json): a
 * bigger input is an error naming the line or key, never a silent cut.
 * The same figures as the server's (lib/kperf_limits.h, LIMIT_*).
 */
#define PARSE_VALUES_PER_METRIC_MAX 10000 /* LIMIT_VALUES_PER_METRIC */
#define PARSE_METRICS_MAX 10000		  /* LIMIT_METRICS_PER_RUN */
#define PARSE_VALUES_MAX 100000		  /* LIMIT_VALUES_PER_RUN */

/* Split s in place at white space into at most max fields; returns the count. */
size_t split_ws(char *s, char **fields, size_t max);

/* The parser entry points, one per file parse_*.c. */
int parse_vm_scalability(struct parse_ctx *pc, const char *text, size_t len);
int parse_will_it_scale(struct parse_ctx *pc, const char *text, size_t len);
int parse_ycsb(struct parse_ctx *pc, const char *text, size_t len);
int parse_memtier(struct parse_ctx *pc, const char *text, size_t len);
int parse_perf_profile(struct parse_ctx *pc, const char *text, size_t len);
int parse_vmstat(struct parse_ctx *pc, const char *text, size_t len);
int parse_proc_vmstat(struct parse_ctx *pc, const char *text, size_t len);
int parse_lock_stat(struct parse_ctx *pc, const char *text, size_t len);
int parse_readtwice(struct parse_ctx *pc, const char *text, size_t len);
int parse_sysbench(struct parse_ctx *pc, const char *text, size_t len);
int parse_lkp_stats_json(struct parse_ctx *pc, const char *text, size_t len);
int parse_lkp_matrix_json(struct parse_ctx *pc, const char *text, size_t len);
int parse_stress_ng(struct parse_ctx *pc, const char *text, size_t len);
int parse_fio(struct parse_ctx *pc, const char *text, size_t len);
int parse_redis_benchmark(struct parse_ctx *pc, const char *text, size_t len);
int parse_pgbench(struct parse_ctx *pc, const char *text, size_t len);
int parse_hackbench(struct parse_ctx *pc, const char *text, size_t len);
int parse_kv(struct parse_ctx *pc, const char *text, size_t len);
int parse_json(struct parse_ctx *pc, const char *text, size_t len);
int parse_perf_lock(struct parse_ctx *pc, const char *text, size_t len);

/*
 * perf-profile with the event slot of every name set to as_event (e.g.
 * "cycles-pp") whatever event the report says it sampled; NULL: the
 * report's own, as parse_perf_profile does.
 */
int parse_perf_profile_as(struct parse_ctx *pc, const char *text, size_t len, const char *as_event);
/*
 * The event a `perf report --header` text says it sampled, as perf printed
 * it ("cpu-clock", "cycles:pp"), into out. Returns 0, or -1 when the text
 * names none.
 */
int perf_profile_event_of(const char *text, size_t len, char *out, size_t outsz);

struct buf;
/* Append the n bytes of perf's symbol sym to out without compiler suffixes
 * (.isra.N, .constprop.N, .part.N), as LKP names perf-profile rows. */
void perf_symbol_fixup(const char *sym, size_t n, struct buf *out);

#endif
