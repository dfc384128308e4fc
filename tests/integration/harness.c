/*
 * harness.c - starts kperfd processes for end-to-end tests and talks HTTP
 * to them. The binary is $KPERF_BIN (build/kperfd by default), so the same
 * tests drive the sanitizer build.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/integration/harness.h"

const char *harness_pg(void)
{
	const char *pg = getenv("KPERF_TEST_PG");
	cr_assert_not_null(pg, "KPERF_TEST_PG is not set: run the tests with scripts/test.sh");
	return pg;
}

static void admin_exec(const char *pg, const char *sql)
{
	char conninfo[700];
	PGconn *c;
	PGresult *r;

	snprintf(conninfo, sizeof(conninfo), "%s dbname=postgres", pg);
	c = PQconnectdb(conninfo);
	cr_assert_eq(PQstatus(c), CONNECTION_OK, "test cluster: %s", PQerrorMessage(c));
	r = PQexec(c, sql);
	cr_assert(PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK,
		  "%s: %s", sql, PQresultErrorMessage(r));
	PQclear(r);
	PQfinish(c);
}

static const char *const *extra_env;

void kperfd_env(const char *const *env)
{
	extra_env = env;
}

static void spawn(struct kperfd *k)
{
	const char *bin = getenv("KPERF_BIN") ? getenv("KPERF_BIN") : "build/kperfd";
	char portfile[300];
	FILE *f;

	snprintf(portfile, sizeof(portfile), "%s/port", k->dir);
	unlink(portfile);
	k->pid = fork();
	cr_assert_neq(k->pid, -1);
	if (k->pid == 0) {
		int fd = open(k->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		/* nothing of the runner's output is held open, and a test that
		 * fails before kperfd_stop leaves no kperfd behind */
		dup2(fd, 1);
		dup2(fd, 2);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		setenv("KPERF_DATABASE_URL", k->conninfo, 1);
		setenv("KPERF_BOOTSTRAP_TOKEN", TOKEN_COLLECTOR, 1);
		setenv("KPERF_BOOTSTRAP_ADMIN_TOKEN", TOKEN_ADMIN, 1);
		setenv("KPERF_CONFIG", "/dev/null", 1);
		for (const char *const *e = extra_env; e && *e; e++)
			putenv((char *)*e);
		/* two HTTP threads unless a test's environment says how many */
		execl(bin, bin, "serve", "--port", "0", "--threads",
		      getenv("KPERF_THREADS") ? getenv("KPERF_THREADS") : "2", "--port-file", portfile,
		      (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 600; i++) {
		int status;
		f = fopen(portfile, "r");
		if (f) {
			int ok = fscanf(f, "%d", &k->port) == 1;
			fclose(f);
			if (ok)
				return;
		}
		if (waitpid(k->pid, &status, WNOHANG) == k->pid)
			cr_assert_fail("kperfd exited during start-up; see %s", k->log);
		usleep(50000);
	}
	cr_assert_fail("kperfd did not start in 30 s; see %s", k->log);
}

static void prepare(struct kperfd *k, const char *pg, const char *template);

/* A kperfd on a database of its own, copied from the run's migrated
 * template ($KPERF_TEST_TEMPLATE, made by scripts/test.sh) when there is
 * one on this cluster: kperfd starts with nothing to migrate. */
void kperfd_start(struct kperfd *k, const char *pg)
{
	const char *t = getenv("KPERF_TEST_TEMPLATE");

	prepare(k, pg, !pg && t && *t ? t : NULL);
	spawn(k);
}

void kperfd_prepare(struct kperfd *k, const char *pg)
{
	prepare(k, pg, NULL);
}

