/*
 * readtwice.c - the page-cache read-twice microbenchmark (the seed's
 * "docker-ized readtwice"): N processes each write a file, fsync it, drop it
 * from the page cache with posix_fadvise, then read it twice, a cold read
 * that puts its pages on the LRU and one that activates them. A workload
 * kperf-collect runs; its output is what collectors/parse/parse_readtwice.c reads.
 */

/*
 * Output (MB = 10^6 bytes, as dd(1) counts them):
 *   readtwice: <n> processes, <bytes> bytes each, file cache dropped with posix_fadvise
 *   readtwice: process <i>: <bytes> bytes read twice in <s> s: <x> MB/s
 *   readtwice: total: <n> processes, <n * bytes> bytes in <s> s: <x> MB/s
 * A process's rate is 2 * bytes over its own two reads; the total's is all
 * bytes read over the wall time from the common start of the reads to the end
 * of the last. The processes create their files first and start reading
 * together. Exit status 0, 1 when anything failed, 64 for a bad command line.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/banned.h"

#define PROCS_MAX 4096
#define SIZE_MB_MAX (1024 * 1024) /* 1 TiB per file */
#define IO_CHUNK (1024 * 1024)
#define PATH_LEN 4096 /* a file name in --dir; longer ones fail in open */

struct opts {
	long procs;
	long size_mb;
	const char *dir;
	int keep;
};

/* What a worker reports to the parent over a pipe (a single write < PIPE_BUF). */
struct result {
	int32_t id;
	int32_t ok;
	double read_s;   /* both reads */
	double end;      /* CLOCK_MONOTONIC at the end of the second read */
	double resident; /* fraction of the file still cached after the drop */
};

static const char usage_text[] =
	"usage: readtwice [--procs N] [--size-mb M] [--dir D] [--keep]\n"
	"  N processes (default 1, at most 4096) each write an M MiB file (default 64)\n"
	"  in D (default .), fsync it, drop it from the page cache with\n"
	"  posix_fadvise(POSIX_FADV_DONTNEED), read it twice and report MB/s.\n"
	"  --keep leaves the files behind.\n";

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A whole decimal number in [min, max]; 0 or -1. */
static int parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	o->procs = 1;
	o->size_mb = 64;
	o->dir = ".";
	o->keep = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage_text, stdout);
			exit(0);
		}
		if (!strcmp(a, "--keep")) {
			o->keep = 1;
			continue;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "readtwice: unknown option or missing value \"%s\"\n", a);
			return -1;
		}
		if (!strcmp(a, "--procs")) {
			if (parse_long(argv[++i], 1, PROCS_MAX, &o->procs)) {
				fprintf(stderr, "readtwice: --procs \"%s\": expected 1 to %d\n",
					argv[i], PROCS_MAX);
				return -1;
			}
		} else if (!strcmp(a, "--size-mb")) {
			if (parse_long(argv[++i], 1, SIZE_MB_MAX, &o->size_mb)) {
				fprintf(stderr, "readtwice: --size-mb \"%s\": expected 1 to %d\n",
					argv[i], SIZE_MB_MAX);
				return -1;
			}
		} else if (!strcmp(a, "--dir")) {
			o->dir = argv[++i];
		} else {
			fprintf(stderr, "readtwice: unknown option \"%s\"\n", a);
			return -1;
		}
	}
	return 0;
}

