/*
 * test_atom.c - lib/atom.c on the feeds a real public-inbox served
 * (tests/fixtures/mail/: new.atom, a s:PATCH search, the 404 page of an
 * empty search) and on what must be refused: HTML, RSS, broken XML, DTDs
 * with entities, a feed outside the Atom namespace, too many entries.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/atom.h"
#include "lib/buf.h"
#include "lib/kperf_limits.h"
#include "lib/patch_subject.h"

#define COVER "cover.1796190058.git.dev@example.org"
#define INBOX "http://127.0.0.1:36531/linux-mm/"

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

/* Expects text to be refused with err starting with want. */
static void refused(const char *text, size_t len, const char *want)
{
	struct atom_entry *v = (struct atom_entry *)1;
	size_t n = 7;
	char err[256] = "";

	cr_expect_eq(atom_parse(text, len, &v, &n, err, sizeof(err)), -1, "accepted: %.60s", text);
	cr_expect(strncmp(err, want, strlen(want)) == 0, "err \"%s\", want \"%s\"", err, want);
	cr_expect_null(v);
	cr_expect_eq(n, 0);
}

Test(atom, new_atom_from_public_inbox)
{
	size_t len, n;
	char *text = fixture("new.atom", &len), err[256] = "";
	struct atom_entry *v;

	cr_assert_eq(atom_parse(text, len, &v, &n, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(n, 5);
	/* newest first: the reply, then 3/3 .. 0/3 */
	cr_expect_str_eq(v[0].title, "Re: [PATCH v2 0/3] mm: per-memcg lru_lock <&> results");
	cr_expect_str_eq(v[0].link, INBOX "lab+result%2F1@example.org/");
	cr_expect_str_eq(v[0].msgid, "lab+result/1@example.org");
	cr_expect_str_eq(v[0].author_name, "J\xc3\xb6rg R\xc3\xbc" "ckert");
	cr_expect_str_eq(v[0].author_email, "jr@example.org");
	cr_expect_str_eq(v[0].updated, "2026-12-02T05:41:03Z");
	cr_expect_eq(v[0].is_reply, 1);

	cr_expect_str_eq(v[1].title, "[PATCH v2 3/3] mm: remove pgdat->lru_lock");
	cr_expect_str_eq(v[1].msgid,
			 "1dbf86ac99b21787d5a3107cf31f4b5a3a052a6f.1796190058.git.dev@example.org");
	cr_expect_eq(v[1].is_reply, 1);
	cr_expect_str_eq(v[1].parent_msgid, COVER); /* thr:in-reply-to's href */
	cr_expect_str_eq(v[2].title,
			 "[PATCH v2 2/3] mm/vmscan: use lruvec->lru_lock in shrink_lruvec");
	cr_expect_str_eq(v[3].title, "[PATCH v2 1/3] mm: add lru_lock to struct lruvec");
	cr_expect_str_eq(v[3].updated, "2026-12-02T05:41:00Z");

	cr_expect_str_eq(v[4].title, "[PATCH v2 0/3] mm: per-memcg lru_lock");
	cr_expect_str_eq(v[4].link, INBOX COVER "/");
	cr_expect_str_eq(v[4].msgid, COVER);
	cr_expect_str_eq(v[4].author_name, "Lab Dev");
	cr_expect_str_eq(v[4].author_email, "dev@example.org");
	cr_expect_str_eq(v[4].updated, "2026-12-02T05:40:58Z");
	cr_expect_eq(v[4].is_reply, 0);
	cr_expect_null(v[4].parent_msgid);
	atom_entries_free(v, n);
	atom_entries_free(NULL, 3);
	free(text);
}

Test(atom, search_atom_from_public_inbox)
{
	size_t len, n, i, covers = 0;
	char *text = fixture("search.atom", &len), err[256] = "";
	struct atom_entry *v;

	cr_assert_eq(atom_parse(text, len, &v, &n, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(n, 5); /* s:PATCH matches the 4 patches and the Re: */
	for (i = 0; i < n; i++) {
		cr_expect_not_null(v[i].msgid);
		cr_expect(strncmp(v[i].link, INBOX, strlen(INBOX)) == 0, "%s", v[i].link);
		if (strcmp(v[i].msgid, COVER) == 0) {
			covers++;
			cr_expect_eq(v[i].is_reply, 0);
		} else {
			cr_expect_eq(v[i].is_reply, 1, "%s", v[i].msgid);
		}
	}
	cr_expect_eq(covers, 1);
	atom_entries_free(v, n);
	free(text);
}

Test(atom, html_404_of_an_empty_search)
{
	size_t len;
	char *text = fixture("search-none.html", &len);

	refused(text, len, "not an Atom feed: root element is html");
	free(text);
	refused("", 0, "not an Atom feed: root element is missing");
	/* a web server's error page: its DOCTYPE names html, it is no DTD of a feed */
	refused("<!DOCTYPE html>\n<html><body>Maintenance</body></html>", 53,
		"not an Atom feed: root element is html");
	refused("<!doctype HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\"><html/>", 57,
		"not an Atom feed: root element is html");
	refused("<!DOCTYPE htmlfeed [<!ENTITY a \"b\">]><feed/>", 44,
		"not an Atom feed: it has a DTD");
	refused("plain text", 10, "not an Atom feed: root element is missing");
	refused("<?xml version=\"1.0\"?>\n<!-- c -->\n<rss version=\"2.0\"><channel/></rss>", 62,
		"not an Atom feed: root element is rss");
}

Test(atom, malformed_xml_names_the_line)
{
	size_t len;
	char *text = fixture("new.atom", &len);
	const char *cut = "<?xml version=\"1.0\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">\n"
			  "<entry><title>a</title>\n<link href=\"x/y/\">\n</entry></feed>";

	refused(text, len / 2, "malformed XML at line ");
	free(text);
	/* the first error, where </entry> closes the unclosed <link> */
	refused(cut, strlen(cut),
		"malformed XML at line 5: Opening and ending tag mismatch: link line 4 and entry");
}

Test(atom, dtd_and_entities_are_refused)
{
	const char *laughs =
		"<?xml version=\"1.0\"?>\n<!DOCTYPE feed [<!ENTITY a \"aaaaaaaaaa\">"
		"<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\"><!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;\">]>\n"
		"<feed xmlns=\"http://www.w3.org/2005/Atom\"><entry><title>&c;</title></entry></feed>";
	const char *external =
		"<!DOCTYPE feed SYSTEM \"file:///etc/passwd\">"
		"<feed xmlns=\"http://www.w3.org/2005/Atom\"><entry><title>x</title></entry></feed>";

	refused(laughs, strlen(laughs), "not an Atom feed: it has a DTD");
	refused(external, strlen(external), "not an Atom feed: it has a DTD");
}

Test(atom, namespace_and_empty_feed)
{
	const char *nons = "<feed><entry><title>x</title></entry></feed>";
	const char *empty = "\xef\xbb\xbf<feed xmlns=\"http://www.w3.org/2005/Atom\"/>";
	const char *odd = "<a:feed xmlns:a=\"http://www.w3.org/2005/Atom\"><a:entry>"
			  "<a:title type=\"html\">a &amp;lt; b</a:title><a:link rel=\"self\" href=\"s\"/>"
			  "<a:link href=\"http://h/\"/></a:entry><a:entry/></a:feed>";
	struct atom_entry *v;
	size_t n;
	char err[256];

	refused(nons, strlen(nons), "not an Atom feed: root element is feed outside");
	cr_assert_eq(atom_parse(empty, strlen(empty), &v, &n, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(n, 0);
	cr_expect_null(v);
	/* a prefixed root is sniffed as "a:feed": refused before parsing */
	refused(odd, strlen(odd), "not an Atom feed: root element is a:feed");
}

Test(atom, links_without_msgid_and_missing_fields)
{
	const char *t = "<feed xmlns=\"http://www.w3.org/2005/Atom\"><entry>"
			"<title type=\"html\">a &amp;lt; b</title><link rel=\"self\" href=\"s\"/>"
			"<link href=\"http://h/\"/></entry><entry/>"
			"<entry><link href=\"http://h/i/a%40b%2Fc%zz%4/\"/></entry></feed>";
	struct atom_entry *v;
	size_t n;
	char err[256];

	cr_assert_eq(atom_parse(t, strlen(t), &v, &n, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(n, 3);
	/* public-inbox escapes a title once: its text is the subject */
	cr_expect_str_eq(v[0].title, "a &lt; b");
	cr_expect_str_eq(v[0].link, "http://h/");
	cr_expect_null(v[0].msgid);
	cr_expect_str_eq(v[1].title, "");
	cr_expect_str_eq(v[1].link, "");
	cr_expect_str_eq(v[1].updated, "");
	cr_expect_str_eq(v[1].author_name, "");
	cr_expect_null(v[1].msgid);
	cr_expect_str_eq(v[2].msgid, "a@b/c%zz%4");
	atom_entries_free(v, n);
}

Test(atom, entry_limit)
{
	struct buf b = BUF_INIT;
	struct atom_entry *v;
	size_t n, i;
	char err[256];

	buf_puts(&b, "<feed xmlns=\"http://www.w3.org/2005/Atom\">");
	for (i = 0; i < LIMIT_ATOM_ENTRIES; i++)
		buf_printf(&b, "<entry><title>t%zu</title><link href=\"http://h/i/m%zu@x/\"/></entry>",
			   i, i);
	buf_puts(&b, "</feed>");
	cr_assert_eq(atom_parse(b.data, b.len, &v, &n, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(n, LIMIT_ATOM_ENTRIES);
	cr_expect_str_eq(v[n - 1].msgid, "m999@x");
	atom_entries_free(v, n);
	b.len -= strlen("</feed>");
	buf_puts(&b, "<entry/></feed>");
	refused(b.data, b.len, "feed has over 1000 entries");
	buf_release(&b);
}

/* What the poller does with a feed: the series heads by public-inbox.md's
 * rule (a 0/N, a 1/N that replies to nothing, a lone [PATCH]). */
Test(atom, series_head_from_the_feed_titles)
{
	size_t len, n, i, heads = 0;
	char *text = fixture("new.atom", &len), err[256];
	struct atom_entry *v;

	cr_assert_eq(atom_parse(text, len, &v, &n, err, sizeof(err)), 0, "%s", err);
	for (i = 0; i < n; i++) {
		struct patch_subject ps;
		cr_assert_eq(patch_subject_parse(v[i].title, &ps), 0);
		if (!ps.is_patch || ps.is_reply)
			continue;
		if (ps.pos == 0 || (ps.pos == 1 && !v[i].is_reply)) {
			heads++;
			cr_expect_str_eq(v[i].msgid, COVER);
			cr_expect_eq(ps.version, 2);
			cr_expect_eq(ps.total, 3);
			cr_expect_str_eq(ps.stem, "mm: per-memcg lru_lock");
		}
	}
	cr_expect_eq(heads, 1);
	atom_entries_free(v, n);
	free(text);
}
