/*
 * test_robot_inbox.c - the robot's poller against inboxes that fail and
 * mail that is hostile. A real public-inbox (tests/robot/lore.sh) holds the
 * mail; tests/robot/fault_inbox.py stands in front of it and answers what
 * a broken archive answers (nothing, HTML, RSS, 500, a cut gzip, slowly, a
 * 2,500-message thread). Each fault is logged, retried with backoff, shown
 * in GET /api/v1/inboxes and /healthz, and once the archive is back the
 * series is stored exactly once.
 *
 * Not covered: an answer slower than INBOX_FETCH_TIMEOUT_S (30 s), too slow
 * for a test; a 3 s answer is shown to still work.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "server/robot/inbox.h"
#include "tests/collect/robot_lab.h"
#include "tests/collect/testutil.h"
#include "tests/integration/harness.h"

#define POLL_WAIT_S 60

static struct kperfd K;
static char W[512], lore[128];
static int lore_port;
static pid_t fault_pid[2];

/* A real lore with one 3-patch series made (not injected); its cover's msgid. */
static void lore_up(char *cover, size_t cap)
{
	tu_tmpdir(W, sizeof(W));
	lore_port = harness_free_port();
	robot_lore(NULL, 0, "init %s %d", W, lore_port);
	snprintf(lore, sizeof(lore), "http://127.0.0.1:%d/linux-mm/", lore_port);
	robot_lore(NULL, 0, "tree %s", W);
	robot_lore(cover, cap, "series %s 1 0", W);
}

/* fault_inbox.py on port, in front of the lore, with its state in W/fault. */
static pid_t fault_start(int port)
{
	char p[16], state[600];
	pid_t pid;

	snprintf(p, sizeof(p), "%d", port);
	snprintf(state, sizeof(state), "%s/fault", W);
	mkdir(state, 0755);
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		execl("/usr/bin/python3", "python3", "tests/robot/fault_inbox.py", p, lore, state,
		      (char *)NULL);
		_exit(126);
	}
	cr_assert(harness_wait_port(port, 20), "fault_inbox.py is not listening on %d", port);
	return pid;
}

static void fault_fix(const char *mode)
{
	char rel[64];
	snprintf(rel, sizeof(rel), "fault/fixed-%s", mode);
	tu_write(W, rel, "");
}

static void teardown(void)
{
	for (int i = 0; i < 2; i++)
		if (fault_pid[i] > 0) {
			kill(fault_pid[i], SIGTERM);
			waitpid(fault_pid[i], NULL, 0);
			fault_pid[i] = 0;
		}
	kperfd_stop(&K);
	if (W[0])
		robot_lore(NULL, 0, "stop %s", W);
}

TestSuite(robot_inbox, .fini = teardown, .timeout = 150);

static void add_inbox(const char *name, const char *inbox_url)
{
	char body[1024];
	snprintf(body, sizeof(body),
		 "{\"name\":\"%s\",\"url\":\"%s\",\"list\":\"linux-mm@kvack.org\",\"poll_s\":1}", name,
		 inbox_url);
	cr_assert_eq(harness_call(&K, "POST", "/api/v1/inboxes", TOKEN_ADMIN, body, NULL), 201);
}

/* The inbox's object in GET /api/v1/inboxes (a new reference). */
static json_t *inbox_json(const char *name)
{
	json_t *j = harness_get_json(&K, "/api/v1/inboxes", 200), *it, *out = NULL;
	size_t i;

	json_array_foreach(json_object_get(j, "items"), i, it)
		if (!strcmp(json_string_value(json_object_get(it, "name")), name))
			out = json_incref(it);
	json_decref(j);
	cr_assert_not_null(out, "no inbox %s", name);
	return out;
}

static long inbox_failures(const char *name)
{
	json_t *o = inbox_json(name);
	long f = (long)json_number_value(json_object_get(o, "failures"));
	json_decref(o);
	return f;
}

/* last_result of the inbox into out. */
static void inbox_result(const char *name, char *out, size_t cap)
{
	json_t *o = inbox_json(name);
	const char *s = json_string_value(json_object_get(o, "last_result"));
	snprintf(out, cap, "%s", s ? s : "");
	json_decref(o);
}

static long q1(const char *sql, const char *a)
{
	const char *p[1] = {a};
	return harness_count_params(&K, sql, 1, p);
}

