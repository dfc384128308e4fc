/*
 * atom.h - public-inbox's Atom feeds (new.atom, ?q=...&x=A, /M/t.atom) as
 * entries: title, link, the Message-ID in the link, arrival time, author,
 * and whether the message replies to another. The series poller reads
 * these; libxml2 parses, with no network, no DTD and no entity expansion.
 */
#ifndef KPERF_ATOM_H
#define KPERF_ATOM_H

#include <stddef.h>

struct atom_entry {
	char *title;  /* text; a type="html" title as its characters ("a &lt; b" gives "a < b") */
	char *link;   /* href of the entry's (alternate) link, "" if none */
	char *msgid;  /* the Message-ID taken from the link: the last path segment before the
		       * final '/', percent-decoded; NULL when the link has no such segment */
	char *updated; /* as given, e.g. 2026-12-01T20:53:40Z; "" if none */
	char *author_name, *author_email; /* "" if none */
	int is_reply; /* has thr:in-reply-to */
	char *parent_msgid; /* the Message-ID of thr:in-reply-to's href (as msgid); NULL if none */
};

/*
 * Parses an Atom <feed> of buf[0..len) into *out, a malloc'd array of *n
 * entries in document order (NULL when n is 0; free with
 * atom_entries_free). Returns -1 with *out NULL and err set for anything
 * that is not an Atom feed ("not an Atom feed: root element is html", which
 * is what public-inbox's 404 page for a search with no hits gives; the root
 * must be an unprefixed <feed> in the Atom namespace, as public-inbox and
 * most feeds write it),
 * malformed XML ("malformed XML at line N: ..."), a document with a DTD
 * (entities are never expanded), input over LIMIT_ATOM_BYTES, or more than
 * LIMIT_ATOM_ENTRIES entries. Strings are UTF-8 with control bytes made '?'.
 * Initialises libxml2 on first use (xmlInitParser); a threaded caller calls
 * atom_parse once before starting threads or calls xmlInitParser itself.
 */
int atom_parse(const char *buf, size_t len, struct atom_entry **out, size_t *n, char *err,
	       size_t errlen);
/* Frees n entries and the array; NULL is fine. */
void atom_entries_free(struct atom_entry *v, size_t n);

#endif
