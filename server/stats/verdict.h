/*
 * verdict.h - kperf's verdict on one metric of a commit pair: a floor on the
 * size of the change, then a statistical test (the trend's history noise when
 * known, else Welch, else LKP's range rule), and Benjamini-Hochberg across the
 * many metrics of one pair. Pure: numbers in, a decision out. The regression
 * worker calls it per commit pair; tests/bench/detect.c measures it.
 */
#ifndef KPERF_VERDICT_H
#define KPERF_VERDICT_H

#include <stddef.h>

#include "server/stats/stats.h"

#include "server/stats/compare.h"
#include "server/stats/direction.h"

/*
 * The verdict, in one paragraph (the README's account of it):
 *
 * A change counts when (1) its size passes the metric's floor and (2) a test
 * says it is real. The size is |mean(target) - mean(base)|: in percent of the
 * base mean, or in percentage points for absolute rows (lkp_is_absolute:
 * perf-profile.*, names ending in '%'). Default floors: 1% for benchmark KPIs
 * and performance monitors (lkp_is_perf_metric), 5% for other monitors, 1
 * point for absolute rows, and LKP's absolute floors for tiny counters (spec
 * rule 5: *vmstat*nr_* max >= 100, proc-vmstat.* and *meminfo* max > 1000,
 * lock_stat.* change > 10000 (> 1000 for *time*), interrupts.* and softirqs.*
 * max > 10000, *.time.elapsed_time* max >= 10 and change >= 5). A per-metric
 * override replaces all of that for the metrics its glob matches.
 * The test, first that applies:
 *  - "history": the trend's history knows its noise (struct noise_hist,
 *    from verdict_noise_from_history over earlier commits of the trend).
 *    A run further than 4.5 history sigmas from its side's median (n >= 3)
 *    is a broken run and is set aside; if the pair's remaining spread is
 *    far above the history's (F test, p < 0.001) the history does not
 *    describe this pair and the next test applies. Else the pair's spread
 *    joins the history's pool, and Student's t of the mean difference (each
 *    side's noise sigma_rel * its mean / sqrt(n)) with the pooled df is
 *    tested at cfg->alpha_history (default VERDICT_ALPHA_HISTORY = 0.035,
 *    chosen with `make bench-detect`); the plain means must move the same
 *    way as the tested ones. Works with any sample counts, 1 and 1 included.
 *  - "welch": both sides have >= 3 samples: Welch's 95% CI excludes zero
 *    (p < 0.05).
 *  - "lkp": one side has < 3 samples (or Welch cannot run: constant data):
 *    LKP's range rule (lkp_changed) on the per-run values.
 *  - "none": both sides have < 3 samples and no history: noise.
 * A real change of a metric with a direction is a regression or an
 * improvement; without one (DIR_NONE) it is "changed".
 */

/* The history test's level: kperf's false alarms are to stay at most half of
 * LKP's rule's, and within that the level is spent on detection. Chosen with
 * `make bench-detect` (its TUNING tables) as the largest level of its grid
 * whose false alarms keep a tenth of that half in reserve on every goal set:
 * 3.2% against LKP's 7.3% (histories of 8-40 commits, 3-5 runs), 3.6% against
 * 8.8% (8-commit histories), 3.9% against 15.7% (3-run commits).
 * 0.04 would leave no reserve (3.6% against 7.3%), 0.03 detects 0.6-0.8
 * points fewer steps. verdict.c says why the level, not the pooling, moved. */
#define VERDICT_ALPHA_HISTORY 0.035
/* Welch's level (its 95% CI excluding zero). */
#define VERDICT_ALPHA_WELCH 0.05
/* History is trusted from this many commits with >= 2 samples each. */
#define VERDICT_HIST_MIN_COMMITS 4
/* Default floors. */
#define VERDICT_FLOOR_PERF_PCT 1.0    /* benchmark KPIs, performance monitors */
#define VERDICT_FLOOR_MONITOR_PCT 5.0 /* other monitors */
#define VERDICT_FLOOR_ABS_PP 1.0      /* absolute rows, percentage points */
/* Limits of a configuration spec. */
#define VERDICT_CONFIG_MAX_RULES 256
#define VERDICT_CONFIG_MAX_GLOB 256

/* A trend's within-commit noise, pooled over its history. */
struct noise_hist {
	size_t ncommits;  /* commits with >= 2 finite samples and a non-zero mean */
	double sigma_rel; /* one sample's standard deviation / its commit's mean */
	double df;        /* degrees of freedom of the estimate (kept commits) */
};

/*
 * Pools the within-commit noise of a history: commit i has samples[i][0..n[i])
 * (every value of every run; samples[i] may be NULL when n[i] == 0). Each
 * commit with >= 2 samples, all finite, and a non-zero mean gives its sample
 * variance relative to its mean squared, so steps and drift between commits
 * do not enter. Robust pooling in two stages: the median of the commits'
 * variances (each made median-unbiased for its chi-square df) is a first
 * guess that broken commits cannot move; then commits whose variance is
 * beyond the 99.9% chi-square quantile under that guess (a broken run) are
 * left out and the rest are pooled df-weighted, as a textbook pooled
 * variance, divided by the normal-theory mean of the cut chi-square so that
 * the estimate stays unbiased. The pooled mean (not the median) keeps heavy
 * tails in the estimate: the history test then stays calibrated on Student
 * t(3) noise. Returns 0 and fills *out; -1 (out zeroed) when fewer than
 * VERDICT_HIST_MIN_COMMITS commits qualify or an argument is NULL.
 */