static long series_of(const char *inbox)
{
	return q1("SELECT count(*) FROM posted_series s JOIN inbox i ON i.id = s.inbox_id"
		  " WHERE i.name = $1", inbox);
}

static long patches_of(const char *inbox)
{
	return q1("SELECT count(*) FROM posted_patch p JOIN posted_series s ON s.id = p.series_id"
		  " JOIN inbox i ON i.id = s.inbox_id WHERE i.name = $1", inbox);
}

/* One text value of a query with $1, $2 (a, b), or "" for no row, into out. */
static void q_text(char *out, size_t cap, const char *sql, const char *a, const char *b)
{
	PGconn *c = harness_db(&K);
	const char *p[2] = {a, b};
	PGresult *r = PQexecParams(c, sql, b ? 2 : 1, NULL, p, NULL, NULL, 0);

	cr_assert_eq(PQresultStatus(r), PGRES_TUPLES_OK, "%s: %s", sql, PQerrorMessage(c));
	snprintf(out, cap, "%s", PQntuples(r) && !PQgetisnull(r, 0, 0) ? PQgetvalue(r, 0, 0) : "");
	PQclear(r);
	PQfinish(c);
}

/* inbox_seen's "state: reason" of msgid, or "". */
static void seen(char *out, size_t cap, const char *msgid)
{
	q_text(out, cap, "SELECT state || ': ' || coalesce(reason, '') FROM inbox_seen WHERE msgid = $1",
	       msgid, NULL);
}

static void fail_with_log(const char *what)
{
	size_t len;
	char *log = harness_slurp(K.log, &len);
	cr_assert_fail("%s within %d s; kperfd's log ends:\n%s", what, POLL_WAIT_S,
		       log + (len > 5000 ? len - 5000 : 0));
}

/* ---------------------------------------------------------------- faults */

static const char *const faulty[] = {"refused", "html", "rss", "e500"};
#define NFAULTY 4

