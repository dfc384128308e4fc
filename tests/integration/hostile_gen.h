/*
 * hostile_gen.h - the requests of test_hostile.c too big or too odd for a
 * literal in its table (70 KiB URLs, 2,000 headers, a million-element array,
 * nesting 100,000 deep), built per row by hostile_gen.c.
 */
#ifndef KPERF_HOSTILE_GEN_H
#define KPERF_HOSTILE_GEN_H

#include "tests/integration/hostile.h"

/* Request parts too big or too odd for a literal; built per row. */
enum gen {
	G_NONE,
	G_URL_70K,
	G_URL_16K,
	G_PATH_70K,
	G_PATH_8K,
	G_PATH_DOTS,
	G_HDR_70K,
	G_HDR_2000,
	G_COOKIE_70K,
	G_AUTH_10K,
	G_AUTH_70K,
	G_AUTH_REVOKED,
	G_BIGINT,
	G_NEST_33,
	G_NEST_100K,
	G_NEST_OBJ_200K,
	G_NEST_IN_STRING,
	G_ARRAY_1M_METRIC,
	G_ARRAY_500K_METRIC,
	G_ARRAY_1M_BARE,
	G_ARRAY_1M_RUNS,
	G_ARRAY_1M_COMMITS,
	G_METRICS_10001,
	G_VALUES_110K,
	G_BATCH_1001,
	G_BODY_OVER,
	G_CHUNKED_5M,
	G_METRIC_UTF8,
	G_UNKNOWN_UTF8,
	G_TAIL_64K1,
	G_RAW_NUL,
	G_METRIC_257,
	G_RUN_ID_129,
	G_SUB_NEST_100K,
};

/* A run of suite "hostile" on machine hx-m1: its head up to the metrics,
 * and whole with extra keys before two values of hx.throughput. */
/* clang-format off */
#define RUN_HEAD(id)                                                                         \
	"{\"run_id\":\"" id "\",\"machine\":{\"name\":\"hx-m1\"},"                       \
	"\"kernel\":{\"release\":\"6.1-hx\"},"                                               \
	"\"test\":{\"suite\":\"hostile\"},"
#define RUN(id, extra) RUN_HEAD(id) extra "\"metrics\":{\"hx.throughput\":[1,2]}}"
/* clang-format on */

/* A row's request, with what was built for it. */
struct built {
	struct hreq q;
	char *owned[2];
	char **lines; /* generated header lines */
	const char *hdr[2];
};

/* Generator g's parts of b, whose fixed parts the caller set; revoked_auth
 * is the Authorization value of a revoked token (G_AUTH_REVOKED). */
void hostile_build_gen(struct built *b, enum gen g, const char *revoked_auth);
/* Free what was built for b. */
void hostile_built_release(struct built *b);

#endif