static void prepare(struct kperfd *k, const char *pg, const char *template)
{
	static int seq;
	char sql[256];

	memset(k, 0, sizeof(*k));
	snprintf(k->pg, sizeof(k->pg), "%s", pg ? pg : harness_pg());
	snprintf(k->db, sizeof(k->db), "kperf_t_%d_%d_%ld", (int)getpid(), seq++,
		 (long)time(NULL) % 100000);
	snprintf(k->conninfo, sizeof(k->conninfo), "%s dbname=%s", k->pg, k->db);
	snprintf(k->dir, sizeof(k->dir), "%s/%s",
		 getenv("KPERF_TEST_TMP") ? getenv("KPERF_TEST_TMP") : "/tmp", k->db);
	mkdir(k->dir, 0755);
	snprintf(k->log, sizeof(k->log), "%s/kperfd.log", k->dir);
	if (template)
		snprintf(sql, sizeof(sql), "CREATE DATABASE %s TEMPLATE %s", k->db, template);
	else
		snprintf(sql, sizeof(sql), "CREATE DATABASE %s", k->db);
	admin_exec(k->pg, sql);
}

void kperfd_restart(struct kperfd *k)
{
	spawn(k);
}

void kperfd_kill(struct kperfd *k)
{
	int status;
	if (k->pid > 0) {
		kill(k->pid, SIGTERM);
		waitpid(k->pid, &status, 0);
	}
	k->pid = 0;
}

void kperfd_stop(struct kperfd *k)
{
	char sql[256];
	char conninfo[700];
	PGconn *c;

	kperfd_kill(k);
	if (!k->db[0])
		return;
	harness_count_close();
	/* Best effort: the cluster may be down in a fault test. */
	snprintf(conninfo, sizeof(conninfo), "%s dbname=postgres", k->pg);
	c = PQconnectdb(conninfo);
	if (PQstatus(c) == CONNECTION_OK) {
		snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s WITH (FORCE)", k->db);
		PQclear(PQexec(c, sql));
	}
	PQfinish(c);
}

/*
 * A free TCP port on 127.0.0.1 below the kernel's ephemeral range (32768 and
 * up), so no kperfd binding port 0 and no outgoing connection can take it
 * between this check and the server's own bind. The test processes that run
 * side by side (criterion's --jobs, the passes scripts/test.sh runs at once)
 * pick from the same range: a port is also claimed with a file in
 * $KPERF_TEST_PORTS (default $KPERF_TEST_TMP/ports), made with O_EXCL, so no
 * two of them are handed the same one in a run.
 */
static struct sockaddr_in loopback(int port)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static int port_claim(int port)
{
	const char *tmp = getenv("KPERF_TEST_TMP") ? getenv("KPERF_TEST_TMP") : "/tmp";
	const char *dir = getenv("KPERF_TEST_PORTS");
	char path[600];
	int fd;

	if (dir && *dir)
		snprintf(path, sizeof(path), "%s", dir);
	else
		snprintf(path, sizeof(path), "%s/ports", tmp);
	mkdir(path, 0755);
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%d", port);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/*
 * The kernel's ephemeral ports (ip_local_port_range) must start above the
 * range handed out here, or a kperfd on --port 0 or an outgoing connection
 * could take a port a test was given. Checked once per process, where
 * /proc shows the range.
 */
static void ephemeral_range_check(void)
{
	static int checked;
	FILE *f;
	int lo, hi;

	if (checked)
		return;
	checked = 1;
	f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
	if (!f)
		return;
	if (fscanf(f, "%d %d", &lo, &hi) == 2)
		cr_assert_geq(lo, 32000,
			      "the ephemeral port range starts at %d (net.ipv4.ip_local_port_range"
			      " %d %d): the tests' ports 20000-31999 would be inside it; set it to"
			      " start at 32000 or above (sysctl -w net.ipv4.ip_local_port_range="
			      "\"32768 60999\")",
			      lo, lo, hi);
	fclose(f);
}

int harness_free_port(void)
{
	static int next;

	ephemeral_range_check();
	for (int i = 0; i < 4000; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0), ok;
		struct sockaddr_in a =
			loopback(20000 + (int)(((long)getpid() * 131 + (long)next++ * 17) % 12000));

		ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
		close(fd);
		if (ok && port_claim(ntohs(a.sin_port)))
			return ntohs(a.sin_port);
	}
	cr_assert_fail("no free port in 20000-31999");
	return 0;
}

