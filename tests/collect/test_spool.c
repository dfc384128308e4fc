/*
 * test_spool.c - the spool against a real kperfd: atomic writes (no partial
 * file is ever visible), flush deleting what the server took (201, and 200
 * for a run it already had), moving what it refused (409, 400) to rejected/
 * beside its answer, keeping everything when the server is away, and the
 * lock file that makes a second flush stand aside.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include "collectors/base/config.h"
#include "collectors/base/cutil.h"
#include "collectors/deliver/spool.h"
#include "tests/integration/harness.h"
#include "tests/collect/testutil.h"

static struct kperfd K;

static void setup(void)
{
	kperfd_start(&K, NULL);
}

static void teardown(void)
{
	kperfd_stop(&K);
}

TestSuite(spool, .timeout = 120);

static const char *run_doc(char *buf, size_t n, const char *run_id, double value)
{
	snprintf(buf, n,
		 "{\"run_id\":\"%s\",\"machine\":{\"name\":\"spool-m\"},"
		 "\"kernel\":{\"release\":\"5.9.0-rc2\"},\"test\":{\"suite\":\"readtwice\"},"
		 "\"metrics\":{\"readtwice.throughput\":[%g]}}",
		 run_id, value);
	return buf;
}

static void config_for(struct collect_config *c, int port, const char *spool)
{
	char url[64];
	memset(c, 0, sizeof(*c));
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	config_set(c, "KPERF_SERVER", url);
	config_set(c, "KPERF_TOKEN", TOKEN_COLLECTOR);
	config_set(c, "KPERF_SPOOL", spool);
	c->timeout_s = 30;
}

Test(spool, put_is_atomic_and_creates_the_directory)
{
	char dir[4096], spool_dir[4200], path[4400], doc[512];
	struct dirent *e;
	size_t len;
	char *back;
	DIR *d;

	tu_tmpdir(dir, sizeof(dir));
	snprintf(spool_dir, sizeof(spool_dir), "%s/a/b/spool", dir);
	run_doc(doc, sizeof(doc), "atomic-1", 1);
	cr_assert_eq(spool_put(spool_dir, "atomic-1", doc, strlen(doc), path, sizeof(path)), 0);
	back = read_file(path, 1 << 20, &len);
	cr_assert_not_null(back);
	cr_assert_str_eq(back, doc);
	free(back);
	/* the temporary file was renamed, not left beside it */
	d = opendir(spool_dir);
	cr_assert_not_null(d);
	while ((e = readdir(d)))
		cr_assert(!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
			      !strcmp(e->d_name, "atomic-1.json"),
			  "stray file %s", e->d_name);
	closedir(d);
	/* rewriting the same run replaces it whole */
	run_doc(doc, sizeof(doc), "atomic-1", 2);
	cr_assert_eq(spool_put(spool_dir, "atomic-1", doc, strlen(doc), path, sizeof(path)), 0);
	back = read_file(path, 1 << 20, &len);
	cr_assert(strstr(back, "[2]") != NULL);
	free(back);
}

