/*
 * test_mail.c - lib/mail.c on what a real public-inbox served
 * (tests/fixtures/mail/, made by make-fixtures.sh: a v2 3-patch series and a
 * reply) and on hostile input: truncated and bomb gzip, too many messages,
 * huge subjects and header blocks, bad UTF-8, malformed and folded headers.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "lib/buf.h"
#include "lib/kperf_limits.h"
#include "lib/mail.h"

#define COVER "cover.1796190058.git.dev@example.org"
#define BASE "3deccb86187f61247c8f8b59cd49885af68e903f"
#define P1 "33637fef98d0f027afe2ea2d37408c94971198fc.1796190058.git.dev@example.org"
#define P2 "533e77ddc3d1778e8d6f02a86a65f81d21083169.1796190058.git.dev@example.org"
#define P3 "1dbf86ac99b21787d5a3107cf31f4b5a3a052a6f.1796190058.git.dev@example.org"

static char *fixture(const char *name, size_t *len)
{
	char path[256];
	FILE *f;
	char *p;
	long n;

	snprintf(path, sizeof(path), "tests/fixtures/mail/%s", name);
	f = fopen(path, "rb");
	cr_assert_not_null(f, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc((size_t)n + 1);
	cr_assert_eq(fread(p, 1, (size_t)n, f), (size_t)n);
	p[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return p;
}

/* The one message of text; asserts it parses. */
static void parse1(const char *text, struct mail_msg *m)
{
	char err[256] = "";
	cr_assert_eq(mail_parse_one(text, strlen(text), m, err, sizeof(err)), 0, "%s", err);
}

