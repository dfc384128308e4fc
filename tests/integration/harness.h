/*
 * harness.h - end-to-end test machinery: a real kperfd on a free port
 * against a throwaway database of the test PostgreSQL cluster (started by
 * scripts/test.sh), driven over HTTP with libcurl.
 */
#ifndef KPERF_HARNESS_H
#define KPERF_HARNESS_H

#include <curl/curl.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stddef.h>
#include <sys/types.h>

#define TOKEN_COLLECTOR "test_collector_token_0001"
#define TOKEN_ADMIN "test_admin_token_00000001"

struct kperfd {
	pid_t pid;
	int port;
	char db[64];
	char pg[512];       /* server conninfo without dbname */
	char conninfo[768]; /* with dbname */
	char dir[256];      /* port file and log */
	char log[300];
};

struct resp {
	long status;
	char *body;
	size_t len;
	char retry_after[32];
	char content_type[128];
	char etag[64];
	char encoding[32];
	char lsn[40]; /* X-Kperf-LSN: a write's WAL position, with standbys */
	int has_csp;
};

/* The test cluster's conninfo (KPERF_TEST_PG), asserting it is set. */
const char *harness_pg(void);

/* Create a fresh database on pg (NULL: the test cluster) and start kperfd on it. */
void kperfd_start(struct kperfd *k, const char *pg);
/* The same without starting kperfd: kperfd_restart starts it later. */
void kperfd_prepare(struct kperfd *k, const char *pg);
/* Extra "NAME=value" settings for the kperfd processes started after this
 * call (NULL-terminated, borrowed; NULL clears). */
void kperfd_env(const char *const *env);

/* A new directory KPERF_TEST_TMP/<name>-XXXXXX (mkdtemp, mode 0755) into
 * out: no other test process, of this pass or another, has it. */
void harness_tmpdir(char *out, size_t outsz, const char *name);

/* Seconds on the monotonic clock, for deadlines. */
double harness_now(void);

/*
 * A PostgreSQL cluster of the test's own (scripts/pg.sh), for tests that stop
 * it or need no other test's writes in it: KPERF_TEST_TMP/<name>-XXXXXX,
 * started with options as KPERF_PG_OPTIONS (NULL: pg.sh's defaults).
 * pg_cluster_start asserts it started; pg_cluster_ctl runs pg.sh verb
 * ("start", "stop") again and returns its exit status.
 */
struct pg_cluster {
	char dir[512];
	char pg[700]; /* conninfo without dbname, for kperfd_start */
	int port;     /* names the Unix socket: pg.sh listens on no TCP port */
	const char *options;
};
void pg_cluster_start(struct pg_cluster *cl, const char *name, const char *options);
int pg_cluster_ctl(const struct pg_cluster *cl, const char *verb);
/*
 * A hot standby of primary (pg.sh standby: pg_basebackup -R), in sb's own
 * directory and port when sb->dir is set (made again there after a
 * failover), else a new one named name; it connects to the primary as name
 * (what synchronous_standby_names names). Asserts it started.
 */
void pg_cluster_standby(struct pg_cluster *sb, const struct pg_cluster *primary,
			const char *name, const char *options);
/* Run sql on the cluster's postgres database; asserts it worked. */
void pg_cluster_exec(const struct pg_cluster *cl, const char *sql);

/* A free port on 127.0.0.1 in 20000-31999, below the ephemeral range
 * (asserted to start at 32000 or above), claimed for this run. */
int harness_free_port(void);

/* 1 once something listens on 127.0.0.1:port, 0 if nothing does within seconds. */
int harness_wait_port(int port, int seconds);

/* A real SMTP server (Debian's python3-aiosmtpd) on 127.0.0.1:port writing
 * a Maildir under dir; port 0 picks one (*port gets it). Returns its pid. */
pid_t smtp_start(int *port, const char *dir);
/* The same refusing messages over max_bytes (its SIZE extension, 552);
 * max_bytes 0: aiosmtpd's own limit, 32 MiB. */
pid_t smtp_start_limit(int *port, const char *dir, long max_bytes);
void smtp_stop(pid_t pid);
/* Messages delivered to the Maildir, and the text of the i-th (malloc'd). */
int maildir_count(const char *dir);
char *maildir_read(const char *dir, int i);

/* Start kperfd again on k's existing database (after kperfd_kill). */
void kperfd_restart(struct kperfd *k);
/* Stop kperfd only (SIGTERM, wait). */
void kperfd_kill(struct kperfd *k);
/* Stop kperfd and drop its database. */
void kperfd_stop(struct kperfd *k);

/* Run kperfd with args (e.g. "token", "list") on k's database; returns the exit
 * status, stdout into *out (malloc'd, may be NULL) and stderr into *err. */
int kperfd_cli(struct kperfd *k, const char *const *args, char **out, char **err);

/* One HTTP request; body may be NULL. Asserts the transport worked. */
void http_call(const struct kperfd *k, const char *method, const char *path, const char *token,
	       const char *content_type, const char *body, size_t len, struct resp *r);
void http_post_json(const struct kperfd *k, const char *path, const char *token,
		    const char *body, struct resp *r);
/* POST body as JSON, asserting it is taken: 201, or 200 for what was already there. */
void harness_post_ok(const struct kperfd *k, const char *path, const char *token, const char *body);
void http_get(const struct kperfd *k, const char *path, struct resp *r);
/* GET with one extra request header line, e.g. "Accept-Encoding: gzip". */
void http_get_with(const struct kperfd *k, const char *path, const char *header, struct resp *r);
void resp_release(struct resp *r);
/* Reset r to an empty answer and point h's body and header callbacks at it,
 * for a request of h's own (a raw target, a reused connection). */
