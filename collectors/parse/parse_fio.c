/*
 * parse_fio.c - fio --output-format=json into fio.* metrics with LKP's
 * names, per job and direction (read, write, trim; a direction with no I/O
 * is left out): fio.<job>.<dir>_bw_MBps (MiB/s), _iops, _lat_mean_ns,
 * _clat_mean_ns, _clat_stddev, _clat_<p>%_ns (50, 90, 95, 99, 99.9),
 * _slat_mean_ns; over all jobs fio.<dir>_bw_MBps, fio.<dir>_iops and
 * fio.workload (I/Os done). Text fio prints before the JSON is skipped.
 */
#include <stdio.h>
#include <string.h>

#include "collectors/base/cutil.h"
#include "collectors/parse/parse.h"

/* Jobs kept (fio's numjobs can make thousands; the run limits would cut them anyway). */
#define FIO_JOBS_MAX 512
/* Longest job name kept whole in a metric name. */
#define FIO_JOBNAME_MAX 128

static const char *const dirs[] = {"read", "write", "trim"};
#define NDIRS (sizeof(dirs) / sizeof(dirs[0]))

static const struct {
	const char *fio, *name; /* fio's percentile key, LKP's spelling */
} pcts[] = {
	{"50.000000", "50"}, {"90.000000", "90"}, {"95.000000", "95"},
	{"99.000000", "99"}, {"99.900000", "99.9"},
};

struct fio_totals {
	double bw[NDIRS], iops[NDIRS], ios;
	int seen[NDIRS];
};

static void put(struct parse_ctx *pc, const char *job, const char *dir, const char *what,
		double v, const char *unit, const char *direction)
{
	char key[FIO_JOBNAME_MAX + 64];

	if (job)
		snprintf(key, sizeof(key), "%s.%s_%s", job, dir, what);
	else
		snprintf(key, sizeof(key), "%s_%s", dir, what);
	parse_metric_as(pc, key, v, unit, direction);
}

/* obj[key] as a number; -1 when it is missing or not one. */
static int num(json_t *obj, const char *key, double *out)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_number(v))
		return -1;
	*out = json_number_value(v);
	return 0;
}

/*
 * The latency object name_ns (fio 3) or name (fio 2, microseconds) and its
 * scale to ns; NULL when fio measured none (N = 0: slat of sync engines).
 */
static json_t *latency(json_t *d, const char *name, double *to_ns)
{
	char key[16];
	json_t *o;
	double n;

	snprintf(key, sizeof(key), "%s_ns", name);
	*to_ns = 1;
	if (!json_is_object(o = json_object_get(d, key))) {
		o = json_object_get(d, name);
		*to_ns = 1000;
	}
	if (!json_is_object(o) || (!num(o, "N", &n) && n == 0))
		return NULL;
	return o;
}

/* One direction of one job; 0, or -1 with pc->err naming the key. */
static int one_dir(struct parse_ctx *pc, const char *job, size_t ji, size_t di, json_t *d,
		   struct fio_totals *t)
{
	const char *dir = dirs[di];
	double bw, iops, ios = 0, bytes = 0, x, to_ns;
	json_t *lat, *p;

	if (num(d, "bw", &bw) || num(d, "iops", &iops))
		return parse_fail(pc, "jobs[%zu].%s: no numeric \"bw\" and \"iops\"", ji, dir);
	num(d, "total_ios", &ios);
	num(d, "io_bytes", &bytes);
	if (ios == 0 && bytes == 0 && bw == 0)
		return 0; /* this job does no I/O that way */
	put(pc, job, dir, "bw_MBps", bw / 1024, "MiB/s", "higher");
	put(pc, job, dir, "iops", iops, "IOPS", "higher");
	t->bw[di] += bw / 1024;
	t->iops[di] += iops;
	t->ios += ios;
	t->seen[di] = 1;
	if ((lat = latency(d, "lat", &to_ns)) && !num(lat, "mean", &x))
		put(pc, job, dir, "lat_mean_ns", x * to_ns, "ns", "lower");
	if ((lat = latency(d, "slat", &to_ns)) && !num(lat, "mean", &x))
		put(pc, job, dir, "slat_mean_ns", x * to_ns, "ns", "lower");
	if (!(lat = latency(d, "clat", &to_ns)))
		return 0;
	if (!num(lat, "mean", &x))
		put(pc, job, dir, "clat_mean_ns", x * to_ns, "ns", "lower");
	if (!num(lat, "stddev", &x))
		put(pc, job, dir, "clat_stddev", x * to_ns, "ns", "lower");
	p = json_object_get(lat, "percentile");
	for (size_t i = 0; json_is_object(p) && i < sizeof(pcts) / sizeof(pcts[0]); i++) {
		char what[32];
		if (num(p, pcts[i].fio, &x))
			continue;
		snprintf(what, sizeof(what), "clat_%s%%_ns", pcts[i].name);
		put(pc, job, dir, what, x * to_ns, "ns", "lower");
	}
	return 0;
}