void harness_tmpdir(char *out, size_t outsz, const char *name)
{
	const char *tmp = getenv("KPERF_TEST_TMP") ? getenv("KPERF_TEST_TMP") : "/tmp";

	cr_assert_lt(snprintf(out, outsz, "%s/%s-XXXXXX", tmp, name), (int)outsz,
		     "the name %s/%s is too long", tmp, name);
	cr_assert_not_null(mkdtemp(out), "mkdtemp %s: %s", out, strerror(errno));
	/* 0755 as mkdir -p makes it: other users (a cluster's owner) reach into it */
	cr_assert_eq(chmod(out, 0755), 0, "chmod %s: %s", out, strerror(errno));
}

double harness_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int pg_cluster_ctl(const struct pg_cluster *cl, const char *verb)
{
	char cmd[1400];

	/* pg.sh's stderr says why a verb failed */
	snprintf(cmd, sizeof(cmd), "%s%s%sscripts/pg.sh %s %s %d >/dev/null",
		 cl->options ? "KPERF_PG_OPTIONS='" : "", cl->options ? cl->options : "",
		 cl->options ? "' " : "", verb, cl->dir, cl->port);
	return system(cmd);
}

void pg_cluster_start(struct pg_cluster *cl, const char *name, const char *options)
{
	memset(cl, 0, sizeof(*cl));
	cl->options = options;
	cl->port = harness_free_port();
	harness_tmpdir(cl->dir, sizeof(cl->dir), name);
	cr_assert_eq(pg_cluster_ctl(cl, "start"), 0, "cannot start a cluster in %s", cl->dir);
	snprintf(cl->pg, sizeof(cl->pg), "host=%s/sock port=%d user=kperf", cl->dir, cl->port);
}

void pg_cluster_standby(struct pg_cluster *sb, const struct pg_cluster *primary,
			const char *name, const char *options)
{
	char cmd[2400];

	if (!sb->dir[0]) {
		memset(sb, 0, sizeof(*sb));
		sb->port = harness_free_port();
		harness_tmpdir(sb->dir, sizeof(sb->dir), name);
	}
	sb->options = options;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/data' && %s%s%sscripts/pg.sh standby %s %d %s %d %s",
		 sb->dir, options ? "KPERF_PG_OPTIONS='" : "", options ? options : "",
		 options ? "' " : "", primary->dir, primary->port, sb->dir, sb->port, name);
	cr_assert_eq(system(cmd), 0, "cannot make a standby in %s", sb->dir);
	snprintf(sb->pg, sizeof(sb->pg), "host=%s/sock port=%d user=kperf", sb->dir, sb->port);
}

void pg_cluster_exec(const struct pg_cluster *cl, const char *sql)
{
	admin_exec(cl->pg, sql);
}

static int port_open(int port)
{
	struct sockaddr_in a = loopback(port);
	int fd = socket(AF_INET, SOCK_STREAM, 0), ok;

	ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	close(fd);
	return ok;
}

int harness_wait_port(int port, int seconds)
{
	double end = harness_now() + seconds;

	while (!port_open(port)) {
		if (harness_now() >= end)
			return 0;
		usleep(50000);
	}
	return 1;
}