void harness_curl_capture(CURL *h, struct resp *r);
/* A handle for a lab's posts to k's POST /api/v1/runs on one keep-alive
 * connection: JSON, the collector's token, no Expect, timeout seconds;
 * *hdr is the header list to free after curl_easy_cleanup. */
CURL *harness_runs_handle(const struct kperfd *k, long timeout, struct curl_slist **hdr);

/* Parse a response body (numbers as doubles); asserts it is JSON. */
json_t *resp_json(const struct resp *r);

/* GET path of k, asserting the answer's status is want; its JSON. */
json_t *harness_get_json(const struct kperfd *k, const char *path, long want);

/* A database connection to k's database, and a one-value query helper. */
PGconn *harness_db(const struct kperfd *k);
long harness_count(const struct kperfd *k, const char *sql);
/* harness_count keeps its connection between calls; this closes it. */
void harness_count_close(void);
/* The same with text parameters $1..$n. */
long harness_count_params(const struct kperfd *k, const char *sql, int n,
			  const char *const *params);

/* The value of a sample of k's GET /metrics, named with its labels as
 * printed (e.g. "kperf_read_cache_hits_total"); asserts it is there. */
long harness_metric(const struct kperfd *k, const char *name);

/* Whole file, NUL-terminated; asserts it can be read. */
char *harness_slurp(const char *path, size_t *len);

/* Everything readable from fd until EOF, NUL-terminated (malloc'd). */
char *harness_read_fd(int fd);

/* A TCP port on 127.0.0.1 nobody listens on: a claimed one of
 * harness_free_port's, which nothing binds. */
int harness_closed_port(void);

/* One request with an optional JSON body; the status, the answer parsed into
 * *j when j (NULL for an empty body). */
long harness_call(const struct kperfd *k, const char *method, const char *path, const char *token,
		  const char *body, json_t **j);

/*
 * A run document for POST /api/v1/runs (harness_run.c):
 *   {"run_id", "machine": {"name", machine_more...},
 *    "kernel": {"commit", "parent", "release", kernel_more...},
 *    "test": {"suite", "params"}, more..., "metrics"}
 * A NULL string or object is left out, and so is an object left empty.
 * The json_t members are stolen by harness_run_doc: a run_doc is used once.
 */
struct run_doc {
	const char *run_id;
	const char *machine;  /* machine.name */
	json_t *machine_more; /* further members of machine (cpu_model, ...) */
	const char *commit;   /* kernel.commit */
	const char *parent;   /* kernel.parent */
	const char *release;  /* kernel.release */
	json_t *kernel_more;  /* further members of kernel (series, subject, ...) */
	const char *suite;    /* test.suite */
	json_t *params;       /* test.params */
	json_t *more;         /* further top-level members (command, job, variant, ...) */
	json_t *metrics;      /* metric name -> array of samples */
};

/* The document of d, a new reference. */
json_t *harness_run_doc(const struct run_doc *d);
/* POST d's document to k's /api/v1/runs with token (NULL: TOKEN_COLLECTOR);
 * the status. The answer goes into *r when r is not NULL (resp_release it). */
long harness_post_run(const struct kperfd *k, const char *token, const struct run_doc *d,
		      struct resp *r);
/* The same with the collector token, asserting the run is stored (201). */
void harness_store_run(const struct kperfd *k, const struct run_doc *d);

/* Two commits, HARNESS_SHA_A ("mm: a", release 6.1.0-a) and its child
 * HARNESS_SHA_B ("mm: b", 6.1.0-b), posted to k; asserts they are stored. */
#define HARNESS_SHA_A "aaaa1631f313f75c9d8f4b5e0e9cba1c1bd1d68e"
#define HARNESS_SHA_B "bbbb1631f313f75c9d8f4b5e0e9cba1c1bd1d68e"
void harness_seed_commits(const struct kperfd *k);

/* The usual suite: each test gets K, a kperfd on a fresh database of the test
 * cluster, stopped (and its database dropped) after it. */
#define KPERFD_SUITE(name, secs)                                                     \
	static struct kperfd K;                                                      \
	static void kperfd_suite_setup(void)                                         \
	{                                                                            \
		kperfd_start(&K, NULL);                                              \
	}                                                                            \
	static void kperfd_suite_teardown(void)                                      \
	{                                                                            \
		kperfd_stop(&K);                                                     \
	}                                                                            \
	TestSuite(name, .init = kperfd_suite_setup, .fini = kperfd_suite_teardown, \
		  .timeout = secs)

/* K and url, K's base URL ("http://127.0.0.1:PORT") for kperf-collect, with
 * the suite's init and fini (for a TestSuite of its own), or the suite. */
#define KPERFD_URL_FIXTURE                                                          \
	static struct kperfd K;                                                      \
	static char url[64];                                                         \
	static void kperfd_suite_setup(void)                                         \
	{                                                                            \
		kperfd_start(&K, NULL);                                              \
		snprintf(url, sizeof(url), "http://127.0.0.1:%d", K.port);           \
	}                                                                            \
	static void kperfd_suite_teardown(void)                                      \
	{                                                                            \
		kperfd_stop(&K);                                                     \
	}
#define KPERFD_URL_SUITE(name, secs)                                                 \
	KPERFD_URL_FIXTURE                                                           \
	TestSuite(name, .init = kperfd_suite_setup, .fini = kperfd_suite_teardown, \
		  .timeout = secs)

#endif