Test(mail, thread_mbox_gz_from_public_inbox)
{
	size_t glen, len, n, skipped;
	char *gz = fixture("thread.mbox.gz", &glen), *text, err[256] = "";
	struct mail_msg *v;

	cr_assert_eq(mail_gunzip((unsigned char *)gz, glen, LIMIT_MBOX_BYTES, &text, &len, err,
				 sizeof(err)), 0, "%s", err);
	cr_expect_eq(len, 4617); /* the size of thread.mbox, gunzip's output */
	cr_assert_eq(mail_parse_mbox(text, len, &v, &n, &skipped, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(n, 5);
	cr_expect_eq(skipped, 0);

	cr_expect_str_eq(v[0].msgid, COVER);
	cr_expect_str_eq(v[0].subject, "[PATCH v2 0/3] mm: per-memcg lru_lock");
	cr_expect_str_eq(v[0].from_name, "Lab Dev");
	cr_expect_str_eq(v[0].from_email, "dev@example.org");
	cr_expect_str_eq(v[0].date, "Sun, 11 Dec 2022 12:00:00 +0000");
	cr_expect_null(v[0].in_reply_to);
	cr_expect_eq(v[0].nrefs, 0);
	cr_expect_str_eq(v[0].base_commit, BASE);
	cr_expect_eq(v[0].has_diff, 0);
	cr_expect_eq(v[0].nfiles, 0);
	/* mboxrd's ">From " in the cover's text is unescaped */
	cr_expect_not_null(strstr(v[0].body, "\nFrom a line that mboxrd must escape.\n"));
	cr_expect_null(strstr(v[0].body, ">From"));
	cr_expect(strncmp(v[0].body, "Per-lruvec lru_lock.\n", 21) == 0);

	cr_expect_str_eq(v[1].msgid, P1);
	cr_expect_str_eq(v[1].subject, "[PATCH v2 1/3] mm: add lru_lock to struct lruvec");
	cr_expect_str_eq(v[1].in_reply_to, COVER);
	cr_assert_eq(v[1].nrefs, 1);
	cr_expect_str_eq(v[1].refs[0], COVER);
	cr_expect_eq(v[1].has_diff, 1);
	cr_assert_eq(v[1].nfiles, 1);
	cr_expect_str_eq(v[1].files[0], "include/linux/mmzone.h");
	cr_expect_null(v[1].base_commit);

	cr_expect_str_eq(v[2].msgid, P2);
	cr_assert_eq(v[2].nfiles, 1);
	cr_expect_str_eq(v[2].files[0], "mm/vmscan.c");

	cr_expect_str_eq(v[3].msgid, P3);
	cr_expect_str_eq(v[3].subject, "[PATCH v2 3/3] mm: remove pgdat->lru_lock");
	cr_assert_eq(v[3].nfiles, 2);
	cr_expect_str_eq(v[3].files[0], "include/linux/mmzone.h");
	cr_expect_str_eq(v[3].files[1], "mm/vmscan.c");

	/* the reply: RFC 2047 name, folded subject, a Message-ID with '+' and '/' */
	cr_expect_str_eq(v[4].msgid, "lab+result/1@example.org");
	cr_expect_str_eq(v[4].subject, "Re: [PATCH v2 0/3] mm: per-memcg lru_lock <&> results");
	cr_expect_str_eq(v[4].from_name, "J\xc3\xb6rg R\xc3\xbc" "ckert");
	cr_expect_str_eq(v[4].from_email, "jr@example.org");
	cr_expect_str_eq(v[4].in_reply_to, COVER);
	cr_expect_str_eq(v[4].x_kperf, "run=42");
	cr_expect_str_eq(v[4].body, "Applied on top, results: no change.\n");
	cr_expect_eq(v[4].has_diff, 0);
	cr_expect_null(v[1].x_kperf);
	mail_msgs_free(v, n);
	free(text);
	free(gz);
}

Test(mail, raw_message_from_public_inbox)
{
	size_t len;
	char *raw = fixture("patch2.raw", &len), err[128];
	struct mail_msg m, *v;
	size_t n, skipped;

	cr_assert_eq(mail_parse_one(raw, len, &m, err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(m.msgid, P2);
	cr_expect_str_eq(m.subject,
			 "[PATCH v2 2/3] mm/vmscan: use lruvec->lru_lock in shrink_lruvec");
	cr_expect(strncmp(m.body, "Use the per-lruvec lock in reclaim.\n", 36) == 0);
	cr_expect_eq(m.has_diff, 1);
	mail_msg_free(&m);
	/* the same through the mbox reader: one message */
	cr_assert_eq(mail_parse_mbox(raw, len, &v, &n, &skipped, err, sizeof(err)), 0);
	cr_assert_eq(n, 1);
	cr_expect_str_eq(v[0].msgid, P2);
	mail_msgs_free(v, n);
	free(raw);

	raw = fixture("cover.raw", &len);
	cr_assert_eq(mail_parse_one(raw, len, &m, err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(m.base_commit, BASE);
	cr_expect_str_eq(m.msgid, COVER);
	mail_msg_free(&m);
	mail_msg_free(NULL);
	mail_msgs_free(NULL, 3);
	free(raw);
}

Test(mail, gunzip_truncated_and_corrupt)
{
	size_t glen, len;
	char *gz = fixture("thread.mbox.gz", &glen), *out = (char *)1, err[128] = "";

	cr_expect_eq(mail_gunzip((unsigned char *)gz, glen / 2, LIMIT_MBOX_BYTES, &out, &len, err,
				 sizeof(err)), -1);
	cr_expect_str_eq(err, "truncated gzip");
	cr_expect_null(out);
	/* all the data but the 8-byte trailer (CRC and size) */
	cr_expect_eq(mail_gunzip((unsigned char *)gz, glen - 8, LIMIT_MBOX_BYTES, &out, &len, err,
				 sizeof(err)), -1);
	cr_expect_str_eq(err, "truncated gzip");
	cr_expect_eq(mail_gunzip((unsigned char *)gz, 0, LIMIT_MBOX_BYTES, &out, &len, err,
				 sizeof(err)), -1);
	cr_expect_str_eq(err, "truncated gzip");
	/* a flipped byte in the data: corrupt (bad data or CRC), never accepted */
	gz[glen / 2] ^= 0x55;
	cr_expect_eq(mail_gunzip((unsigned char *)gz, glen, LIMIT_MBOX_BYTES, &out, &len, err,
				 sizeof(err)), -1);
	cr_expect(strncmp(err, "gunzip: ", 8) == 0, "%s", err);
	cr_expect_eq(mail_gunzip((const unsigned char *)"plain text, not gzip", 20,
				 LIMIT_MBOX_BYTES, &out, &len, err, sizeof(err)), -1);
	free(gz);
}

/* n bytes of zeros, gzip-compressed (about n / 1000 bytes). */
static unsigned char *gzip_zeros(size_t n, size_t *gzlen)
{
	static unsigned char zeros[65536];
	z_stream zs;
	size_t cap = n / 500 + 1024;
	unsigned char *out = malloc(cap);

	memset(&zs, 0, sizeof(zs));
	cr_assert_eq(deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY), Z_OK);
	zs.next_out = out;
	zs.avail_out = (unsigned)cap;
	while (n > 0) {
		size_t k = n < sizeof(zeros) ? n : sizeof(zeros);
		zs.next_in = zeros;
		zs.avail_in = (unsigned)k;
		n -= k;
		cr_assert_neq(deflate(&zs, n ? Z_NO_FLUSH : Z_FINISH), Z_STREAM_ERROR);
	}
	*gzlen = cap - zs.avail_out;
	deflateEnd(&zs);
	return out;
}

Test(mail, gunzip_bomb_over_the_cap)
{
	size_t gzlen, len;
	unsigned char *gz = gzip_zeros(100u * 1024 * 1024, &gzlen);
	char *out, err[128];

	cr_expect_lt(gzlen, 200 * 1024, "100 MiB of zeros in %zu bytes", gzlen);
	cr_expect_eq(mail_gunzip(gz, gzlen, LIMIT_MBOX_BYTES, &out, &len, err, sizeof(err)), -1);
	cr_expect_str_eq(err, "gunzip: output over 67108864 bytes");
	cr_expect_null(out);
	free(gz);
	/* at the cap exactly: accepted */
	gz = gzip_zeros(1024 * 1024, &gzlen);
	cr_assert_eq(mail_gunzip(gz, gzlen, 1024 * 1024, &out, &len, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(len, 1024 * 1024);
	cr_expect_eq(out[len], '\0');
	free(out);
	cr_expect_eq(mail_gunzip(gz, gzlen, 1024 * 1024 - 1, &out, &len, err, sizeof(err)), -1);
	free(gz);
}

static void mbox_of(struct buf *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		buf_printf(b, "From mboxrd@z Thu Jan  1 00:00:00 1970\nMessage-ID: <m%zu@x>\n"
			      "Subject: [PATCH %zu/%zu] x\n\nbody\n\n", i, i % 500 + 1, (size_t)500);
}

Test(mail, mbox_message_limit)
{
	struct buf b = BUF_INIT;
	struct mail_msg *v;
	size_t n, skipped;
	char err[128];

	mbox_of(&b, LIMIT_THREAD_MSGS);
	cr_assert_eq(mail_parse_mbox(b.data, b.len, &v, &n, &skipped, err, sizeof(err)), 0);
	cr_expect_eq(n, LIMIT_THREAD_MSGS);
	cr_expect_str_eq(v[n - 1].msgid, "m1999@x");
	cr_expect_str_eq(v[n - 1].body, "body\n");
	mail_msgs_free(v, n);
	mbox_of(&b, 1);
	cr_expect_eq(mail_parse_mbox(b.data, b.len, &v, &n, &skipped, err, sizeof(err)), -1);
	cr_expect_str_eq(err, "mbox has over 2000 messages");
	cr_expect_null(v);
	cr_expect_eq(n, 0);
	buf_release(&b);
}

Test(mail, mbox_byte_limit)
{
	size_t len = LIMIT_MBOX_BYTES + 1u;
	char *big = malloc(len), err[128];
	struct mail_msg *v, m;
	size_t n, skipped;

	memset(big, 'a', len);
	memcpy(big, "From x\n", 7);
	cr_expect_eq(mail_parse_mbox(big, len, &v, &n, &skipped, err, sizeof(err)), -1);
	cr_expect_str_eq(err, "mbox of 67108865 bytes is over the limit of 67108864");
	cr_expect_eq(mail_parse_one(big, len, &m, err, sizeof(err)), -1);
	free(big);
}

Test(mail, huge_subject_skips_that_message_only)
{
	struct buf b = BUF_INIT, subj = BUF_INIT;
	struct mail_msg *v, m;
	size_t n, skipped, i;
	char err[128];

	for (i = 0; i < 10 * 1024; i++)
		buf_putc(&subj, 'a' + (char)(i % 26));
	buf_printf(&b, "From mboxrd@z Thu Jan  1 00:00:00 1970\nMessage-ID: <a@x>\nSubject: first\n\n"
		       "1\n\nFrom mboxrd@z Thu Jan  1 00:00:00 1970\nMessage-ID: <b@x>\n"
		       "Subject: %s\n\n2\n\nFrom mboxrd@z Thu Jan  1 00:00:00 1970\n"
		       "Message-ID: <c@x>\nSubject: third\n\n3\n",
		   subj.data);
	cr_assert_eq(mail_parse_mbox(b.data, b.len, &v, &n, &skipped, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(n, 2);
	cr_expect_eq(skipped, 1);
	cr_expect_str_eq(v[0].msgid, "a@x");
	cr_expect_str_eq(v[1].msgid, "c@x");
	cr_expect_str_eq(v[1].body, "3\n");
	mail_msgs_free(v, n);
	cr_expect_eq(mail_parse_one(strstr(b.data, "Message-ID: <b@x>"), 10300, &m, err,
				    sizeof(err)), -1);
	cr_expect_str_eq(err, "subject of 10240 bytes is over the limit of 1024");
	buf_release(&b);
	buf_release(&subj);
}

Test(mail, header_block_limit)
{
	struct buf b = BUF_INIT;
	struct mail_msg *v, m;
	size_t n, skipped;
	char err[128];

	buf_puts(&b, "From mboxrd@z Thu Jan  1 00:00:00 1970\nSubject: ok\n\nbody\n\n"
		     "From mboxrd@z Thu Jan  1 00:00:00 1970\nSubject: x\n");
	while (b.len < LIMIT_MAIL_HEADER_BYTES + 100)
		buf_puts(&b, "Cc: someone-with-a-long-name@example.org\n");
	buf_puts(&b, "\nbody\n");
	cr_expect_eq(mail_parse_mbox(b.data, b.len, &v, &n, &skipped, err, sizeof(err)), -1);
	cr_expect_str_eq(err, "message 2: header block over 65536 bytes");
	cr_expect_null(v);
	cr_expect_eq(mail_parse_one(strstr(b.data, "Subject: x"), b.len - 60, &m, err,
				    sizeof(err)), -1);
	cr_expect_null(m.subject);
	buf_release(&b);
}

Test(mail, non_utf8_and_encoded_words)
{
	struct mail_msg m;

	parse1("Message-ID: <u@x>\nSubject: caf\xe9 \xff\xfe ok \xc3\xa9\n"
	       "From: R\xfc" "diger <r@x>\n\nbody \xe9\n", &m);
	cr_expect_str_eq(m.subject, "caf? ?? ok \xc3\xa9");
	cr_expect_str_eq(m.from_name, "R?diger");
	cr_expect_str_eq(m.body, "body \xe9\n"); /* the body is kept as sent */
	mail_msg_free(&m);

	parse1("Subject: =?UTF-8?B?W1BBVENIXSBtbTogw6k=?=\n"
	       "From: =?iso-8859-1?q?J=F6rg?= =?iso-8859-1?q?_M=FCller?= <j@x>\n\n", &m);
	cr_expect_str_eq(m.subject, "[PATCH] mm: \xc3\xa9");
	cr_expect_str_eq(m.from_name, "J\xc3\xb6rg M\xc3\xbcller");
	cr_expect_null(m.msgid);
	mail_msg_free(&m);

	/* an encoded word that decodes to bad UTF-8 or controls; a broken word */
	parse1("Subject: =?utf-8?q?a=FF=00b=0Ac?= =?utf-8?x?zz?= =?utf-8?b?!!?=\n\n", &m);
	cr_expect_str_eq(m.subject, "a??b?c =?utf-8?x?zz?= =?utf-8?b?!!?=");
	mail_msg_free(&m);
}

Test(mail, folded_and_malformed_headers)
{
	struct mail_msg m;

	parse1("Message-ID:\n <fold@x>\nThis line is not a header\n: no name\n"
	       "Subject: [PATCH v2 1/2] a subject\n\tthat is folded\n  twice\n"
	       "References: <r1@x>\n <r2@x> <unclosed@x\n\t<r3@x>\n"
	       "From: \"Last, First\" <lf@x>\r\nX-Kperf-Report:  job=7 \n\nbody\n", &m);
	cr_expect_str_eq(m.msgid, "fold@x");
	cr_expect_str_eq(m.subject, "[PATCH v2 1/2] a subject that is folded  twice");
	cr_assert_eq(m.nrefs, 3);
	cr_expect_str_eq(m.refs[0], "r1@x");
	cr_expect_str_eq(m.refs[1], "r2@x");
	cr_expect_str_eq(m.refs[2], "r3@x");
	cr_expect_str_eq(m.from_name, "Last, First");
	cr_expect_str_eq(m.from_email, "lf@x");
	cr_expect_str_eq(m.x_kperf, "job=7");
	cr_expect_str_eq(m.body, "body\n");
	mail_msg_free(&m);

	/* headers only, no blank line; a bare address; comment form */
	parse1("Subject: only headers\nFrom: bare@x", &m);
	cr_expect_str_eq(m.body, "");
	cr_expect_str_eq(m.from_email, "bare@x");
	cr_expect_str_eq(m.from_name, "");
	mail_msg_free(&m);
	parse1("From: who@x (Some One)\n\n", &m);
	cr_expect_str_eq(m.from_email, "who@x");
	cr_expect_str_eq(m.from_name, "Some One");
	cr_expect_str_eq(m.subject, "");
	mail_msg_free(&m);
}

/* found by fuzz_mail: a bare Message-ID token with a '>' in it */
Test(mail, bare_msgid_tokens)
{
	struct mail_msg m;

	parse1("Message-ID: \x01lab+result/1@example.org>\n\n", &m);
	cr_expect_null(m.msgid);
	mail_msg_free(&m);
	parse1("Message-ID:  bare@x \nIn-Reply-To: <>\n\n", &m);
	cr_expect_str_eq(m.msgid, "bare@x");
	cr_expect_null(m.in_reply_to);
	mail_msg_free(&m);
}

Test(mail, reply_loops_are_parsed_as_they_are)
{
	struct mail_msg m;

	parse1("Message-ID: <self@x>\nIn-Reply-To: <self@x> <other@x>\n"
	       "References: <self@x> <self@x>\n\n", &m);
	cr_expect_str_eq(m.in_reply_to, "self@x");
	cr_assert_eq(m.nrefs, 2);
	cr_expect_str_eq(m.refs[1], "self@x");
	mail_msg_free(&m);
}

Test(mail, body_lines_diff_and_b4_trailers)
{
	struct mail_msg m;

	parse1("From abc Mon Sep 17 00:00:00 2001\r\nSubject: crlf\r\n\r\n"
	       ">>From two levels\r\n>From one\r\n> quoted\r\n"
	       "--- a/lib/x.c\t2024-01-01\n+++ b/lib/x.c\n@@ -1 +1 @@\n"
	       "--- a/gone.c\n+++ /dev/null\n"
	       "diff --git a/dir with space/f b/dir with space/f\n"
	       "diff --git a/old b/new\n"
	       "diff --git a/lib/x.c b/lib/x.c\n"
	       "prerequisite-patch-id: 0123456789abcdef0123456789abcdef01234567\n"
	       "prerequisite-patch-id: short\n"
	       "prerequisite-patch-id: 89abcdef0123456789abcdef0123456789abcdef\n"
	       "change-id: 20240101-mm-lru-abc123\n"
	       "base-commit: 3deccb86187f61247c8f8b59cd49885af68e903\n", &m);
	cr_expect_str_eq(m.subject, "crlf");
	cr_expect(strncmp(m.body, ">From two levels\nFrom one\n> quoted\n", 35) == 0, "%s", m.body);
	cr_expect_eq(m.has_diff, 1);
	cr_assert_eq(m.nfiles, 4);
	cr_expect_str_eq(m.files[0], "lib/x.c");
	cr_expect_str_eq(m.files[1], "gone.c");
	cr_expect_str_eq(m.files[2], "dir with space/f");
	cr_expect_str_eq(m.files[3], "old");
	cr_assert_eq(m.nprereq, 2);
	cr_expect_str_eq(m.prereq[1], "89abcdef0123456789abcdef0123456789abcdef");
	cr_expect_str_eq(m.change_id, "20240101-mm-lru-abc123");
	cr_expect_null(m.base_commit); /* 39 hex digits */
	cr_expect_str_eq(m.base_other, "3deccb86187f61247c8f8b59cd49885af68e903");
	mail_msg_free(&m);

	/* a quoted diff in a review is not a diff */
	parse1("Subject: Re: x\n\n> diff --git a/a b/a\n> --- a/a\n> +++ b/a\n", &m);
	cr_expect_eq(m.has_diff, 0);
	cr_expect_eq(m.nfiles, 0);
	mail_msg_free(&m);
}

Test(mail, nul_bytes_and_long_encoded_words)
{
	static const char text[] = "Subject: a\0b\n\nx\0y\nz\n";
	struct buf b = BUF_INIT;
	struct mail_msg m;
	char err[64];
	size_t i;

	cr_assert_eq(mail_parse_one(text, sizeof(text) - 1, &m, err, sizeof(err)), 0);
	cr_expect_str_eq(m.subject, "a?b");
	cr_expect_str_eq(m.body, "x?y\nz\n");
	mail_msg_free(&m);
	/* 8,000 unterminated encoded-word starts: copied as text, quickly */
	buf_puts(&b, "Subject: ");
	for (i = 0; i < 8000; i++)
		buf_puts(&b, "x=?a?q?");
	buf_puts(&b, "\n\n");
	cr_assert_eq(mail_parse_one(b.data, b.len, &m, err, sizeof(err)), -1);
	cr_expect_str_eq(err, "subject of 56000 bytes is over the limit of 1024");
	buf_release(&b);
}

Test(mail, empty_and_tiny_input)
{
	struct mail_msg *v, m;
	size_t n = 9, skipped = 9;
	char err[64];

	cr_expect_eq(mail_parse_mbox("", 0, &v, &n, &skipped, err, sizeof(err)), 0);
	cr_expect_eq(n, 0);
	cr_expect_null(v);
	cr_expect_eq(mail_parse_mbox("From ", 5, &v, &n, &skipped, err, sizeof(err)), 0);
	cr_expect_eq(n, 1);
	cr_expect_str_eq(v[0].body, "");
	mail_msgs_free(v, n);
	cr_expect_eq(mail_parse_one("\n", 1, &m, err, sizeof(err)), 0);
	cr_expect_null(m.msgid);
	mail_msg_free(&m);
}