Test(spool, flush_deletes_taken_and_moves_refused_runs, .init = setup, .fini = teardown)
{
	char dir[4096], doc[512], path[4400], rej[4200], answer[4400];
	struct collect_config c;
	struct flush_stats st;
	struct resp r;
	char *text;

	tu_tmpdir(dir, sizeof(dir));
	config_for(&c, K.port, dir);
	/* stored before: the spooled copy is answered 200 */
	http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR, run_doc(doc, sizeof(doc), "sp-dup", 5),
		       &r);
	cr_assert_eq(r.status, 201, "%s", r.body);
	resp_release(&r);
	/* stored with other content: the spooled copy is answered 409 */
	http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR,
		       run_doc(doc, sizeof(doc), "sp-conflict", 1), &r);
	resp_release(&r);

	run_doc(doc, sizeof(doc), "sp-new", 7);
	cr_assert_eq(spool_put(dir, "sp-new", doc, strlen(doc), path, sizeof(path)), 0);
	run_doc(doc, sizeof(doc), "sp-dup", 5);
	cr_assert_eq(spool_put(dir, "sp-dup", doc, strlen(doc), path, sizeof(path)), 0);
	run_doc(doc, sizeof(doc), "sp-conflict", 2);
	cr_assert_eq(spool_put(dir, "sp-conflict", doc, strlen(doc), path, sizeof(path)), 0);
	snprintf(doc, sizeof(doc), "{\"run_id\":\"sp-invalid\",\"machine\":{\"name\":\"m\"}}");
	cr_assert_eq(spool_put(dir, "sp-invalid", doc, strlen(doc), path, sizeof(path)), 0);

	cr_assert_eq(spool_flush(&c, &st), 0);
	cr_expect_eq(st.delivered, 2, "201 and 200 both delete");
	cr_expect_eq(st.rejected, 2, "409 and 400 both move");
	cr_expect_eq(st.pending, 0);
	cr_expect_eq(tu_count_files(dir, ".json"), 0, "the spool is empty");
	snprintf(rej, sizeof(rej), "%s/%s", dir, SPOOL_REJECTED_DIR);
	cr_expect_eq(tu_count_files(rej, ".json"), 2);
	cr_expect_eq(tu_count_files(rej, ".answer"), 2);
	snprintf(answer, sizeof(answer), "%s/sp-conflict.answer", rej);
	text = read_file(answer, 1 << 20, NULL);
	cr_assert_not_null(text);
	cr_expect(!strncmp(text, "HTTP 409\n", 9), "%s", text);
	cr_expect(strstr(text, "conflict") != NULL, "%s", text);
	free(text);
	snprintf(answer, sizeof(answer), "%s/sp-invalid.answer", rej);
	text = read_file(answer, 1 << 20, NULL);
	cr_assert_not_null(text);
	cr_expect(!strncmp(text, "HTTP 400\n", 9), "%s", text);
	free(text);
	http_get(&K, "/api/v1/runs/sp-new", &r);
	cr_expect_eq(r.status, 200, "%s", r.body);
	resp_release(&r);
	/* a rejected run is never retried */
	cr_assert_eq(spool_flush(&c, &st), 0);
	cr_expect_eq(st.delivered + st.rejected + st.pending, 0);
	config_release(&c);
}

Test(spool, server_away_keeps_runs_and_the_lock_makes_flush_stand_aside, .init = setup,
     .fini = teardown)
{
	char dir[4096], doc[512], path[4400], lock[4200];
	struct collect_config away, here;
	struct flush_stats st;
	int fd;

	tu_tmpdir(dir, sizeof(dir));
	config_for(&away, harness_closed_port(), dir);
	config_for(&here, K.port, dir);
	run_doc(doc, sizeof(doc), "sp-away-1", 1);
	cr_assert_eq(spool_put(dir, "sp-away-1", doc, strlen(doc), path, sizeof(path)), 0);
	run_doc(doc, sizeof(doc), "sp-away-2", 2);
	cr_assert_eq(spool_put(dir, "sp-away-2", doc, strlen(doc), path, sizeof(path)), 0);

	cr_assert_eq(spool_flush(&away, &st), 0);
	cr_expect_eq(st.pending, 2, "both stay: the first failure stops the flush");
	cr_expect_eq(st.delivered, 0);
	cr_expect_eq(tu_count_files(dir, ".json"), 2);

	/* someone else holds the lock: flush does nothing and says so */
	snprintf(lock, sizeof(lock), "%s/%s", dir, SPOOL_LOCK_NAME);
	fd = open(lock, O_RDWR | O_CREAT, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(flock(fd, LOCK_EX), 0);
	cr_expect_eq(spool_flush(&here, &st), 1);
	cr_expect_eq(tu_count_files(dir, ".json"), 2);
	close(fd);

	cr_assert_eq(spool_flush(&here, &st), 0);
	cr_expect_eq(st.delivered, 2);
	cr_expect_eq(tu_count_files(dir, ".json"), 0);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM run WHERE run_id LIKE 'sp-away-%'"), 2);
	config_release(&away);
	config_release(&here);
}