char *harness_read_fd(int fd)
{
	size_t cap = 4096, len = 0;
	char *p = malloc(cap);
	ssize_t n;

	while ((n = read(fd, p + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 2)
			p = realloc(p, cap *= 2);
	}
	p[len] = '\0';
	return p;
}

int kperfd_cli(struct kperfd *k, const char *const *args, char **out, char **err)
{
	const char *bin = getenv("KPERF_BIN") ? getenv("KPERF_BIN") : "build/kperfd";
	int po[2], pe[2], status;
	const char *argv[16];
	pid_t pid;
	int n = 0;

	argv[n++] = bin;
	while (*args && n < 15)
		argv[n++] = *args++;
	argv[n] = NULL;
	cr_assert_eq(pipe(po), 0);
	cr_assert_eq(pipe(pe), 0);
	pid = fork();
	if (pid == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]);
		close(pe[0]);
		setenv("KPERF_DATABASE_URL", k->conninfo, 1);
		setenv("KPERF_CONFIG", "/dev/null", 1);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	/* Outputs are small: read stdout fully, then stderr. */
	*out = harness_read_fd(po[0]);
	*err = harness_read_fd(pe[0]);
	close(po[0]);
	close(pe[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
	struct resp *r = arg;
	size_t n = size * nmemb;
	r->body = realloc(r->body, r->len + n + 1);
	memcpy(r->body + r->len, data, n);
	r->len += n;
	r->body[r->len] = '\0';
	return n;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *arg)
{
	struct resp *r = arg;
	size_t n = size * nmemb;
	if (n > 13 && !strncasecmp(data, "Retry-After: ", 13))
		snprintf(r->retry_after, sizeof(r->retry_after), "%.*s", (int)(n - 13 - 2), data + 13);
	if (n > 6 && !strncasecmp(data, "ETag: ", 6))
		snprintf(r->etag, sizeof(r->etag), "%.*s", (int)(n - 6 - 2), data + 6);
	if (n > 18 && !strncasecmp(data, "Content-Encoding: ", 18))
		snprintf(r->encoding, sizeof(r->encoding), "%.*s", (int)(n - 18 - 2), data + 18);
	if (n > 13 && !strncasecmp(data, "X-Kperf-LSN: ", 13))
		snprintf(r->lsn, sizeof(r->lsn), "%.*s", (int)(n - 13 - 2), data + 13);
	if (n > 24 && !strncasecmp(data, "Content-Security-Policy:", 24))
		r->has_csp = 1;
	if (n > 14 && !strncasecmp(data, "Content-Type: ", 14))
		snprintf(r->content_type, sizeof(r->content_type), "%.*s", (int)(n - 14 - 2),
			 data + 14);
	return n;
}

CURL *harness_runs_handle(const struct kperfd *k, long timeout, struct curl_slist **hdr)
{
	CURL *h = curl_easy_init();
	char url[128];

	cr_assert_not_null(h);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/runs", k->port);
	*hdr = curl_slist_append(NULL, "Content-Type: application/json");
	*hdr = curl_slist_append(*hdr, "Authorization: Bearer " TOKEN_COLLECTOR);
	*hdr = curl_slist_append(*hdr, "Expect:");
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, *hdr);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, timeout);
	return h;
}

void harness_curl_capture(CURL *h, struct resp *r)
{
	memset(r, 0, sizeof(*r));
	r->body = calloc(1, 1);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
}

static const char *extra_header;

void http_get_with(const struct kperfd *k, const char *path, const char *header, struct resp *r)
{
	extra_header = header;
	http_call(k, "GET", path, NULL, NULL, NULL, 0, r);
	extra_header = NULL;
}

void http_call(const struct kperfd *k, const char *method, const char *path, const char *token,
	       const char *content_type, const char *body, size_t len, struct resp *r)
{
	CURL *h = curl_easy_init();
	struct curl_slist *hdr = NULL;
	char url[4096], line[512];
	CURLcode rc;

	harness_curl_capture(h, r);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", k->port, path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(h, CURLOPT_PATH_AS_IS, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
	hdr = curl_slist_append(hdr, "Expect:");
	if (extra_header)
		hdr = curl_slist_append(hdr, extra_header);
	if (token) {
		snprintf(line, sizeof(line), "Authorization: Bearer %s", token);
		hdr = curl_slist_append(hdr, line);
	}
	if (content_type) {
		snprintf(line, sizeof(line), "Content-Type: %s", content_type);
		hdr = curl_slist_append(hdr, line);
	}
	if (content_type && getenv("KPERF_TEST_CHUNKED"))
		hdr = curl_slist_append(hdr, "Transfer-Encoding: chunked");
	if (body) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	rc = curl_easy_perform(h);
	cr_assert_eq(rc, CURLE_OK, "%s %s: %s", method, path, curl_easy_strerror(rc));
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
}

void http_post_json(const struct kperfd *k, const char *path, const char *token,
		    const char *body, struct resp *r)
{
	http_call(k, "POST", path, token, "application/json", body, strlen(body), r);
}

void harness_post_ok(const struct kperfd *k, const char *path, const char *token, const char *body)
{
	struct resp r;

	http_post_json(k, path, token, body, &r);
	cr_assert(r.status == 201 || r.status == 200, "%s: %ld %s", path, r.status, r.body);
	resp_release(&r);
}