static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Read the whole file from offset 0; returns the bytes read or -1. */
static int64_t read_through(int fd, char *buf)
{
	int64_t total = 0;
	off_t off = 0;

	for (;;) {
		ssize_t r = pread(fd, buf, IO_CHUNK, off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			return total;
		total += r;
		off += r;
	}
}

/* The fraction of the file's pages in the page cache (mincore), or -1 when unknown. */
static double resident_fraction(int fd, int64_t len)
{
	enum { VEC = 16384 };
	size_t page = (size_t)sysconf(_SC_PAGESIZE), total = 0, in = 0;
	unsigned char vec[VEC];
	void *map;

	map = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -1;
	/* a bounded vector, a window at a time: a 1 TiB file has 256 Mi pages */
	for (size_t off = 0; off < (size_t)len; off += VEC * page) {
		size_t n = (size_t)len - off < VEC * page ? (size_t)len - off : VEC * page;
		size_t np = (n + page - 1) / page;
		if (mincore((char *)map + off, n, vec)) {
			munmap(map, (size_t)len);
			return -1;
		}
		for (size_t i = 0; i < np; i++)
			in += vec[i] & 1;
		total += np;
	}
	munmap(map, (size_t)len);
	return total ? (double)in / (double)total : 0;
}

/* Create the file of worker id; returns an open descriptor or -1 (message printed). */
static int create_file(const struct opts *o, int id, char *buf, char *path, size_t pathsz)
{
	int64_t size = (int64_t)o->size_mb * 1024 * 1024;
	int fd;

	snprintf(path, pathsz, "%s/readtwice.%ld.%d", o->dir, (long)getppid(), id);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "readtwice: %s: %s\n", path, strerror(errno));
		return -1;
	}
	/* not zeros: a file system must not be able to skip storing them */
	for (size_t i = 0; i < IO_CHUNK; i++)
		buf[i] = (char)('a' + (i * 31 + (size_t)id) % 26);
	for (int64_t done = 0; done < size; done += IO_CHUNK) {
		if (write_all(fd, buf, IO_CHUNK)) {
			fprintf(stderr, "readtwice: writing %s: %s\n", path, strerror(errno));
			close(fd);
			return -1;
		}
	}
	if (fsync(fd)) {
		fprintf(stderr, "readtwice: fsync %s: %s\n", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * One worker: create, drop, say ready, wait for go (EOF on go_fd), read
 * twice, report. Never returns.
 */
static void worker(const struct opts *o, int id, int ready_fd, int go_fd, int result_fd)
{
	struct result res;
	char path[PATH_LEN], byte = 'r';
	char *buf = malloc(IO_CHUNK);
	int64_t size = (int64_t)o->size_mb * 1024 * 1024;
	double t0;
	int fd, err;

	memset(&res, 0, sizeof(res));
	res.id = id;
	fd = buf ? create_file(o, id, buf, path, sizeof(path)) : -1;
	if (fd >= 0) {
		err = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		if (err)
			fprintf(stderr, "readtwice: posix_fadvise %s: %s\n", path, strerror(err));
		res.resident = resident_fraction(fd, size);
	}
	/* ready even after a failure, so the parent never waits forever */
	if (write_all(ready_fd, &byte, 1) == 0) {
		/* closed at once, so a worker that died before this point ends the wait */
		close(ready_fd);
		while (read(go_fd, &byte, 1) < 0 && errno == EINTR)
			;
	}
	if (fd >= 0) {
		int64_t first, second;
		t0 = now();
		first = read_through(fd, buf);
		second = read_through(fd, buf);
		res.end = now();
		res.read_s = res.end - t0;
		if (first != size || second != size)
			fprintf(stderr, "readtwice: reading %s: %s\n", path,
				first < 0 || second < 0 ? strerror(errno) : "short read");
		else
			res.ok = 1;
		close(fd);
		if (!o->keep && unlink(path))
			fprintf(stderr, "readtwice: unlink %s: %s\n", path, strerror(errno));
	}
	free(buf);
	write_all(result_fd, &res, sizeof(res));
	_exit(res.ok ? 0 : 1);
}

static int run(const struct opts *o)
{
	int ready[2], go[2], results[2];
	struct result *res = calloc((size_t)o->procs, sizeof(*res));
	int64_t size = (int64_t)o->size_mb * 1024 * 1024;
	long started = 0, nready = 0, ngot = 0, nok = 0;
	double start = 0, end = 0, resident = 0;
	int rc = 0;
	char byte;

	if (!res || pipe(ready) || pipe(go) || pipe(results)) {
		fprintf(stderr, "readtwice: %s\n", strerror(errno));
		free(res);
		return 1;
	}
	printf("readtwice: %ld processes, %" PRId64
	       " bytes each, file cache dropped with posix_fadvise\n",
	       o->procs, size);
	fflush(stdout);
	for (long i = 0; i < o->procs; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			fprintf(stderr, "readtwice: fork: %s\n", strerror(errno));
			rc = 1;
			break;
		}
		if (pid == 0) {
			close(ready[0]);
			close(go[1]);
			close(results[0]);
			worker(o, (int)i, ready[1], go[0], results[1]);
		}
		started++;
	}
	close(ready[1]);
	close(go[0]);
	close(results[1]);
	while (nready < started) {
		ssize_t r = read(ready[0], &byte, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		nready++;
	}
	start = now();
	close(go[1]); /* EOF: go */
	while (ngot < started) {
		struct result one;
		ssize_t r = read(results[0], &one, sizeof(one));
		if (r < 0 && errno == EINTR)
			continue;
		if (r != (ssize_t)sizeof(one) || one.id < 0 || one.id >= o->procs)
			break;
		res[one.id] = one;
		ngot++;
	}
	close(ready[0]);
	close(results[0]);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	for (long i = 0; i < o->procs; i++) {
		if (!res[i].ok || res[i].read_s <= 0)
			continue;
		nok++;
		if (res[i].end > end)
			end = res[i].end;
		if (res[i].resident > resident)
			resident = res[i].resident;
		printf("readtwice: process %ld: %" PRId64 " bytes read twice in %.3f s: %.2f MB/s\n",
		       i, size, res[i].read_s, 2.0 * (double)size / res[i].read_s / 1e6);
	}
	if (nok && end > start)
		printf("readtwice: total: %ld processes, %" PRId64 " bytes in %.3f s: %.2f MB/s\n",
		       nok, (int64_t)nok * size, end - start,
		       2.0 * (double)nok * (double)size / (end - start) / 1e6);
	if (resident > 0.01)
		printf("readtwice: warning: up to %.0f%% of a file stayed in the page cache after "
		       "POSIX_FADV_DONTNEED (tmpfs?): the first read was not cold\n",
		       resident * 100);
	if (nok < o->procs) {
		fprintf(stderr, "readtwice: %ld of %ld processes failed\n", o->procs - nok,
			o->procs);
		rc = 1;
	}
	free(res);
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct stat st;

	if (parse_opts(argc, argv, &o)) {
		fputs(usage_text, stderr);
		return 64;
	}
	errno = 0;
	if (stat(o.dir, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "readtwice: --dir %s: %s\n", o.dir,
			errno ? strerror(errno) : "not a directory");
		return 64;
	}
	signal(SIGPIPE, SIG_IGN);
	return run(&o);
}
