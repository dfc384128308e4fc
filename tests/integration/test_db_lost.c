/*
 * test_db_lost.c - server/db.c when PostgreSQL dies under a held connection
 * (SIGKILL to the postmaster) and stays away, then comes back: the PGconn a
 * caller holds stays a valid object through every failure (issue 16: a
 * failed reconnect freed it while the token check still used it, to log the
 * error, and kperfd crashed), reports the failure, and works again in place
 * once the server is back. Run under ASan, a use after free fails here.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "server/db/db.h"
#include "tests/integration/harness.h"

static struct pg_cluster PG;
static struct kperfd K;

static void setup(void)
{
	pg_cluster_start(&PG, "pglost", "-c fsync=off -c full_page_writes=off");
	kperfd_prepare(&K, PG.pg); /* a database, no kperfd */
	db_setup(K.conninfo);
}

static void teardown(void)
{
	db_release();
	kperfd_stop(&K);
	pg_cluster_ctl(&PG, "stop");
}

TestSuite(db_lost, .init = setup, .fini = teardown, .timeout = 120);

/* The server killed; its orphaned backends gone (their FATAL sent): pg.sh
 * kill waits for that. */
static void server_killed(void)
{
	cr_assert_eq(pg_cluster_ctl(&PG, "kill"), 0, "the killed cluster's processes stayed");
}

static void server_back(void)
{
	cr_assert_eq(pg_cluster_ctl(&PG, "start"), 0, "the killed cluster did not start again");
}

/* A statement on c until one finds the connection broken (the first may
 * only read the backend's FATAL message). */
static PGresult *fail_until_broken(PGconn *c, const char *sql)
{
	PGresult *r = NULL;

	for (int i = 0; i < 3; i++) {
		PQclear(r);
		r = db_exec(c, sql, 0, NULL);
		cr_assert_not(db_ok(r), "a statement worked on a killed server");
		if (PQstatus(c) == CONNECTION_BAD)
			break;
	}
	return r;
}

Test(db_lost, a_failed_reconnect_leaves_the_held_connection_valid_then_it_reconnects_in_place)
{
	PGconn *c = db_get();
	PGresult *r;

	cr_assert_not_null(c);
	r = db_exec(c, "SELECT 1", 0, NULL); /* prepared on this session */
	cr_assert(db_ok(r), "%s", PQresultErrorMessage(r));
	PQclear(r);
	server_killed();

	/* the statement retries once on a reconnect, which fails: c is still
	 * the caller's, describing the failure (what the token check logs) */
	r = fail_until_broken(c, "SELECT 1");
	cr_expect_eq(PQstatus(c), CONNECTION_BAD);
	cr_expect_eq(db_http_status(c, r), 503);
	cr_expect(strstr(PQerrorMessage(c), "connection") != NULL, "error: %s", PQerrorMessage(c));
	db_log_error("lost-connection test", c, r);
	PQclear(r);
	cr_expect_null(db_get(), "db_get with the server away");
	cr_expect_eq(PQstatus(c), CONNECTION_BAD);

	server_back();
	/* the next db_get (a request's or a worker round's first step) gives
	 * the same PGconn, reopened in place; statements prepared anew */
	cr_expect_eq(db_get(), c, "the thread's connection is the one it held");
	r = db_exec(c, "SELECT 1", 0, NULL);
	cr_assert(db_ok(r), "after the restart: %s", PQresultErrorMessage(r));
	cr_expect_str_eq(PQgetvalue(r, 0, 0), "1");
	PQclear(r);
}

Test(db_lost, a_pipeline_on_a_dead_connection_fails_cleanly_and_the_connection_recovers)
{
	const struct db_stmt st[] = {{"SELECT 1::bigint", 0, NULL, 1, NULL, NULL},
				     {"SELECT 2::bigint", 0, NULL, 1, NULL, NULL}};
	PGconn *c = db_get();
	PGresult *r;

	cr_assert_not_null(c);
	r = db_exec_batch(c, 2, st, 1);
	cr_assert(db_ok(r), "%s", PQresultErrorMessage(r));
	cr_expect_eq(db_int8(r, 0, 0), 2);
	PQclear(r);
	server_killed();
	for (int i = 0; i < 3; i++) { /* a result for each try, never NULL */
		r = db_exec_batch(c, 2, st, 1);
		cr_assert_not_null(r);
		cr_expect_not(db_ok(r), "a pipeline worked on a killed server");
		cr_expect_eq(db_http_status(c, r), 503);
		PQclear(r);
		r = db_exec_indexed(c, "SELECT 3", 0, NULL);
		cr_expect_not(db_ok(r));
		PQclear(r);
	}
	server_back();
	cr_expect_eq(db_get(), c, "reopened in place");
	cr_expect_eq(PQpipelineStatus(c), PQ_PIPELINE_OFF);
	r = db_exec_batch(c, 2, st, 0);
	cr_assert(db_ok(r), "after the restart: %s", PQresultErrorMessage(r));
	cr_expect_eq(db_int8(r, 0, 0), 1);
	PQclear(r);
}

Test(db_lost, a_transaction_cut_off_is_not_retried_and_is_closed_on_release)
{
	PGconn *c = db_get();
	PGresult *r;

	cr_assert_not_null(c);
	cr_assert_eq(db_do(c, "CREATE TABLE lost (v int)", 0, NULL), 0);
	cr_assert_eq(db_do(c, "BEGIN", 0, NULL), 0);
	cr_assert_eq(db_do(c, "INSERT INTO lost VALUES (1)", 0, NULL), 0);
	server_killed();
	server_back();
	/* inside a transaction nothing is retried: the insert is not replayed
	 * on a new session, where it would commit alone */
	r = db_exec(c, "INSERT INTO lost VALUES (2)", 0, NULL);
	cr_expect_not(db_ok(r));
	cr_expect_eq(db_retryable(c, r), 1);
	PQclear(r);
	db_release();
	c = db_get();
	cr_assert_not_null(c);
	r = db_exec(c, "SELECT count(*) FROM lost", 0, NULL);
	cr_assert(db_ok(r), "%s", PQresultErrorMessage(r));
	cr_expect_str_eq(PQgetvalue(r, 0, 0), "0", "the cut-off transaction left rows");
	PQclear(r);
}
