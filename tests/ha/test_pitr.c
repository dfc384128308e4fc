/*
 * test_pitr.c - a point-in-time restore of kperf's database from
 * pgBackRest (Debian's pgbackrest, WAL archived by the Patroni cluster's
 * archive_command): a full backup, more runs, then a mistake (an admin
 * deletes a machine's runs). The newest backup restored to the time before
 * the mistake into a fresh data directory, kperfd started on it, finds every
 * run acknowledged before that time with its exact samples, none after, and
 * the archived month (kperfd archive) still listed and restorable. Then the
 * copy is put back behind Patroni (node1 on it, node2 cloned from it) and
 * kperfd on both nodes finds it all and takes runs, on the sync standby too.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/ha/ha.h"

#define NKERNELS 4
#define NRUNS 2
#define NITER 5

/* One batch: NKERNELS x NRUNS runs of machine, run_ids PREFIX-kNN-rR, each
 * with NITER ops and NITER latencies (fractional, distinct) and one per-run
 * value. */
static void post_set(const struct kperfd *k, const char *prefix, const char *machine)
{
	json_t *runs = json_array(), *batch;
	char *body;

	for (int kn = 1; kn <= NKERNELS; kn++)
		for (int run = 0; run < NRUNS; run++) {
			json_t *ops = json_array(), *lat = json_array(), *one = json_array();
			char id[64], rel[48];
			for (int it = 0; it < NITER; it++) {
				json_array_append_new(
					ops, json_real(1000.125 + sin(kn * 1.7 + run * 2.3 + it) * 3.25));
				json_array_append_new(lat, json_real(52.5 + cos(kn + run + it * 0.9)));
			}
			json_array_append_new(one, json_real(kn * 10.0 + run / 3.0));
			snprintf(id, sizeof(id), "%s-k%02d-r%d", prefix, kn, run);
			snprintf(rel, sizeof(rel), "6.1.0-%s%02d", prefix, kn);
			json_array_append_new(
				runs,
				json_pack("{s:s,s:{s:s},s:{s:s},s:{s:s,s:{s:s}},s:{s:o,s:o,s:o}}",
					  "run_id", id, "machine", "name", machine, "kernel", "release",
					  rel, "test", "suite", "will-it-scale", "params", "nr_task", "4",
					  "metrics", "will-it-scale.ops", ops, "will-it-scale.latency_us",
					  lat, "will-it-scale.per_run", one));
		}
	batch = json_pack("{s:o}", "runs", runs);
	body = json_dumps(batch, 0);
	harness_post_ok(k, "/api/v1/runs", TOKEN_COLLECTOR, body);
	free(body);
	json_decref(batch);
}

/* One text value of sql with $1 = param (NULL: none), over conninfo (malloc'd). */
static char *text_of(const char *conninfo, const char *sql, const char *param)
{
	PGconn *c = PQconnectdb(conninfo);
	PGresult *r;
	char *v;

	cr_assert_eq(PQstatus(c), CONNECTION_OK, "%s", PQerrorMessage(c));
	r = PQexecParams(c, sql, param ? 1 : 0, NULL, &param, NULL, NULL, 0);
	cr_assert(PQresultStatus(r) == PGRES_TUPLES_OK || PQresultStatus(r) == PGRES_COMMAND_OK,
		  "%s: %s", sql, PQerrorMessage(c));
	v = strdup(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) ? PQgetvalue(r, 0, 0) : "");
	PQclear(r);
	PQfinish(c);
	return v;
}

/* Expect sql's value with $1 = param over conninfo to be want. */
static void expect_text(const char *conninfo, const char *sql, const char *param,
			const char *want, const char *what)
{
	char *v = text_of(conninfo, sql, param);

	cr_expect_str_eq(v, want, "%s", what);
	free(v);
}

/* Every sample of the runs whose run_id starts with prefix: how many, and a
 * digest of (run, metric, iteration, exact value). */
#define SQL_SAMPLES                                                                          \
	"SELECT count(*) || ' ' || coalesce(md5(string_agg(r.run_id || ' ' || m.name || ' '"   \
	" || s.iteration || ' ' || s.value::text, ',' ORDER BY r.run_id, m.name, s.iteration)),"  \
	" '-') FROM run r JOIN sample s ON s.run_id = r.id JOIN metric m ON m.id = s.metric_id"  \
	" WHERE starts_with(r.run_id, $1)"
#define SQL_RUNS "SELECT count(*) FROM run WHERE starts_with(run_id, $1)"
#define SAMPLES_A_SET (NKERNELS * NRUNS * (2 * NITER + 1))