/* "job", or "job-2" for the second job of that name (numjobs= without group_reporting). */
static void job_name(json_t *seen, const char *name, char *out, size_t outsz)
{
	json_t *n = json_object_get(seen, name);
	json_int_t k = n ? json_integer_value(n) + 1 : 1;

	json_object_set_new(seen, name, json_integer(k));
	if (k == 1)
		snprintf(out, outsz, "%.*s", FIO_JOBNAME_MAX, name);
	else
		snprintf(out, outsz, "%.*s-%lld", FIO_JOBNAME_MAX, name, (long long)k);
}

static int fio_jobs(struct parse_ctx *pc, json_t *jobs)
{
	struct fio_totals t;
	json_t *seen = json_object(), *job;
	size_t ji;
	int rc = 0;

	memset(&t, 0, sizeof(t));
	json_array_foreach(jobs, ji, job) {
		const char *name = json_string_value(json_object_get(job, "jobname"));
		char jn[FIO_JOBNAME_MAX + 24];

		if (ji >= FIO_JOBS_MAX)
			break;
		if (!json_is_object(job) || !name || !*name) {
			rc = parse_fail(pc, "jobs[%zu]: no \"jobname\"", ji);
			break;
		}
		job_name(seen, name, jn, sizeof(jn));
		for (size_t di = 0; !rc && di < NDIRS; di++) {
			json_t *d = json_object_get(job, dirs[di]);
			if (d && !json_is_object(d))
				rc = parse_fail(pc, "jobs[%zu].%s is not an object", ji, dirs[di]);
			else if (d)
				rc = one_dir(pc, jn, ji, di, d, &t);
		}
		if (rc)
			break;
	}
	json_decref(seen);
	if (rc)
		return rc;
	for (size_t di = 0; di < NDIRS; di++) {
		if (!t.seen[di])
			continue;
		put(pc, NULL, dirs[di], "bw_MBps", t.bw[di], "MiB/s", "higher");
		put(pc, NULL, dirs[di], "iops", t.iops[di], "IOPS", "higher");
	}
	if (t.seen[0] || t.seen[1] || t.seen[2])
		parse_metric_as(pc, "workload", t.ios, "I/Os", "higher");
	return 0;
}

int parse_fio(struct parse_ctx *pc, const char *text, size_t len)
{
	size_t off = 0, line = 1;
	json_t *root, *jobs;
	int rc;

	/* fio may print notes ("note: both iodepth >= 1 and synchronous ...") first */
	while (off < len && text[off] != '{') {
		const char *nl = memchr(text + off, '\n', len - off);
		if (!nl) {
			off = len;
			break;
		}
		off = (size_t)(nl - text) + 1;
		line++;
	}
	if (off >= len) {
		pc->line = line > 1 ? line - 1 : 1;
		return parse_fail(pc, "no JSON object: not fio --output-format=json output");
	}
	root = parse_load_json(pc, text + off, len - off, line);
	if (!root)
		return -1;
	jobs = json_object_get(root, "jobs");
	if (!json_is_array(jobs) || !json_array_size(jobs)) {
		pc->line = line;
		rc = parse_fail(pc, "no \"jobs\" list: not fio --output-format=json output");
	} else {
		pc->line = line - 1 + parse_key_line(text + off, len - off, "jobs");
		rc = fio_jobs(pc, jobs);
	}
	json_decref(root);
	return rc;
}
