/*
 * hostile_gen.c - the generated requests of test_hostile.c's table: bodies,
 * targets and headers built per row (hostile_gen.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/kperf_limits.h"
#include "tests/integration/hostile_gen.h"

/* head + n times unit + tail, malloc'd. */
static char *rep(const char *head, const char *unit, size_t n, const char *tail)
{
	size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
	char *s = malloc(hl + ul * n + tl + 1), *p = s;

	memcpy(p, head, hl);
	p += hl;
	for (size_t i = 0; i < n; i++, p += ul)
		memcpy(p, unit, ul);
	memcpy(p, tail, tl + 1);
	return s;
}

/* (a + n times unit) closed by n times close: nesting n deep. */
static char *nest(const char *head, const char *open, size_t n, const char *mid, const char *close,
                  const char *tail)
{
	char *a = rep(head, open, n, mid), *s = rep(a, close, n, tail);
	free(a);
	return s;
}

static char *own(struct built *b, char *s)
{
	b->owned[b->owned[0] ? 1 : 0] = s;
	return s;
}

static void header(struct built *b, char *line)
{
	b->hdr[0] = own(b, line);
	b->q.headers = b->hdr;
}

#define RUN_TAIL "\"metrics\":{\"hx.throughput\":[1,2]}}"
#define ONE_M (1000u * 1000u)

static void build_body(struct built *b, enum gen g)
{
	struct buf s = BUF_INIT;

	switch (g) {
	case G_METRICS_10001:
		buf_puts(&s, RUN_HEAD("hx-m10001") "\"metrics\":{");
		for (int i = 0; i <= LIMIT_METRICS_PER_RUN; i++)
			buf_printf(&s, "%s\"m%d\":1", i ? "," : "", i);
		buf_puts(&s, "}}");
		break;
	case G_VALUES_110K:
		buf_puts(&s, RUN_HEAD("hx-v110k") "\"metrics\":{");
		for (int m = 0; m < 11; m++) {
			buf_printf(&s, "%s\"m%d\":[1", m ? "," : "", m);
			for (int i = 1; i < LIMIT_VALUES_PER_METRIC; i++)
				buf_puts(&s, ",1");
			buf_putc(&s, ']');
		}
		buf_puts(&s, "}}");
		break;
	default: /* G_BATCH_1001 */
		buf_puts(&s, "{\"runs\":[");
		for (int i = 0; i <= LIMIT_RUNS_PER_BATCH; i++)
			buf_printf(&s, "%s" RUN_HEAD("hx-b%04d") RUN_TAIL, i ? "," : "", i);
		buf_puts(&s, "]}");
		break;
	}
	b->q.body = own(b, buf_detach(&s, NULL));
}