/* kperfd's CLI with args: its stdout (malloc'd), asserting it exits 0 */
static char *cli_ok(struct kperfd *k, const char *const *args)
{
	char *out = NULL, *err = NULL;

	cr_assert_eq(kperfd_cli(k, args, &out, &err), 0, "kperfd %s: %s", args[0], err);
	free(err);
	return out;
}

Test(pitr, restore_to_before_a_mistake, .timeout = 600)
{
	struct ha c;
	struct kperfd k;
	char *month, *before, *a0, *b0, *v0, *target, *out, *v, *w;
	char fresh[300];
	double t0, t_backup, t_restore, t_rebuild;
	int port;

	curl_global_init(CURL_GLOBAL_ALL);
	ha_up(&c, "pitr", NULL);
	cr_assert_eq(ha_run(&c, NULL, 0, "backrest stanza-create"), 0, "see %s/backrest-log",
		     c.dir);
	ha_kperfd(&c, &k, NULL);

	/* set A, moved three months back and archived (kperfd archive) */
	post_set(&k, "pa", "pitr-old");
	a0 = text_of(k.conninfo, SQL_SAMPLES, "pa-");
	free(text_of(k.conninfo, "SELECT kperf_sample_partitions(now() - interval '5 months', now())",
		     NULL));
	free(text_of(k.conninfo,
		     "WITH d AS (SELECT make_interval(secs => extract(epoch FROM max(received_at)"
		     " - ((date_trunc('month', max(received_at) AT TIME ZONE 'UTC') - interval "
		     "'3 months' + interval '14 days') AT TIME ZONE 'UTC'))) AS v FROM run WHERE "
		     "starts_with(run_id, $1)), s AS (UPDATE sample SET at = at - d.v FROM d WHERE "
		     "run_id IN (SELECT id FROM run WHERE starts_with(run_id, $1))) UPDATE run SET "
		     "received_at = received_at - d.v FROM d WHERE starts_with(run_id, $1)",
		     "pa-"));
	month = text_of(k.conninfo,
			"SELECT to_char(max(received_at) AT TIME ZONE 'UTC', 'YYYY-MM') FROM run"
			" WHERE starts_with(run_id, $1)",
			"pa-");
	before = text_of(k.conninfo,
			 "SELECT to_char(date_trunc('month', max(received_at) AT TIME ZONE 'UTC')"
			 " + interval '1 month', 'YYYY-MM') FROM run WHERE starts_with(run_id, $1)",
			 "pa-");
	{
		const char *args[] = {"archive", "--before", before, NULL};
		free(cli_ok(&k, args));
	}
	v = text_of(k.conninfo, SQL_SAMPLES, "pa-");
	cr_assert_str_eq(v, "0 -", "archived, set A's samples are summaries");
	free(v);

	/* the full backup */
	t0 = harness_now();
	cr_assert_eq(ha_run(&c, NULL, 0, "backrest --type=full backup"), 0, "see %s/backrest-log",
		     c.dir);
	t_backup = harness_now() - t0;

	/* set B and the victim machine's runs: acknowledged before the target */
	post_set(&k, "pb", "pitr-b");
	post_set(&k, "pv", "pitr-victim");
	b0 = text_of(k.conninfo, SQL_SAMPLES, "pb-");
	v0 = text_of(k.conninfo, SQL_SAMPLES, "pv-");
	{
		char want[32];
		snprintf(want, sizeof(want), "%d ", SAMPLES_A_SET);
		cr_assert(strncmp(b0, want, strlen(want)) == 0, "%s", b0);
	}
	ha_sleep(1.2);
	target = text_of(k.conninfo,
			 "SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC',"
			 " 'YYYY-MM-DD HH24:MI:SS.US') || '+00'",
			 NULL);
	ha_sleep(1.2);

	/* set C after it, then the mistake */
	post_set(&k, "pc", "pitr-c");
	free(text_of(k.conninfo,
		     "DELETE FROM run WHERE machine_id = (SELECT id FROM machine WHERE name = $1)",
		     "pitr-victim"));
	v = text_of(k.conninfo, SQL_RUNS, "pv-");
	cr_assert_str_eq(v, "0");
	free(v);
	/* the WAL of the mistake archived (check switches to a new segment and
	 * waits for the old one in the repository) */
	cr_assert_eq(ha_run(&c, NULL, 0, "backrest check"), 0, "see %s/backrest-log", c.dir);

	/* restore as of the target into a fresh data directory */
	port = harness_free_port();
	t0 = harness_now();
	cr_assert_eq(ha_run(&c, NULL, 0, "pitr '%s' %d", target, port), 0,
		     "the restore did not come up; see %s/log/pitr.log", c.dir);
	t_restore = harness_now() - t0;

	/* kperfd on the restored copy, nothing else */
	kperfd_stop(&k);
	snprintf(fresh, sizeof(fresh), "host=127.0.0.1 port=%d user=kperf", port);
	snprintf(k.pg, sizeof(k.pg), "%s", fresh);
	snprintf(k.conninfo, sizeof(k.conninfo), "%s dbname=%s", fresh, k.db);
	kperfd_restart(&k);

	expect_text(k.conninfo, SQL_SAMPLES, "pb-", b0,
		    "set B, acknowledged before the target, differs");
	expect_text(k.conninfo, SQL_SAMPLES, "pv-", v0,
		    "the deleted machine's runs are not back as they were");
	expect_text(k.conninfo, SQL_RUNS, "pc-", "0",
		    "runs posted after the target are in the restored copy");

	/* the archived month: listed, and back with its samples */
	{
		const char *list[] = {"archive", "--list", NULL};
		const char *back[] = {"restore-archive", month, NULL};
		out = cli_ok(&k, list);
		cr_expect(strstr(out, month), "archive --list does not show %s:\n%s", month, out);
		free(out);
		free(cli_ok(&k, back));
	}
	expect_text(k.conninfo, SQL_SAMPLES, "pa-", a0, "the archived month came back different");
	/* and it takes runs */
	post_set(&k, "pd", "pitr-d");
	v = text_of(k.conninfo, SQL_RUNS, "pd-");
	cr_expect_eq(atoi(v), NKERNELS * NRUNS);
	free(v);

	ha_note(&c,
		"ha: pgBackRest: full backup %.1f s; restore to %s and promote %.1f s; %d runs"
		" before it back with their samples, none after",
		t_backup, target, t_restore, 2 * NKERNELS * NRUNS);

	/* the restored copy put back behind Patroni: node1 on it, node2 cloned,
	 * kperfd on both nodes again with what it had on the copy */
	kperfd_kill(&k);
	t0 = harness_now();
	cr_assert_eq(ha_run(&c, NULL, 0, "rebuild"), 0, "see %s/log", c.dir);
	t_rebuild = harness_now() - t0;
	cr_expect_eq(ha_leader(&c), 1);
	cr_assert_lt(snprintf(k.pg, sizeof(k.pg), "%s", c.write_url), (int)sizeof(k.pg));
	cr_assert_lt(snprintf(k.conninfo, sizeof(k.conninfo), "%s dbname=%s", c.write_url, k.db),
		     (int)sizeof(k.conninfo));
	{
		const char *env[] = {c.read_env, "KPERF_THREADS=8", NULL};
		kperfd_env(env);
		kperfd_restart(&k);
		kperfd_env(NULL);
	}
	expect_text(k.conninfo, SQL_SAMPLES, "pv-", v0,
		    "the victim's runs differ on the rebuilt cluster");
	expect_text(k.conninfo, SQL_SAMPLES, "pa-", a0,
		    "the restored month differs on the rebuilt cluster");
	expect_text(k.conninfo, SQL_RUNS, "pc-", "0", "runs of set C on the rebuilt cluster");
	post_set(&k, "pe", "pitr-e"); /* acknowledged: on the sync standby too */
	snprintf(fresh, sizeof(fresh), "host=127.0.0.1 port=%d user=kperf dbname=%s", ha_port(&c, 2),
		 k.db);
	v = text_of(fresh, SQL_RUNS, "pe-");
	cr_expect_eq(atoi(v), NKERNELS * NRUNS, "node2 has %s of set E's runs", v);
	free(v);
	v = text_of(fresh, SQL_SAMPLES, "pd-");
	w = text_of(k.conninfo, SQL_SAMPLES, "pd-");
	cr_expect_str_eq(v, w, "node2 differs from node1 on the runs posted to the copy");
	free(v);
	free(w);
	/* the rebuilt cluster archives its WAL again (the new timeline's) */
	cr_expect_eq(ha_run(&c, NULL, 0, "backrest check"), 0, "see %s/backrest-log", c.dir);
	ha_note(&c, "ha: restored copy behind Patroni again (node1 on it, node2 cloned) %.1f s",
		t_rebuild);
	kperfd_stop(&k);
	ha_down(&c);
	free(month);
	free(before);
	free(a0);
	free(b0);
	free(v0);
	free(target);
}
