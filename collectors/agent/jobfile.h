/*
 * jobfile.h - a job as kperfd hands it to an agent (the claim's "job"
 * object, checked field by field), and the agent's state file that keeps
 * the job in hand and its phase across restarts and reboots.
 */
#ifndef KPERF_JOBFILE_H
#define KPERF_JOBFILE_H

#include <jansson.h>
#include <stddef.h>

#include "collectors/agent/catalogue.h"
#include "collectors/host/kernel.h"

/* Where the agent was with a job when it last wrote the state file. */
enum job_phase {
	JOB_CLAIMED, /* claimed; the kernel not yet looked at */
	JOB_HOOK,    /* the kernel hook was started */
	JOB_BOOTING, /* the kernel hook exited 0: the new kernel is on its way */
	JOB_RUNNING, /* the job's kernel runs; runs are being made */
};
const char *job_phase_name(enum job_phase ph);

/* A job whose kernel is a posted series: its first `patches` patches on
 * `base`, from the thread of message_id in the inbox at `inbox`. */
struct job_series {
	int present;
	char inbox[1024];
	char message_id[1000];
	char base[41];
	char name[1024];
	long patches, version;
};

struct job {
	long id;
	char commit[41];                      /* lower case; "" when the commit has no sha */
	char release[KERNEL_RELEASE_MAX + 1]; /* "" when kperfd knows none */
	char suite[CATALOGUE_NAME_MAX + 1];
	json_t *params, *variant; /* objects of strings, never NULL once read */
	long runs;                /* runs still wanted (0-100) */
	long lease_s;             /* 2-86400, 1800 when not given */
	json_t *json;             /* the object as received, for the state file */
	struct job_series series; /* present: the kernel is that series on its base */
};

/*
 * Read a job object (untrusted: from kperfd or a file). Returns 0, or -1
 * with err naming the field ("job.commit: ...") and j left empty.
 */
int job_parse(json_t *o, struct job *j, char *err, size_t errsz);
/* Free what j holds; j is empty afterwards. */
void job_release(struct job *j);
/* "commit <sha> (release <r>)" with "unknown" for what is missing. */
void job_text(const struct job *j, char *out, size_t outsz);

/* A whole number in [min, max] as JSON gives it: 0 and *out, or -1. */
int job_int(const json_t *v, long min, long max, long *out);

/* The state file of one agent: a job of machine at server. */
struct jobfile {
	const char *path;
	const char *server;
	const char *machine;
};

/* Write j in phase ph (a temporary file renamed over it). 0, or -1 after a message. */
int jobfile_save(const struct jobfile *f, const struct job *j, enum job_phase ph);
/* Remove the file (gone already is fine). */
void jobfile_remove(const struct jobfile *f);

enum jobfile_load {
	JOBFILE_NONE,    /* no file: nothing to resume */
	JOBFILE_FOUND,   /* *j and *ph hold the saved job */
	JOBFILE_BROKEN,  /* unreadable or malformed (said on stderr) */
	JOBFILE_FOREIGN, /* another machine's or server's (said on stderr) */
};
enum jobfile_load jobfile_load(const struct jobfile *f, struct job *j, enum job_phase *ph);

#endif
