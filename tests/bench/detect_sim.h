/*
 * detect_sim.h - the simulated histories and the methods of the detector
 * benchmark (detect.c), in detect_sim.c.
 */
#ifndef KPERF_DETECT_SIM_H
#define KPERF_DETECT_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "server/stats/verdict.h"

#define METRIC "vm-scalability.throughput"
#define SUITE "vm-scalability"
#define LEVEL 1000.0
#define MAX_COMMITS 160
#define MAX_RUNS 10
#define HIST_WINDOW 30 /* commits of history the server would read */

/* A small deterministic PRNG: splitmix64 + Box-Muller. */
struct rng {
	uint64_t s;
};

uint64_t rng_next(struct rng *r);
double rng_unif(struct rng *r); /* (0, 1) */
double rng_normal(struct rng *r);
size_t rng_range(struct rng *r, size_t lo, size_t hi); /* [lo, hi] */

/* Noise with unit standard deviation (the "sigma" of the tables). */
enum noise { N_NORMAL, N_T3, N_BIMODAL, N_OUTLIER, N_KINDS };

double noise_draw(struct rng *r, enum noise k);

/* One simulated trend, drawn from a scenario by trend_make. */
struct trend {
	size_t ncommits;
	size_t n[MAX_COMMITS];
	double v[MAX_COMMITS][MAX_RUNS];
	const double *p[MAX_COMMITS];
};

struct scenario {
	size_t ncommits;
	size_t runs_lo, runs_hi; /* runs per commit, drawn per commit */
	enum noise noise;
	double sigma_pct; /* noise of one run, % of the level */
	double drift;     /* level drift per commit, in sigma (linear) */
	double walk;      /* random-walk drift per commit, in sigma */
	double commit_sd; /* between-commit (boot, layout) noise, in sigma */
	int drift_kind;   /* 0 none, 1 linear, 2 random walk */
	size_t nsteps;
	size_t step_at[4];
	double step_pct[4]; /* relative step at step_at[i], cumulative */
};

void trend_make(struct rng *r, const struct scenario *sc, struct trend *t);

/* The methods on one commit pair (commit k against k - 1). */
enum method { M_LKP, M_WELCH, M_KPERF_PAIR, M_KPERF, M_COUNT };
extern const char *const method_name[M_COUNT];

/* The history the server has when it judges commit k against k - 1. */
int trend_history(const struct trend *t, size_t k, struct noise_hist *h);
/* +1 / -1: method m calls a change up / down; 0: noise. */
int decide(enum method m, const struct trend *t, size_t k, const struct noise_hist *h,
           double alpha);

#endif