Test(robot_inbox, faults_backed_off_shown_then_series_stored_once)
{
	char cover[512], res[2048], url[200], name[32], *log, *health;
	int fport = harness_free_port(), rport = harness_free_port();
	long gaps[NFAULTY][4] = {{0}};
	double end;
	size_t len;
	json_t *h;

	lore_up(cover, sizeof(cover));
	robot_lore(NULL, 0, "inject %s %s/out-v1/*.patch", W, W);
	fault_pid[0] = fault_start(fport);
	kperfd_start(&K, NULL);
	for (int i = 0; i < NFAULTY; i++) {
		snprintf(name, sizeof(name), "f-%s", faulty[i]);
		snprintf(url, sizeof(url), "http://127.0.0.1:%d/%s/", i ? fport : rport, faulty[i]);
		add_inbox(name, url);
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/gzip/", fport);
	add_inbox("f-gzip", url);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/slow/", fport);
	add_inbox("f-slow", url);

	/* each fault: failures 1, 2, 3 with the wait doubling each time */
	end = harness_now() + POLL_WAIT_S;
	for (int done = 0; done < NFAULTY;) {
		done = 0;
		for (int i = 0; i < NFAULTY; i++) {
			/* failures and the wait it set, read together */
			long v, f;
			snprintf(name, sizeof(name), "f-%s", faulty[i]);
			v = q1("SELECT failures * 100000000::bigint + coalesce((extract(epoch FROM"
			       " next_poll_at - last_poll_at) * 1000)::bigint, 0) FROM inbox"
			       " WHERE name = $1", name);
			f = v / 100000000;
			if (f >= 1 && f <= 3 && !gaps[i][f])
				gaps[i][f] = v % 100000000;
			done += f >= 3;
		}
		if (harness_now() > end)
			fail_with_log("the faulty inboxes did not fail 3 times");
		robot_pause(100);
	}
	for (int i = 0; i < NFAULTY; i++) {
		/* poll_s * 2^(failures - 1): 1 s, 2 s, 4 s (both times are the UPDATE's now()) */
		cr_assert_eq(gaps[i][1], 1000, "%s", faulty[i]);
		cr_assert_eq(gaps[i][2], 2000, "%s", faulty[i]);
		cr_assert_eq(gaps[i][3], 4000, "%s", faulty[i]);
	}

	/* what each fault is called, in the inbox list and in /healthz */
	inbox_result("f-refused", res, sizeof(res));
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/refused/new.atom: ", rport);
	cr_assert(!strncmp(res, url, strlen(url)) && strstr(res, "onnect"), "%s", res);
	inbox_result("f-html", res, sizeof(res));
	cr_assert(strstr(res, "/html/new.atom: not an Atom feed: root element is html"), "%s", res);
	inbox_result("f-rss", res, sizeof(res));
	cr_assert(strstr(res, "/rss/new.atom: not an Atom feed: root element is rss"), "%s", res);
	inbox_result("f-e500", res, sizeof(res));
	cr_assert(strstr(res, "/e500/new.atom answered HTTP 500"), "%s", res);
	/* a cut thread is a note of a poll that worked: tried again next poll, no backoff */
	end = harness_now() + POLL_WAIT_S;
	for (inbox_result("f-gzip", res, sizeof(res)); !strstr(res, "truncated gzip");
	     inbox_result("f-gzip", res, sizeof(res))) {
		if (harness_now() > end)
			fail_with_log("f-gzip noted no truncated gzip");
		robot_pause(100);
	}
	{
		char want[700];
		snprintf(want, sizeof(want), "ok: 4 entries, 0 new series; <%s>: truncated gzip", cover);
		cr_assert_str_eq(res, want);
	}
	cr_assert_eq(inbox_failures("f-gzip"), 0);
	cr_assert_eq(series_of("f-gzip"), 0);
	cr_assert_eq(q1("SELECT count(*) FROM inbox_seen WHERE msgid = $1 AND inbox_id ="
			" (SELECT id FROM inbox WHERE name = 'f-gzip')", cover), 0);
	h = harness_get_json(&K, "/healthz", 200);
	health = json_dumps(h, JSON_COMPACT);
	json_decref(h);
	for (int i = 0; i < NFAULTY; i++) {
		char want[64];
		snprintf(want, sizeof(want), "f-%s: http://127.0.0.1:", faulty[i]);
		cr_assert(strstr(health, want), "%s not in %s", want, health);
	}
	cr_assert(strstr(health, "\"inboxes\":{\"status\":\"failing\""), "%s", health);
	cr_assert_null(strstr(health, "f-gzip"), "%s", health);
	cr_assert_null(strstr(health, "f-slow"), "%s", health);
	free(health);
	log = harness_slurp(K.log, &len);
	cr_assert(strstr(log, "/e500/new.atom answered HTTP 500"), "%s", log);
	cr_assert(strstr(log, "/rss/new.atom: not an Atom feed"), "%s", log);
	cr_assert(strstr(log, "inbox "), "%s", log);
	free(log);
	/* answers of 3 s each, under the 30 s timeout: stored */
	end = harness_now() + POLL_WAIT_S;
	while (series_of("f-slow") < 1) {
		if (harness_now() > end)
			fail_with_log("the slow inbox's series was not stored");
		robot_pause(200);
	}
	inbox_result("f-slow", res, sizeof(res));
	cr_assert(!strncmp(res, "ok: 4 entries, ", 15), "%s", res);
	fault_fix("slow");

	/* the archive comes back: every inbox stores the series, once */
	for (int i = 1; i < NFAULTY; i++)
		fault_fix(faulty[i]);
	fault_fix("gzip");
	fault_fix("refused");
	fault_pid[1] = fault_start(rport);
	end = harness_now() + POLL_WAIT_S;
	for (;;) {
		int ok = 1;
		for (int i = 0; i < NFAULTY; i++) {
			snprintf(name, sizeof(name), "f-%s", faulty[i]);
			ok &= series_of(name) == 1 && inbox_failures(name) == 0;
		}
		ok &= series_of("f-gzip") == 1;
		if (ok)
			break;
		if (harness_now() > end)
			fail_with_log("the inboxes did not recover");
		robot_pause(200);
	}
	robot_pause(2500); /* polls more: nothing is stored twice */
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM posted_series"), NFAULTY + 2);
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM posted_patch"), 3 * (NFAULTY + 2));
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM posted_series WHERE total = 3"
				       " AND state = 'posted'"), NFAULTY + 2);
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM inbox_seen WHERE state = 'done'"),
		     NFAULTY + 2);
	for (int i = 0; i < NFAULTY; i++) {
		snprintf(name, sizeof(name), "f-%s", faulty[i]);
		inbox_result(name, res, sizeof(res));
		cr_assert(!strncmp(res, "ok: 4 entries, ", 15), "%s: %s", name, res);
		cr_assert_eq(patches_of(name), 3);
	}
	h = harness_get_json(&K, "/healthz", 200);
	cr_assert_null(json_object_get(h, "inboxes"));
	json_decref(h);
	/* and every inbox stored the same series: the cover's */
	cr_assert_eq(q1("SELECT count(*) FROM posted_series WHERE head_msgid = $1", cover),
		     NFAULTY + 2);
}

