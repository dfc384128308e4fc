/*
 * test_db.c - server/db.c against a real PostgreSQL: statements sent
 * together (pipeline mode), one failing among them, the connection usable
 * after; a second connection taken without waiting, or refused at once when
 * it would leave the pool none for the next request.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "server/db/db.h"
#include "tests/integration/harness.h"

static struct kperfd K;

static void setup(void)
{
	kperfd_prepare(&K, NULL); /* a database, no kperfd */
	db_setup(K.conninfo);
}

static void teardown(void)
{
	db_drop();
	db_release();
	kperfd_stop(&K);
}

TestSuite(db, .init = setup, .fini = teardown, .timeout = 60);

Test(db, pipelined_statements_in_order_in_text_and_binary)
{
	static const char sum[] = "SELECT $1::bigint + $2::bigint";
	static const char word[] = "SELECT upper($1)";
	const char *p1[] = {"40", "2"}, *p2[] = {"kperf"};
	const struct db_stmt st[] = {{sum, 2, p1, 1, NULL, NULL},
				     {word, 1, p2, 0, NULL, NULL},
				     {sum, 2, p1, 0, NULL, NULL}};
	PGconn *c = db_get();
	PGresult *r;

	cr_assert_not_null(c);
	for (int round = 0; round < 2; round++) { /* prepared on the first */
		cr_assert_eq(db_pipeline_send(c, 3, st), 0);
		r = db_pipeline_next(c);
		cr_assert(db_ok(r), "%s", PQresultErrorMessage(r));
		cr_expect_eq(db_int8(r, 0, 0), 42);
		PQclear(r);
		r = db_pipeline_next(c);
		cr_expect_str_eq(PQgetvalue(r, 0, 0), "KPERF");
		PQclear(r);
		r = db_pipeline_next(c);
		cr_expect_str_eq(PQgetvalue(r, 0, 0), "42");
		PQclear(r);
		db_pipeline_end(c);
		cr_expect_eq(PQpipelineStatus(c), PQ_PIPELINE_OFF);
	}
}

Test(db, a_failed_statement_fails_those_after_it_and_the_connection_goes_on)
{
	const char *p[] = {"0"};
	const struct db_stmt st[] = {{"SELECT 1", 0, NULL, 0, NULL, NULL},
				     {"SELECT 1 / $1::int", 1, p, 0, NULL, NULL},
				     {"SELECT 3", 0, NULL, 0, NULL, NULL}};
	PGconn *c = db_get();
	PGresult *r;

	cr_assert_eq(db_pipeline_send(c, 3, st), 0);
	r = db_pipeline_next(c);
	cr_expect_str_eq(PQgetvalue(r, 0, 0), "1");
	PQclear(r);
	r = db_pipeline_next(c);
	cr_expect_not(db_ok(r));
	cr_expect_str_eq(PQresultErrorField(r, PG_DIAG_SQLSTATE), "22012"); /* division_by_zero */
	PQclear(r);
	r = db_pipeline_next(c);
	cr_expect_eq(PQresultStatus(r), PGRES_PIPELINE_ABORTED);
	PQclear(r);
	db_pipeline_end(c);

	/* results never read are read by db_pipeline_end */
	cr_assert_eq(db_pipeline_send(c, 3, st), 0);
	PQclear(db_pipeline_next(c));
	db_pipeline_end(c);

	r = db_exec(c, "SELECT 7", 0, NULL);
	cr_assert(db_ok(r), "%s", PQresultErrorMessage(r));
	cr_expect_str_eq(PQgetvalue(r, 0, 0), "7");
	PQclear(r);
}

/* The kept statement succeeds and the COMMIT after it fails (a deferred
 * constraint checked at COMMIT, as a backend cut off after the INSERT would):
 * the batch's answer is the COMMIT's failure, never the INSERT's rows. */
Test(db, a_batch_fails_when_a_statement_after_the_kept_one_fails)
{
	const struct db_stmt st[] = {{"BEGIN", 0, NULL, 0, NULL, NULL},
				     {"INSERT INTO once_only VALUES (1), (1) RETURNING v", 0, NULL, 0,
				      NULL, NULL},
				     {"COMMIT", 0, NULL, 0, NULL, NULL}};
	PGconn *c = db_get();
	PGresult *r;

	cr_assert_eq(db_do(c,
			   "CREATE TABLE once_only (v int UNIQUE DEFERRABLE INITIALLY DEFERRED)",
			   0, NULL),
		     0);
	r = db_exec_batch(c, 3, st, 1);
	cr_assert_not_null(r);
	cr_expect_not(db_ok(r), "the INSERT's rows answered for a COMMIT that failed");
	cr_expect_str_eq(PQresultErrorField(r, PG_DIAG_SQLSTATE), "23505"); /* unique_violation */
	PQclear(r);
	cr_expect_eq(PQtransactionStatus(c), PQTRANS_IDLE);
	r = db_exec(c, "SELECT count(*) FROM once_only", 0, NULL);
	cr_assert(db_ok(r), "%s", PQresultErrorMessage(r));
	cr_expect_str_eq(PQgetvalue(r, 0, 0), "0");
	PQclear(r);
	/* a failure before the kept one is the answer too */
	{
		const char *p[] = {"0"};
		const struct db_stmt two[] = {{"SELECT 1 / $1::int", 1, p, 0, NULL, NULL},
					      {"SELECT 2", 0, NULL, 0, NULL, NULL}};
		r = db_exec_batch(c, 2, two, 1);
		cr_expect_str_eq(PQresultErrorField(r, PG_DIAG_SQLSTATE), "22012");
		PQclear(r);
	}
}