int verdict_noise_from_history(const double *const *samples, const size_t *n, size_t ncommits,
                               struct noise_hist *out);
/*
 * The same with archived runs: arch NULL, or arch[i] the summaries of commit
 * i's archived runs (n 0 when none), joined to its samples (see stats_moments).
 */
int verdict_noise_from_history_ex(const double *const *samples, const size_t *n,
                                  const struct stats_moments *arch, size_t ncommits,
                                  struct noise_hist *out);

/* A floor: the change must be >= value in its unit. */
enum verdict_unit {
	VERDICT_UNIT_PCT, /* percent of the base mean */
	VERDICT_UNIT_PP,  /* absolute change (percentage points for % rows) */
};

struct verdict_rule {
	char *glob; /* fnmatch(3) pattern over the metric name; owned */
	double value;
	enum verdict_unit unit;
};

/* Floors and levels. Zero-initialised or verdict_config_init()ed = defaults
 * (a zero field means its default). Read-only once built: share freely. */
struct verdict_config {
	double floor_perf_pct;      /* 0: VERDICT_FLOOR_PERF_PCT */
	double floor_monitor_pct;   /* 0: VERDICT_FLOOR_MONITOR_PCT */
	double floor_abs_pp;        /* 0: VERDICT_FLOOR_ABS_PP */
	double alpha_history;       /* 0: VERDICT_ALPHA_HISTORY */
	struct verdict_rule *rules; /* first match wins; owned */
	size_t nrules;
};

/* Defaults, no overrides. */
void verdict_config_init(struct verdict_config *cfg);

/*
 * Parses overrides "GLOB=VALUE[,GLOB=VALUE...]" where VALUE is a number
 * followed by "%" (percent of the base) or "pp" (absolute change: percentage
 * points of an absolute row, the metric's own unit otherwise), e.g.
 * "perf-profile.*=2pp,proc-vmstat.pgscan_*=10%,lock_stat.*=3%". The GLOB
 * "default.perf", "default.monitor" or "default.absolute" sets a default
 * floor instead (with "%", "%" and "pp"). Blanks around items are ignored;
 * a glob cannot contain ',' (the last '=' of an item splits it).
 * A default set to 0 means the built-in one; "*=0%" removes every floor.
 * spec NULL or "" gives the defaults. Initialises *cfg itself (any previous
 * content is not released). Returns 0; on error -1 with *cfg left at the
 * defaults and a one-line reason in err (if errlen > 0), e.g.
 * "item 2 \"lock_stat.*=x\": value is not a number".
 */
int verdict_config_parse(struct verdict_config *cfg, const char *spec, char *err, size_t errlen);

/* Frees the rules and resets *cfg to the defaults; accepts NULL. */
void verdict_config_release(struct verdict_config *cfg);

/* One metric of a commit pair. Everything is borrowed for the call. */
struct verdict_in {
	const char *metric; /* required */
	const char *suite;  /* may be NULL */
	enum direction dir;
	const double *base; /* every value of every run, pooled */
	size_t nb;
	const double *target;
	size_t nt;
	const double *base_runs; /* one value per run; NULL/0: base is used */
	size_t nbr;
	const double *target_runs; /* one value per run; NULL/0: target is used */
	size_t ntr;
	const struct noise_hist *hist;    /* NULL: unknown */
	const struct verdict_config *cfg; /* NULL: defaults */
	/* archived runs of each side (NULL or n 0: none), their values not
	 * in base / target (which may then be empty), their means in the runs:
	 * a side with archived runs has no history test (it cleans the values
	 * themselves); Welch's runs on the moments */
	const struct stats_moments *base_arch, *target_arch;
};

struct verdict_out {
	double change_pct; /* 100 (mt - mb) / |mb|; NaN when mb == 0 */
	double change_abs; /* mt - mb */
	int absolute;      /* lkp_is_absolute(metric): shown as change_abs */
	int passes_floor;  /* 1 when the size passes the floor */
	int lkp_changed;   /* LKP's rule on the per-run values: 1 or 0 */
	double p;          /* the deciding test's p; NaN for "lkp" and "none" */
	const char *test;  /* "history", "welch", "lkp" or "none" (static) */
	enum verdict verdict;
};

/*
 * Decides one metric (see the paragraph above). Requires in->metric, and
 * nb, nt >= 1 with finite values. Returns 0 and fills *out, or -1 on bad
 * input (out then says noise, test "none").
 */
int verdict_decide(const struct verdict_in *in, struct verdict_out *out);

/*
 * Benjamini-Hochberg at level q over p[0..n): keep[i] = 1 when p[i] is a
 * discovery, 0 when not. Entries whose p is NaN (no test) are not counted in
 * n and their keep[i] is left as the caller set it (initialise keep to 1 to
 * let untested rows stand). The caller turns a real-looking change whose
 * keep[i] is 0 into noise. O(n log n); allocates (aborts on OOM).
 */
void verdict_fdr(const double *p, size_t n, double q, int *keep);

#endif