/* ---------------------------------------------------------- hostile mail */

static void write_mail(const char *file, const char *text)
{
	char rel[128];
	snprintf(rel, sizeof(rel), "hostile/%s", file);
	tu_write(W, rel, text);
}

#define HDR(id, subj) \
	"From: Mal Lory <mal@example.org>\nTo: linux-mm@kvack.org\nDate: Thu, 01 Jan 2026 00:00:00 +0000\n" \
	"Message-ID: <" id ">\nSubject: " subj "\n"
#define DIFF(f) \
	"\ndiff --git a/" f " b/" f "\n--- a/" f "\n+++ b/" f "\n@@ -1 +1 @@\n-a\n+b\n"

Test(robot_inbox, hostile_mail_refused_or_bounded_nothing_lost)
{
	char cover[512], url[200], buf[4096], cmd[4096];
	struct buf big = BUF_INIT;
	int fport = harness_free_port();
	double end;

	lore_up(cover, sizeof(cover));
	/* a 10 kB Subject, folded */
	buf_puts(&big, HDR("long@mal.test", "[PATCH] mm: long"));
	for (int i = 0; i < 160; i++)
		buf_puts(&big, " aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n");
	buf_puts(&big, DIFF("mm/long.c"));
	write_mail("01-long", big.data);
	buf_release(&big);
	/* [PATCH 7/3]: the series misses its third patch */
	write_mail("02-num0", HDR("num0@mal.test", "[PATCH 0/3] mm: numbering") "\ncover\n");
	write_mail("03-num1", HDR("num1@mal.test", "[PATCH 1/3] mm: one")
		   "In-Reply-To: <num0@mal.test>\nReferences: <num0@mal.test>\n" DIFF("mm/a.c"));
	write_mail("04-num2", HDR("num2@mal.test", "[PATCH 2/3] mm: two")
		   "In-Reply-To: <num0@mal.test>\nReferences: <num0@mal.test>\n" DIFF("mm/b.c"));
	write_mail("05-num7", HDR("num7@mal.test", "[PATCH 7/3] mm: seven")
		   "In-Reply-To: <num0@mal.test>\nReferences: <num0@mal.test>\n" DIFF("mm/c.c"));
	/* a header line that is no field, and a field name with a space */
	write_mail("06-malformed", HDR("malformed@mal.test", "[PATCH] mm: malformed header")
		   "X-Bad Name: x\nthis line is not a header field\n" DIFF("mm/m.c"));
	/* Latin-1 bytes in Subject and From */
	write_mail("07-latin1", "From: J\xf6rg M\xfcller <jorg@example.org>\nTo: linux-mm@kvack.org\n"
		   "Date: Thu, 01 Jan 2026 00:00:00 +0000\nMessage-ID: <latin1@mal.test>\n"
		   "Subject: [PATCH] mm: caf\xe9 \xff fix\n" DIFF("mm/l.c"));
	/* a base-commit that is not a sha */
	write_mail("08-base", HDR("base@mal.test", "[PATCH] mm: based on a tag")
		   DIFF("mm/t.c") "\nbase-commit: v6.1\n");
	/* a cover letter whose patches never come */
	write_mail("09-lonely", HDR("lonely@mal.test", "[PATCH 0/3] mm: lonely") "\ncover\n");
	/* two messages replying to each other */
	write_mail("10-loopa", HDR("loopa@mal.test", "[PATCH 0/1] mm: loop")
		   "In-Reply-To: <loopb@mal.test>\nReferences: <loopb@mal.test>\n\ncover\n");
	write_mail("11-loopb", HDR("loopb@mal.test", "[PATCH 1/1] mm: loop")
		   "In-Reply-To: <loopa@mal.test>\nReferences: <loopa@mal.test>\n" DIFF("mm/o.c"));
	/* a bug report, and a fix sent in reply to it: a series of its own */
	write_mail("12-bug", HDR("bug@mal.test", "mm: a crash in folio_mark_accessed")
		   "\nThe kernel crashes here.\n");
	write_mail("13-fix", HDR("fix@mal.test", "[PATCH] mm/swap: fix the crash")
		   "In-Reply-To: <bug@mal.test>\nReferences: <bug@mal.test>\n" DIFF("mm/f.c"));
	/* then a normal series */
	robot_lore(NULL, 0, "inject %s %s/hostile/* %s/out-v1/*.patch", W, W, W);
	/* and in front of the archive, one more head whose thread has 2,502 messages */
	fault_pid[0] = fault_start(fport);
	kperfd_start(&K, NULL);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/big/", fport);
	add_inbox("h", url);

	end = harness_now() + POLL_WAIT_S;
	while (q1("SELECT count(*) FROM posted_series WHERE head_msgid = $1", cover) < 1 ||
	       q1("SELECT count(*) FROM inbox_seen WHERE tries >= 3 AND msgid = $1",
		  "lonely@mal.test") < 1) {
		if (harness_now() > end)
			fail_with_log("the normal series was not stored or the lonely cover not read 3 times");
		robot_pause(200);
	}
	/* the 2,500 replies: refused, and nothing else lost */
	seen(buf, sizeof(buf), "big-cover@fault.test");
	cr_assert_str_eq(buf, "refused: the thread's mbox: mbox has over 2000 messages");
	cr_assert_eq(q1("SELECT count(*) FROM posted_patch p JOIN posted_series s ON s.id ="
			" p.series_id WHERE s.head_msgid = $1", cover), 3);
	/* the 10 kB subject: refused, saying so */
	seen(buf, sizeof(buf), "long@mal.test");
	cr_assert_str_eq(buf, "refused: the thread does not hold <long@mal.test>: 1 message"
			      " dropped, its Subject over 1024 bytes");
	/* 7/3 extends the series to 7, as b4 does: it waits for patches 3 to 6 */
	seen(buf, sizeof(buf), "num0@mal.test");
	cr_assert_str_eq(buf, "incomplete: 4 of 7 patches not in the thread yet");
	/* 1/3 replies to its cover in the same feed: the cover's thread is its own,
	 * not read for it */
	cr_assert_eq(q1("SELECT count(*) FROM inbox_seen WHERE msgid = $1", "num1@mal.test"), 0);
	/* the fix in reply to the bug report: stored, one patch */
	q_text(buf, sizeof(buf), "SELECT subject || ' ' || total FROM posted_series WHERE head_msgid = $1",
	       "fix@mal.test", NULL);
	cr_assert_str_eq(buf, "[PATCH] mm/swap: fix the crash 1");
	/* the malformed header lines are skipped, the patch is stored */
	q_text(buf, sizeof(buf), "SELECT subject || ' ' || total FROM posted_series WHERE head_msgid = $1",
	       "malformed@mal.test", NULL);
	cr_assert_str_eq(buf, "[PATCH] mm: malformed header 1");
	/* bad UTF-8 made '?' */
	q_text(buf, sizeof(buf), "SELECT subject || ' | ' || author_name FROM posted_series"
	       " WHERE head_msgid = $1", "latin1@mal.test", NULL);
	cr_assert_str_eq(buf, "[PATCH] mm: caf? ? fix | J?rg M?ller");
	/* base-commit: v6.1 */
	q_text(buf, sizeof(buf), "SELECT state || ': ' || state_detail FROM posted_series"
	       " WHERE head_msgid = $1", "base@mal.test", NULL);
	cr_assert_str_eq(buf, "no_base: base-commit \"v6.1\" is not a 40-hex sha");
	/* the loop: one series, its patch found, no hang */
	q_text(buf, sizeof(buf), "SELECT count(*) || ' ' || min(total) FROM posted_series"
	       " WHERE head_msgid IN ($1, $2)", "loopa@mal.test", "loopb@mal.test");
	cr_assert_str_eq(buf, "1 1");
	/* the lonely cover: incomplete, read again each poll, then refused */
	seen(buf, sizeof(buf), "lonely@mal.test");
	cr_assert_str_eq(buf, "incomplete: 3 of 3 patches not in the thread yet");
	snprintf(cmd, sizeof(cmd), "%d", INBOX_INCOMPLETE_TRIES - 1);
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM inbox_seen WHERE msgid = 'lonely@mal.test'"), 1);
	{
		PGconn *c = harness_db(&K);
		const char *p[1] = {cmd};
		PQclear(PQexecParams(c, "UPDATE inbox_seen SET tries = $1::int"
				     " WHERE msgid = 'lonely@mal.test'", 1, NULL, p, NULL, NULL, 0));
		PQfinish(c);
	}
	end = harness_now() + POLL_WAIT_S;
	for (seen(buf, sizeof(buf), "lonely@mal.test"); strncmp(buf, "refused", 7);
	     seen(buf, sizeof(buf), "lonely@mal.test")) {
		if (harness_now() > end)
			fail_with_log("the lonely cover was not refused");
		robot_pause(200);
	}
	cr_assert_str_eq(buf, "refused: 3 of 3 patches not in the thread yet after 30 reads");
	cr_assert_eq(q1("SELECT tries FROM inbox_seen WHERE msgid = $1", "lonely@mal.test"),
		     INBOX_INCOMPLETE_TRIES);
	robot_pause(2500);
	cr_assert_eq(q1("SELECT tries FROM inbox_seen WHERE msgid = $1", "lonely@mal.test"),
		     INBOX_INCOMPLETE_TRIES, "a refused thread is read again");
	/* the poll itself is fine: its notes say what went wrong */
	inbox_result("h", buf, sizeof(buf));
	cr_assert(!strncmp(buf, "ok: 18 entries, 0 new series; ", 30), "%s", buf);
	cr_assert(strstr(buf, "; <num0@mal.test>: 4 of 7 patches not in the thread yet"), "%s", buf);
	cr_assert_null(strstr(buf, "lonely@"), "%s", buf); /* refused: not read again */
	cr_assert_eq(inbox_failures("h"), 0);
	{
		json_t *h = harness_get_json(&K, "/healthz", 200);
		cr_assert_null(json_object_get(h, "inboxes"));
		json_decref(h);
	}
	cr_assert_eq(q1("SELECT series_found FROM inbox WHERE name = $1", "h"), 6);
	/* everything stored once: the normal series, malformed, latin1, base, loop, fix */
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM posted_series"), 6);
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM posted_patch"), 8);
}