/* The request line and headers of generator g; 0 when g builds none of them. */
static int build_head(struct built *b, enum gen g, const char *revoked_auth)
{
	switch (g) {
	case G_URL_70K:
		b->q.target = own(b, rep("/api/v1/runs?machine=", "a", 70000, ""));
		break;
	case G_URL_16K:
		b->q.target = own(b, rep("/api/v1/runs?machine=", "a", 16000, ""));
		break;
	case G_PATH_70K:
		b->q.target = own(b, rep("/static/", "a", 70000, ""));
		break;
	case G_PATH_8K:
		b->q.target = own(b, rep("/static/", "a/", 4000, "x"));
		break;
	case G_PATH_DOTS:
		b->q.target = own(b, rep("/static/", "../", 10000, "etc/passwd"));
		break;
	case G_HDR_70K:
		header(b, rep("X-Big: ", "a", 70000, ""));
		break;
	case G_HDR_2000:
		b->lines = calloc(2001, sizeof(char *));
		for (int i = 0; i < 2000; i++) {
			b->lines[i] = malloc(64);
			snprintf(b->lines[i], 64, "X-H%04d: %s", i,
			         "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
		}
		b->q.headers = (const char *const *)b->lines;
		break;
	case G_COOKIE_70K:
		header(b, rep("Cookie: k=", "a", 70000, ""));
		break;
	case G_AUTH_10K:
		b->q.auth = own(b, rep("Bearer ", "A", 10000, ""));
		break;
	case G_AUTH_70K:
		b->q.auth = own(b, rep("Bearer ", "A", 70000, ""));
		break;
	case G_AUTH_REVOKED:
		b->q.auth = revoked_auth;
		break;
	default:
		return 0;
	}
	return 1;
}

/* The body of generator g (G_NONE: none). */
static void build_payload(struct built *b, enum gen g)
{
	switch (g) {
	case G_NONE:
		break;
	case G_BIGINT:
		b->q.body = own(
		    b, rep(RUN_HEAD("hx-n6") "\"metrics\":{\"hx.throughput\":[1", "0", 400, "]}}"));
		break;
	case G_NEST_33:
		b->q.body = own(b, nest("", "[", LIMIT_JSON_DEPTH + 1, "", "]", ""));
		break;
	case G_NEST_100K:
		b->q.body = own(b, nest("", "[", 100000, "", "]", ""));
		break;
	case G_NEST_OBJ_200K:
		b->q.body = own(b, nest("", "{\"a\":", 200000, "1", "}", ""));
		break;
	case G_NEST_IN_STRING:
		b->q.body = own(b, rep(RUN_HEAD("hx-nest-str") "\"output_tail\":\"", "[{", 5000,
		                       "\"," RUN_TAIL));
		break;
	case G_ARRAY_1M_METRIC:
		b->q.body = own(b, rep(RUN_HEAD("hx-big1") "\"metrics\":{\"hx.throughput\":[", "0,",
		                       ONE_M - 1, "0]}}"));
		break;
	case G_ARRAY_500K_METRIC:
		b->q.body = own(b, rep(RUN_HEAD("hx-big2") "\"metrics\":{\"hx.throughput\":[", "0,",
		                       ONE_M / 2 - 1, "0]}}"));
		break;
	case G_ARRAY_1M_BARE:
	case G_ARRAY_1M_COMMITS:
		b->q.body = own(b, rep("[", "0,", ONE_M - 1, "0]"));
		break;
	case G_ARRAY_1M_RUNS:
		b->q.body = own(b, rep("{\"runs\":[", "0,", ONE_M - 1, "0]}"));
		break;
	case G_METRICS_10001:
	case G_VALUES_110K:
	case G_BATCH_1001:
		build_body(b, g);
		break;
	case G_BODY_OVER:
		b->q.body = own(b, rep("", " ", LIMIT_BODY_BYTES_DEFAULT, "{}"));
		break;
	case G_CHUNKED_5M:
		b->q.body = own(b, rep("[", "0,", (5u << 20) / 2, "0]"));
		b->q.chunked = 1;
		break;
	case G_METRIC_UTF8:
		b->q.body =
		    own(b, rep(RUN_HEAD("hx-u8") "\"metrics\":{\"", "\xc3\xa9", 800, "\":[1]}}"));
		break;
	case G_UNKNOWN_UTF8:
		b->q.body =
		    own(b, rep(RUN_HEAD("hx-ign-u8") "\"", "\xc3\xa9", 600, "\":1," RUN_TAIL));
		break;
	case G_TAIL_64K1:
		b->q.body = own(b, rep(RUN_HEAD("hx-tail") "\"output_tail\":\"", "x",
		                       LIMIT_OUTPUT_TAIL + 1, "\"," RUN_TAIL));
		break;
	case G_RAW_NUL: {
		char *s = own(b, strdup(RUN("hx-e10", "\"command\":\"a#b\",")));
		b->q.len = strlen(s);
		*strchr(s, '#') = '\0';
		b->q.body = s;
		break;
	}
	case G_METRIC_257:
		b->q.body = own(b, rep(RUN_HEAD("hx-257") "\"metrics\":{\"", "a",
		                       LIMIT_METRIC_NAME + 1, "\":[1]}}"));
		break;
	case G_RUN_ID_129:
		b->q.body =
		    own(b, rep("{\"run_id\":\"", "a", LIMIT_RUN_ID + 1,
		               "\",\"machine\":{\"name\":\"hx-m1\"},\"kernel\":{\"release\":"
		               "\"6.1-hx\"},\"test\":{\"suite\":\"hostile\"}," RUN_TAIL));
		break;
	case G_SUB_NEST_100K:
		b->q.body = own(b, nest("{\"email\":", "[", 100000, "", "]", "}"));
		break;
	default: /* built by build_head */
		break;
	}
}

/* Generator g's parts of b, whose fixed parts the caller set; revoked_auth
 * is the Authorization value of a revoked token (G_AUTH_REVOKED). */
void hostile_build_gen(struct built *b, enum gen g, const char *revoked_auth)
{
	if (!build_head(b, g, revoked_auth))
		build_payload(b, g);
}

void hostile_built_release(struct built *b)
{
	free(b->owned[0]);
	free(b->owned[1]);
	for (int i = 0; b->lines && b->lines[i]; i++)
		free(b->lines[i]);
	free(b->lines);
}
