/*
 * kperf_limits.h - every input and resource limit of kperfd, in one place.
 * Each limit names its unit and why it has the value it has; code never
 * repeats a literal that is defined here.
 */
#ifndef KPERF_LIMITS_H
#define KPERF_LIMITS_H

/* Request body, bytes: a run of 100,000 samples printed with 17 digits fits. */
#define LIMIT_BODY_BYTES_DEFAULT (4u * 1024u * 1024u)
/* Upper bound an operator may configure, bytes: keeps one request's memory sane. */
#define LIMIT_BODY_BYTES_MAX (256u * 1024u * 1024u)
/* A body declared over the limit by at most this much is read and dropped
 * before its 413: answered early, the connection would be closed on unread
 * data, which resets it, and a client still sending may never read the 413. */
#define LIMIT_DRAIN_BYTES (16u * 1024u * 1024u)
/* JSON nesting depth, levels: the contract needs 4; 32 leaves room, stops stack abuse. */
#define LIMIT_JSON_DEPTH 32
/* Metrics per run: LKP's largest stats files have a few thousand keys. */
#define LIMIT_METRICS_PER_RUN 10000
/* Values per metric, iterations: per-second samples of a long run. */
#define LIMIT_VALUES_PER_METRIC 10000
/* Values per run, summed over its metrics. */
#define LIMIT_VALUES_PER_RUN 100000
/* Runs per batch POST: each run is its own set of rows in one transaction. */
#define LIMIT_RUNS_PER_BATCH 1000

/* JSON values (numbers, strings, containers) in one request body, counted
 * before decoding; and the values of all requests decoded at one time. */
#define LIMIT_REQUEST_VALUES 1000000
#define LIMIT_DECODE_VALUES 1000000
/* Characters of a metric name (printable ASCII, no space). */
#define LIMIT_METRIC_NAME 256
/* Characters of run_id ([A-Za-z0-9._:-]). */
#define LIMIT_RUN_ID 128
/* Characters of machine.name ([A-Za-z0-9._-]). */
#define LIMIT_MACHINE_NAME 64
/* Characters of test.suite ([A-Za-z0-9._-]). */
#define LIMIT_SUITE_NAME 64
/* Characters of a variant or param key, and of its value. */
#define LIMIT_KEY 64
#define LIMIT_VALUE 256
/* Keys of variant, params, environment and kernel.config, each. */
#define LIMIT_MAP_KEYS 1000
/* Characters of short text fields (subject, author, branch, series, cpu model...). */
#define LIMIT_TEXT 1024
/* Characters of long text fields (command, cmdline). */
#define LIMIT_LONG_TEXT 16384
/* Bytes of output_tail: the contract keeps the last 64 KiB of output. */
#define LIMIT_OUTPUT_TAIL (64u * 1024u)
/* Files a commit touches, listed. */
#define LIMIT_FILES 10000
/* Commits in one POST /api/v1/commits. */
#define LIMIT_COMMITS_PER_POST 10000
/* Characters of a unit string. */
#define LIMIT_UNIT 32

/* Rows per list response: the read contract's limit range. */
#define LIMIT_LIST_DEFAULT 100
#define LIMIT_LIST_MAX 1000

/* Bytes of a request URL and of all headers (libmicrohttpd's per-connection pool). */
#define LIMIT_CONNECTION_MEMORY (64u * 1024u)
/* Concurrent connections: a lab has tens of collectors and a few browsers. */
#define LIMIT_CONNECTIONS 256
/* Concurrent connections from one address: 200 slow clients on other
 * addresses must not lock out a collector. */
#define LIMIT_CONNECTIONS_PER_IP 32
/* Seconds an idle connection stays open. */
#define LIMIT_CONNECTION_TIMEOUT_S 30
/* Seconds a client is told to wait when the database is away. */
#define LIMIT_RETRY_AFTER_S 5
/* Seconds libpq waits to connect before the request answers 503. */
#define LIMIT_DB_CONNECT_TIMEOUT_S 3
/* Attempts of one transaction that lost a deadlock or serialization race. */
#define LIMIT_TX_RETRIES 5

/* Bytes of trend and compare answers the read cache keeps: a 2,000-point
 * trend is ~0.7 MB and a 5,000-metric compare ~3 MB; one answer may take a
 * quarter. The upper bound an operator may configure keeps RSS sane. */
#define LIMIT_READ_CACHE_DEFAULT (16L * 1024 * 1024)
#define LIMIT_READ_CACHE_MAX (1024L * 1024 * 1024)

/* Metric name -> id entries kperfd keeps in memory (about 100 bytes each). */
#define LIMIT_METRIC_CACHE 100000
/* commits whose shown fields kperfd keeps (commit_cache.c; ~460 B each with
 * their JSON: 9 MB at most); a full cache starts again empty */
#define LIMIT_COMMIT_CACHE 20000

/* Group commit: runs and values stored in one transaction for several requests. */
#define LIMIT_GROUP_RUNS 256
#define LIMIT_GROUP_LEADERS 2 /* ingest transactions written at once by one kperfd */
#define LIMIT_GROUP_VALUES 400000
/* Authentication failures from one address within the window, then 429 for
 * the block time: guessing a 256-bit token is hopeless, but this keeps logs
 * and the database quiet. */
#define LIMIT_AUTH_FAILURES 20
#define LIMIT_AUTH_WINDOW_S 60
#define LIMIT_AUTH_BLOCK_S 60
/* Worker threads at most, whatever the core count says. */
#define LIMIT_THREADS_MAX 64

/* Stack of a connection's thread (handlers recurse at most LIMIT_JSON_DEPTH). */
#define LIMIT_THREAD_STACK (2 * 1024 * 1024)

/* Mail from a public-inbox archive (lib/mail.c, lib/atom.c). */
/* Bytes of one mbox (a t.mbox.gz after gunzip): the largest lore threads
 * (500-patch series with replies) are ~30 MB; twice that, no more. */
#define LIMIT_MBOX_BYTES (64u * 1024u * 1024u)
/* Messages in one thread mbox: a 500-patch series with three replies each. */
#define LIMIT_THREAD_MSGS 2000
/* Bytes of one message's header block: real ones are 2-10 KiB, DKIM and long
 * Cc lists included; libmicrohttpd's own header budget is the same 64 KiB. */
#define LIMIT_MAIL_HEADER_BYTES (64u * 1024u)
/* Bytes of a Subject after unfolding and decoding: RFC 5322 lines are 998. */
#define LIMIT_MAIL_SUBJECT 1024
/* Bytes kept of a "base-commit:" value that is no sha, to say what it was. */
#define LIMIT_MAIL_BASE_OTHER 64
/* Patches in one series (the K of [PATCH M/K]): stable reviews reach ~300. */
#define LIMIT_SERIES_PATCHES 500
/* Bytes of one Atom feed: 200 search hits with their diffs as XHTML. */
#define LIMIT_ATOM_BYTES (64u * 1024u * 1024u)
/* Entries in one Atom feed: public-inbox pages at 200, new.atom gives 25. */
#define LIMIT_ATOM_ENTRIES 1000

#endif