/* ------------------------------------------------------- restart mid-poll */

static void sigkill_kperfd(void)
{
	kill(K.pid, SIGKILL);
	waitpid(K.pid, NULL, 0);
	K.pid = 0;
}

Test(robot_inbox, sigkill_mid_poll_then_restart_stores_the_series_once)
{
	char cover[512], url[200], hits[700], buf[1024];
	int fport = harness_free_port();
	double end;
	size_t len;

	lore_up(cover, sizeof(cover));
	robot_lore(NULL, 0, "inject %s %s/out-v1/*.patch", W, W);
	fault_pid[0] = fault_start(fport);
	kperfd_start(&K, NULL);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/slow/", fport);
	add_inbox("r", url);
	/* killed while the thread's 3 s answer is on its way */
	snprintf(hits, sizeof(hits), "%s/fault/hits-slow", W);
	end = harness_now() + POLL_WAIT_S;
	for (;;) {
		char *h = access(hits, R_OK) ? strdup("") : harness_slurp(hits, &len);
		int in = strstr(h, "t.mbox.gz") != NULL;
		free(h);
		if (in)
			break;
		if (harness_now() > end)
			fail_with_log("no thread was fetched");
		robot_pause(50);
	}
	robot_pause(500);
	sigkill_kperfd();
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM posted_series"), 0);
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM inbox_seen"), 0);
	kperfd_restart(&K);
	end = harness_now() + POLL_WAIT_S;
	while (harness_count(&K, "SELECT count(*) FROM posted_series") < 1) {
		if (harness_now() > end)
			fail_with_log("the series was not stored after the restart");
		robot_pause(200);
	}
	/* killed again right after it was stored, then polled again and again */
	sigkill_kperfd();
	fault_fix("slow");
	kperfd_restart(&K);
	end = harness_now() + POLL_WAIT_S;
	while (harness_count(&K, "SELECT count(*) FROM inbox WHERE last_poll_at > now() - interval"
				 " '1 second' AND last_result LIKE 'ok: 4 entries, 0 new series'") < 1) {
		if (harness_now() > end)
			fail_with_log("no poll after the second restart");
		robot_pause(200);
	}
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM posted_series"), 1);
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM posted_patch"), 3);
	seen(buf, sizeof(buf), cover);
	cr_assert_str_eq(buf, "done: ");
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM inbox_seen"), 1);
	cr_assert_eq(harness_count(&K, "SELECT series_found FROM inbox"), 1);
}
