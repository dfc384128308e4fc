/*
 * test_vm_lab.c - a VM lab on a real kernel: Debian's linux-source-6.1 as
 * the tree (tests/kernel/tree.sh), kperf-collect agent --kernel-build --vm
 * building each job's commit with Kbuild and ccache and booting it in QEMU
 * (TCG with icount: the guest's clock counts instructions), readtwice run
 * in the guest, ten boots a commit. The base and a commit that slows
 * folio_mark_accessed() are told apart; a commit that does not compile fails its job with the
 * compiler's words. `make test-kernel` (scripts/test-kernel.sh) sets
 * KPERF_KERNEL_CACHE, KPERF_KERNEL_BASE, _SLOW and _BROKEN.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/collect/agent_lab.h"
#include "tests/collect/testutil.h"

/* A cold build (empty ccache) takes 10-13 min on 2 cores; three kernels. */
#define KERNEL_WAIT_S 3000

static void setup(void)
{
	kperfd_start(&lab_kperfd, NULL);
	snprintf(lab_url, sizeof(lab_url), "http://127.0.0.1:%d", lab_kperfd.port);
}

static void teardown(void)
{
	kperfd_stop(&lab_kperfd);
}

TestSuite(vm_lab, .init = setup, .fini = teardown, .timeout = 3600);

static const char *env_or_fail(const char *name)
{
	const char *v = getenv(name);
	cr_assert(v && *v, "%s is not set: run the test with make test-kernel", name);
	return v;
}

/* The job, once it is done or failed (asserted within KERNEL_WAIT_S). */
static json_t *job_end(long id, struct agent_proc *ap)
{
	double end = now_s() + KERNEL_WAIT_S;

	for (;;) {
		json_t *j = get_job(id);
		const char *st = job_str(j, "state");
		if (!strcmp(st, "done") || !strcmp(st, "failed"))
			return j;
		json_decref(j);
		if (now_s() > end) {
			char *log = slurp_or_empty(ap->log);
			size_t n = strlen(log);
			cr_assert_fail("job %ld did not end within %d s; the agent's log ends:\n%s", id,
				       KERNEL_WAIT_S, log + (n > 6000 ? n - 6000 : 0));
		}
		pause_ms(1000);
	}
}

/* Queue one run of the catalogue's test on commit sha; the job once it ended. */
static json_t *job_for(const char *sha, struct agent_proc *ap, long *id)
{
	char q[512];

	snprintf(q, sizeof(q), "{\"commit\":\"%s\",\"suite\":\"readtwice\","
		 "\"params\":{\"procs\":\"1\",\"size-mb\":\"64\"},\"runs\":1}", sha);
	*id = queue(q);
	return job_end(*id, ap);
}

/* The runs of job id as documents (GET /api/v1/runs/ID for each). */
static json_t *job_run_docs(long id)
{
	char ids[24], path[256];
	const char *p[1] = {ids};
	json_t *out = json_array();
	PGconn *c = harness_db(&lab_kperfd);
	PGresult *r;

	snprintf(ids, sizeof(ids), "%ld", id);
	r = PQexecParams(c,
			 "SELECT r.run_id FROM job_run jr JOIN run r ON r.id = jr.run_id"
			 " WHERE jr.job_id = $1::bigint ORDER BY r.id",
			 1, NULL, p, NULL, NULL, 0);
	cr_assert_eq(PQresultStatus(r), PGRES_TUPLES_OK, "%s", PQerrorMessage(c));
	for (int i = 0; i < PQntuples(r); i++) {
		snprintf(path, sizeof(path), "/api/v1/runs/%s", PQgetvalue(r, i, 0));
		json_array_append_new(out, harness_get_json(&lab_kperfd, path, 200));
	}
	PQclear(r);
	PQfinish(c);
	return out;
}

/* The values of metric m in run doc d, their mean and coefficient of variation. */
static double metric_mean(json_t *d, const char *m, double *cv, size_t *n)
{
	json_t *v = json_object_get(json_object_get(d, "metrics"), m), *x;
	double s = 0, ss = 0, mean;
	size_t i;

	*n = json_array_size(v);
	cr_assert_gt(*n, 0, "no %s in the run: %s", m, json_dumps(d, 0));
	json_array_foreach(v, i, x)
		s += json_number_value(x);
	mean = s / (double)*n;
	json_array_foreach(v, i, x)
		ss += (json_number_value(x) - mean) * (json_number_value(x) - mean);
	*cv = *n > 1 ? sqrt(ss / (double)(*n - 1)) / mean : 0;
	return mean;
}

