/*
 * fuzz_mail.c - libFuzzer harness for the mail readers of lib/: the same
 * input as an mbox (mail_parse_mbox, mail_parse_one), as an Atom feed
 * (atom_parse), as a gzip stream (mail_gunzip, capped at 1 MiB) and as a
 * subject (patch_subject_parse, also on every parsed subject and title).
 * Checks what the headers promise: limits held, strings valid UTF-8.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/atom.h"
#include "lib/kperf_limits.h"
#include "lib/mail.h"
#include "lib/patch_subject.h"
#include "lib/util.h"
#include "tests/fuzz/fuzz.h"

/* Valid UTF-8 with no control byte but tab (and LF where allowed). */
static int clean_utf8(const char *s, int lf_ok)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n, i;
		if (*p < 0x80) {
			if ((*p < 0x20 && *p != '\t' && !(lf_ok && *p == '\n')) || *p == 0x7f)
				return 0;
			p++;
			continue;
		}
		n = *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc2 ? 2 : 0;
		if (n == 0 || *p > 0xf4)
			return 0;
		for (i = 1; i < n; i++)
			if ((p[i] & 0xc0) != 0x80)
				return 0;
		p += n;
	}
	return 1;
}

static void check_subject(const char *s)
{
	struct patch_subject ps;

	FUZZ_CHECK(patch_subject_parse(s, &ps) == 0, "parse failed");
	FUZZ_CHECK(strlen(ps.stem) <= LIMIT_MAIL_SUBJECT, "stem of %zu", strlen(ps.stem));
	FUZZ_CHECK(strlen(ps.tags) < sizeof(ps.tags), "tags");
	FUZZ_CHECK(ps.version >= 1 && ps.version <= 999, "version %d", ps.version);
	FUZZ_CHECK(!ps.bad || !ps.is_patch, "bad but a patch");
	/* M may pass K ("[PATCH 3/2]"), both within the limit */
	FUZZ_CHECK(ps.pos >= 0 && ps.pos <= LIMIT_SERIES_PATCHES && ps.total >= 0 &&
		       ps.total <= LIMIT_SERIES_PATCHES && (ps.pos == 0 || ps.total > 0),
		   "counter %d/%d", ps.pos, ps.total);
	FUZZ_CHECK(ps.version_given == (ps.is_patch && ps.version_given) || ps.bad,
		   "a version given outside a patch tag");
	FUZZ_CHECK(ps.is_patch || (ps.pos == 0 && ps.total == 0), "counter without a patch");
}

static void check_msg(const struct mail_msg *m)
{
	size_t i;

	FUZZ_CHECK(m->subject && m->from_name && m->from_email && m->body, "NULL member");
	FUZZ_CHECK(strlen(m->subject) <= LIMIT_MAIL_SUBJECT, "subject of %zu", strlen(m->subject));
	FUZZ_CHECK(clean_utf8(m->subject, 0), "subject \"%s\"", m->subject);
	FUZZ_CHECK(clean_utf8(m->from_name, 0), "from_name");
	FUZZ_CHECK(!m->msgid || (*m->msgid && !strchr(m->msgid, '>') && !strchr(m->msgid, '<')),
		   "msgid \"%s\"", m->msgid);
	FUZZ_CHECK(!m->base_commit || strlen(m->base_commit) == 40, "base-commit");
	FUZZ_CHECK(m->nfiles <= LIMIT_FILES && (m->nfiles == 0 || m->has_diff), "files");
	for (i = 0; i < m->nrefs; i++)
		FUZZ_CHECK(m->refs[i] && *m->refs[i], "empty ref %zu", i);
	for (i = 0; i + 1 < m->nfiles; i++)
		FUZZ_CHECK(strcmp(m->files[i], m->files[i + 1]) != 0, "duplicate file");
	check_subject(m->subject);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct mail_msg *v, one;
	struct atom_entry *e;
	size_t n, skipped, i, outlen;
	char err[256], *text, *out;

	if (mail_parse_mbox(buf, size, &v, &n, &skipped, err, sizeof(err)) == 0) {
		FUZZ_CHECK(n + skipped <= LIMIT_THREAD_MSGS, "%zu messages", n + skipped);
		FUZZ_CHECK((n == 0) == (v == NULL), "array of %zu", n);
		for (i = 0; i < n; i++)
			check_msg(&v[i]);
		mail_msgs_free(v, n);
	} else {
		FUZZ_CHECK(v == NULL && n == 0 && *err, "failure without a reason");
	}
	if (mail_parse_one(buf, size, &one, err, sizeof(err)) == 0) {
		check_msg(&one);
		mail_msg_free(&one);
	} else {
		FUZZ_CHECK(one.subject == NULL && *err, "failure left members");
	}

	if (atom_parse(buf, size, &e, &n, err, sizeof(err)) == 0) {
		FUZZ_CHECK(n <= LIMIT_ATOM_ENTRIES, "%zu entries", n);
		for (i = 0; i < n; i++) {
			FUZZ_CHECK(e[i].title && e[i].link && e[i].updated && e[i].author_name &&
					   e[i].author_email, "NULL member");
			FUZZ_CHECK(clean_utf8(e[i].title, 0), "title");
			FUZZ_CHECK(!e[i].msgid || *e[i].msgid, "empty msgid");
			check_subject(e[i].title);
		}
		atom_entries_free(e, n);
	} else {
		FUZZ_CHECK(e == NULL && n == 0 && *err, "failure without a reason");
	}

	if (mail_gunzip(data, size, 1u << 20, &out, &outlen, err, sizeof(err)) == 0) {
		FUZZ_CHECK(outlen <= (1u << 20) && out[outlen] == '\0', "gunzip of %zu", outlen);
		free(out);
	} else {
		FUZZ_CHECK(out == NULL && *err, "gunzip failure");
	}

	text = xstrndup(buf, size);
	check_subject(text);
	free(text);
	return 0;
}