struct taker {
	PGconn *got;
};

static void *try_take(void *arg)
{
	struct taker *t = arg;
	t->got = db_try_get();
	if (t->got) {
		PGresult *r = db_exec(t->got, "SELECT 5", 0, NULL);
		if (!db_ok(r) || strcmp(PQgetvalue(r, 0, 0), "5"))
			t->got = NULL;
		PQclear(r);
	}
	db_release();
	return NULL;
}

Test(db, a_second_connection_only_when_one_is_left_after_it)
{
	struct taker t = {NULL};
	pthread_t th;
	PGconn *c;

	db_pool_size(1);
	c = db_get();
	cr_assert_not_null(c);
	pthread_create(&th, NULL, try_take, &t); /* the pool's one is taken: NULL at once */
	pthread_join(th, NULL);
	cr_expect_null(t.got);

	db_pool_size(2);
	pthread_create(&th, NULL, try_take, &t); /* one could be made: left for others */
	pthread_join(th, NULL);
	cr_expect_null(t.got);

	db_pool_size(3);
	pthread_create(&th, NULL, try_take, &t); /* two could: one is made and given back */
	pthread_join(th, NULL);
	cr_expect_not_null(t.got);

	db_release(); /* both free now, none more to make */
	t.got = NULL;
	pthread_create(&th, NULL, try_take, &t);
	pthread_join(th, NULL);
	cr_expect_not_null(t.got);
	db_pool_size(8);
}

static const char *seqscan(PGconn *c, char *out, size_t n)
{
	PGresult *r = db_exec(c, "SELECT current_setting('enable_seqscan')", 0, NULL);
	snprintf(out, n, "%s", db_ok(r) ? PQgetvalue(r, 0, 0) : "?");
	PQclear(r);
	return out;
}

/* A read by index runs with sequential scans off, and leaves the setting as
 * it was: outside a transaction the pipeline's end resets it, inside one a
 * RESET goes with it. */
Test(db, a_read_by_index_leaves_the_planner_as_it_was)
{
	static const char probe[] = "SELECT current_setting('enable_seqscan')";
	PGconn *c = db_get();
	char v[16];
	PGresult *r;

	cr_assert_not_null(c);
	for (int in_tx = 0; in_tx < 2; in_tx++) {
		if (in_tx)
			PQclear(db_exec(c, "BEGIN", 0, NULL));
		r = db_exec_indexed(c, probe, 0, NULL);
		cr_assert(db_ok(r), "%s", PQresultErrorMessage(r));
		cr_expect_eq(PQgetlength(r, 0, 0), 3, "in_tx %d", in_tx); /* binary text: "off" */
		cr_expect(!memcmp(PQgetvalue(r, 0, 0), "off", 3), "in_tx %d", in_tx);
		PQclear(r);
		cr_expect_str_eq(seqscan(c, v, sizeof(v)), "on", "in_tx %d", in_tx);
		if (in_tx)
			PQclear(db_exec(c, "COMMIT", 0, NULL));
		cr_expect_str_eq(seqscan(c, v, sizeof(v)), "on", "in_tx %d", in_tx);
	}
	/* with generic plans too (the trend's pipeline): both hold for the
	 * statements after it, and both are back once the pipeline ends */
	{
		static const char both[] = "SELECT current_setting('enable_seqscan')"
					   " || ' ' || current_setting('plan_cache_mode')";
		const struct db_stmt st[2] = {db_prefer_index_local_stmt(1),
					      {both, 0, NULL, 0, NULL, NULL}};
		r = db_exec_batch(c, 2, st, 1);
		cr_assert(db_ok(r), "%s", PQresultErrorMessage(r));
		cr_expect_str_eq(PQgetvalue(r, 0, 0), "off force_generic_plan");
		PQclear(r);
		r = db_exec(c, both, 0, NULL);
		cr_assert(db_ok(r), "%s", PQresultErrorMessage(r));
		cr_expect_str_eq(PQgetvalue(r, 0, 0), "on auto");
		PQclear(r);
	}
}