Test(vm_lab, builds_boots_and_measures_each_commit_and_reports_a_build_failure)
{
	const char *cache = env_or_fail("KPERF_KERNEL_CACHE");
	const char *base = env_or_fail("KPERF_KERNEL_BASE");
	const char *slow = env_or_fail("KPERF_KERNEL_SLOW");
	const char *broken = env_or_fail("KPERF_KERNEL_BROKEN");
	char tree[4200], build[4200], text[8192], rel[64];
	struct agent_proc ap;
	struct lab l;
	json_t *j, *docs, *d;
	double tbase, tslow, cvb, cvs, t0;
	size_t nb, ns;
	long id;

	snprintf(tree, sizeof(tree), "%s/linux", cache);
	snprintf(build, sizeof(build), "%s/build", cache);
	lab_init(&l, base, "6.1.0-host");
	snprintf(text, sizeof(text),
		 "[readtwice]\nsuite = readtwice\nparams = procs=1 size-mb=64\nformat = readtwice\n"
		 "iterations = 10\ncommand = %s/readtwice-static --procs 1 --size-mb 64 --dir /tmp\n",
		 cache);
	tu_write(l.dir, "catalogue", text);
	{
		const char *more[] = {"--tree", tree, "--kernel-build", build, "--vm", "--vm-accel",
				      "tcg", "--vm-icount", "--vm-memory", "512", "--idle-exit",
				      "3600", NULL};
		agent_start(&ap, &l, "vm-lab", more);
	}

	snprintf(text, sizeof(text),
		 "[{\"sha\":\"%s\",\"subject\":\"Linux 6.1\"},"
		 "{\"sha\":\"%s\",\"parent\":\"%s\",\"subject\":\"mm/swap: spin\"},"
		 "{\"sha\":\"%s\",\"parent\":\"%s\",\"subject\":\"mm/swap: broken\"}]",
		 base, slow, base, broken, base);
	cr_assert_eq(call("POST", "/api/v1/commits", TOKEN_COLLECTOR, text, NULL), 201);

	/* the base: built, booted three times, measured in the guest */
	t0 = now_s();
	j = job_for(base, &ap, &id);
	cr_assert_str_eq(job_str(j, "state"), "done", "%s", json_dumps(j, 0));
	json_decref(j);
	fprintf(stderr, "vm_lab: base built, booted and measured in %.0f s\n", now_s() - t0);
	docs = job_run_docs(id);
	cr_assert_eq(json_array_size(docs), 1);
	d = json_array_get(docs, 0);
	snprintf(rel, sizeof(rel), "-g%.12s", base);
	cr_assert(strstr(json_string_value(json_object_get(json_object_get(d, "kernel"), "release")),
			 rel),
		  "the guest's uname -r names the commit: %s",
		  json_dumps(json_object_get(d, "kernel"), 0));
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(d, "variant"), "vm")),
			 "tcg-icount-1cpu-512M");
	cr_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(d, "environment"), "vm.icount")),
	    "yes");
	cr_assert_str_eq(json_string_value(json_object_get(
			     json_object_get(json_object_get(d, "kernel"), "config"), "CONFIG_LRU_GEN")),
			 "y");
	/* the guest's own counters: readtwice's 64 MiB read twice in the guest */
	{
		double cv;
		size_t n;
		cr_assert_gt(metric_mean(d, "proc-vmstat.pgfault", &cv, &n), 0);
	}
	tbase = metric_mean(d, "readtwice.throughput", &cvb, &nb);
	cr_assert_eq(nb, 10);
	json_decref(docs);

	/* patch: folio_mark_accessed() made slower */
	j = job_for(slow, &ap, &id);
	cr_assert_str_eq(job_str(j, "state"), "done", "%s", json_dumps(j, 0));
	json_decref(j);
	docs = job_run_docs(id);
	tslow = metric_mean(json_array_get(docs, 0), "readtwice.throughput", &cvs, &ns);
	json_decref(docs);
	fprintf(stderr, "vm_lab: readtwice.throughput over %zu boots each: base %.1f (CV %.4f%%),"
		" slow %.1f (CV %.4f%%): %+.2f%%\n", nb, tbase, 100 * cvb, tslow, 100 * cvs,
		100 * (tslow - tbase) / tbase);
	cr_assert_eq(ns, 10);
	cr_assert_lt(cvb, 0.01, "the base's 10 boots vary by %.3f%%", 100 * cvb);
	cr_assert_lt(tslow, tbase * 0.97, "base %.1f, slow %.1f", tbase, tslow);

	/* a commit that does not compile: failed with the compiler's words */
	j = job_for(broken, &ap, &id);
	cr_assert_str_eq(job_str(j, "state"), "failed", "%s", json_dumps(j, 0));
	{
		const char *why = json_string_value(json_object_get(
		    json_array_get(json_object_get(j, "failures"), 0), "reason"));
		cr_assert(why && strstr(why, "does not build: make bzImage exited with status 2: "
					 "mm/swap.c:"),
			  "%s", json_dumps(j, 0));
		cr_assert(strstr(why, ": error: expected expression before"), "%s", why);
		cr_assert(strstr(why, "gcc"), "the compiler is named: %s", why);
	}
	json_decref(j);
	kill(ap.pid, SIGTERM);
	cr_assert_eq(agent_wait(&ap, WAIT_S), 0);
}