void http_get(const struct kperfd *k, const char *path, struct resp *r)
{
	http_call(k, "GET", path, NULL, NULL, NULL, 0, r);
}

void resp_release(struct resp *r)
{
	free(r->body);
	memset(r, 0, sizeof(*r));
}

json_t *resp_json(const struct resp *r)
{
	json_error_t err;
	json_t *j = json_loadb(r->body, r->len, JSON_DECODE_INT_AS_REAL, &err);
	cr_assert_not_null(j, "response is not JSON (%s): %.300s", err.text, r->body);
	return j;
}

PGconn *harness_db(const struct kperfd *k)
{
	PGconn *c = PQconnectdb(k->conninfo);
	cr_assert_eq(PQstatus(c), CONNECTION_OK, "%s", PQerrorMessage(c));
	return c;
}

json_t *harness_get_json(const struct kperfd *k, const char *path, long want)
{
	struct resp r;
	json_t *j;

	http_get(k, path, &r);
	cr_assert_eq(r.status, want, "%s: %ld %s", path, r.status, r.body);
	j = resp_json(&r);
	resp_release(&r);
	return j;
}

long harness_metric(const struct kperfd *k, const char *name)
{
	struct resp r;
	const char *p;
	size_t len = strlen(name);
	long v = -1;

	http_get(k, "/metrics", &r);
	cr_assert_eq(r.status, 200, "/metrics: %ld", r.status);
	for (p = r.body; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, len) && p[len] == ' ') {
			v = strtol(p + len + 1, NULL, 10);
			break;
		}
	cr_assert(p && *p, "no %s in /metrics", name);
	resp_release(&r);
	return v;
}

long harness_count(const struct kperfd *k, const char *sql)
{
	return harness_count_params(k, sql, 0, NULL);
}

/*
 * harness_count's connection, kept from one call to the next: tests poll
 * counts every 50 to 200 ms, and a connection for each cost a backend's
 * start every time. A new one when another database is asked, and when the
 * server ended the old one (a restart, a failover, the database dropped).
 */
static PGconn *count_conn;
static char count_conninfo[sizeof(((struct kperfd *)0)->conninfo)];

void harness_count_close(void)
{
	PQfinish(count_conn);
	count_conn = NULL;
}

static PGconn *count_db(const struct kperfd *k)
{
	if (count_conn && (strcmp(count_conninfo, k->conninfo) || PQstatus(count_conn) != CONNECTION_OK))
		harness_count_close();
	if (!count_conn) {
		count_conn = harness_db(k);
		snprintf(count_conninfo, sizeof(count_conninfo), "%s", k->conninfo);
	}
	return count_conn;
}

long harness_count_params(const struct kperfd *k, const char *sql, int n,
			  const char *const *params)
{
	PGresult *r = PQexecParams(count_db(k), sql, n, NULL, params, NULL, NULL, 0);
	long v;

	if (PQresultStatus(r) != PGRES_TUPLES_OK && PQstatus(count_conn) != CONNECTION_OK) {
		/* the server ended the kept connection: once more on a new one */
		PQclear(r);
		harness_count_close();
		r = PQexecParams(count_db(k), sql, n, NULL, params, NULL, NULL, 0);
	}
	cr_assert_eq(PQresultStatus(r), PGRES_TUPLES_OK, "%s: %s", sql, PQresultErrorMessage(r));
	v = strtol(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return v;
}

char *harness_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *p;
	long n;

	cr_assert_not_null(f, "cannot open %s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc((size_t)n + 1);
	cr_assert_eq(fread(p, 1, (size_t)n, f), (size_t)n);
	p[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return p;
}

int harness_closed_port(void)
{
	/* one of the claimed ports below the ephemeral range: no kperfd on
	 * --port 0, no outgoing connection and no other test is handed it */
	return harness_free_port();
}

long harness_call(const struct kperfd *k, const char *method, const char *path, const char *token,
		  const char *body, json_t **j)
{
	struct resp r;
	long st;

	http_call(k, method, path, token, body ? "application/json" : NULL, body,
		  body ? strlen(body) : 0, &r);
	st = r.status;
	if (j)
		*j = r.len ? resp_json(&r) : NULL;
	resp_release(&r);
	return st;
}
