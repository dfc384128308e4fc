/*
 * atom.c - Atom feeds into struct atom_entry with libxml2's tree API. The
 * root element is sniffed before parsing so that an HTML page (public-inbox
 * answers an empty search with one) is named as such; a DTD is refused so
 * that no entity can be defined, let alone expanded.
 */
#include "lib/atom.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "lib/kperf_limits.h"
#include "lib/mail_hdr.h"
#include "lib/util.h"

#define ATOM_NS "http://www.w3.org/2005/Atom"
#define THR_NS "http://purl.org/syndication/thread/1.0"

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/*
 * The name of the first element, skipping a BOM, the XML declaration,
 * processing instructions, comments and a DOCTYPE; "" when there is none.
 */
static void root_name(const char *s, size_t n, char *name, size_t cap, int *doctype)
{
	size_t i = 0, k = 0;

	name[0] = '\0';
	*doctype = 0;
	if (n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < n) {
		const char *close;
		if (isspace((unsigned char)s[i])) {
			i++;
			continue;
		}
		if (s[i] != '<' || i + 1 >= n)
			return;
		if (s[i + 1] == '?' || s[i + 1] == '!') {
			const char *endmark = s[i + 1] == '!' && i + 3 < n && s[i + 2] == '-' &&
						      s[i + 3] == '-' ? "-->" : ">";
			if (s[i + 1] == '!' && *endmark == '>') {
				/* an HTML page's <!DOCTYPE html> names its root: say so */
				size_t j = i + 2, left;
				if (n - j >= 7 && strncasecmp(s + j, "doctype", 7) == 0)
					for (j += 7; j < n && isspace((unsigned char)s[j]); j++)
						;
				left = n - j;
				if (j > i + 9 && left >= 4 && strncasecmp(s + j, "html", 4) == 0 &&
				    (left == 4 || !isalnum((unsigned char)s[j + 4]))) {
					snprintf(name, cap, "html");
					return;
				}
				*doctype = 1; /* refused whole: its [...] may hold '>' */
				return;
			}
			close = memmem(s + i + 2, n - i - 2, endmark, strlen(endmark));
			if (!close)
				return;
			i = (size_t)(close - s) + strlen(endmark);
			continue;
		}
		for (i++; i < n && k + 1 < cap && (isalnum((unsigned char)s[i]) ||
						   strchr(":_-.", s[i])); i++)
			name[k++] = (char)tolower((unsigned char)s[i]);
		name[k] = '\0';
		return;
	}
}

static int is_el(const xmlNode *node, const char *ns, const char *name)
{
	return node->type == XML_ELEMENT_NODE && node->ns && node->ns->href &&
	       strcmp((const char *)node->ns->href, ns) == 0 &&
	       strcmp((const char *)node->name, name) == 0;
}

static const xmlNode *child(const xmlNode *parent, const char *ns, const char *name)
{
	const xmlNode *c;

	for (c = parent->children; c; c = c->next)
		if (is_el(c, ns, name))
			return c;
	return NULL;
}

/* A malloc'd copy of s, control bytes made '?' ("" for NULL). */
static char *clean_dup(const char *s)
{
	char *r = xstrdup(s ? s : "");
	size_t i;

	mail_hdr_utf8_clean(r, strlen(r));
	for (i = 0; r[i]; i++)
		if (r[i] == '\n' || r[i] == '\t')
			r[i] = ' ';
	return r;
}

/* The text content of parent's child element name, "" when it is absent. */
static char *child_text(const xmlNode *parent, const char *name)
{
	const xmlNode *c = parent ? child(parent, ATOM_NS, name) : NULL;
	xmlChar *t;
	char *r;

	if (!c)
		return xstrdup("");
	t = xmlNodeGetContent(c);
	r = clean_dup((const char *)t);
	xmlFree(t);
	return r;
}

/* ".../<msgid>/" -> msgid, percent-decoded; NULL when there is none. */
static char *link_msgid(const char *href)
{
	size_t n = strlen(href), start, i, j = 0;
	char *r;

	if (n && href[n - 1] == '/')
		n--;
	start = n;
	while (start > 0 && href[start - 1] != '/')
		start--;
	if (start == n || start == 0 || (start >= 2 && href[start - 2] == '/'))
		return NULL; /* no segment, or only "scheme://host" before it */
	r = xmalloc(n - start + 1);
	for (i = start; i < n; i++) {
		int h, l;
		if (href[i] == '%' && i + 2 < n && (h = hex_digit((unsigned char)href[i + 1])) >= 0 &&
		    (l = hex_digit((unsigned char)href[i + 2])) >= 0) {
			r[j++] = (char)(h * 16 + l);
			i += 2;
		} else {
			r[j++] = href[i];
		}
	}
	r[j] = '\0';
	if (j == 0 || memchr(r, '\0', j) != NULL) {
		free(r);
		return NULL;
	}
	mail_hdr_utf8_clean(r, j);
	return r;
}

static void entry_fill(struct atom_entry *e, const xmlNode *node)
{
	const xmlNode *c, *author = child(node, ATOM_NS, "author");

	e->title = child_text(node, "title");
	e->updated = child_text(node, "updated");
	e->author_name = child_text(author, "name");
	e->author_email = child_text(author, "email");
	for (c = node->children; c; c = c->next) {
		xmlChar *rel, *href;
		if (!is_el(c, ATOM_NS, "link"))
			continue;
		rel = xmlGetProp(c, (const xmlChar *)"rel");
		href = xmlGetProp(c, (const xmlChar *)"href");
		if ((!rel || strcmp((const char *)rel, "alternate") == 0) && href && !e->link)
			e->link = clean_dup((const char *)href);
		xmlFree(rel);
		xmlFree(href);
	}
	if (!e->link)
		e->link = xstrdup("");
	e->msgid = link_msgid(e->link);
	c = child(node, THR_NS, "in-reply-to");
	e->is_reply = c != NULL;
	if (c) {
		xmlChar *href = xmlGetProp(c, (const xmlChar *)"href");
		if (href) {
			char *clean = clean_dup((const char *)href);
			e->parent_msgid = link_msgid(clean);
			free(clean);
		}
		xmlFree(href);
	}
}

/* The parser's first error, kept: later ones follow from it ("premature
 * end of data" after a tag mismatch) and say less. */
struct first_error {
	int set;
	int line;
	char msg[96];
};

static void keep_first_error(void *ctx, xmlError *e)
{
	xmlParserCtxt *ctxt = ctx;
	struct first_error *fe = ctxt ? ctxt->_private : NULL;
	size_t k;

	if (!fe || fe->set || !e || e->level < XML_ERR_ERROR)
		return;
	fe->set = 1;
	fe->line = e->line;
	snprintf(fe->msg, sizeof(fe->msg), "%s", e->message ? e->message : "");
	k = strlen(fe->msg);
	while (k && (fe->msg[k - 1] == '\n' || fe->msg[k - 1] == ' '))
		fe->msg[--k] = '\0';
}

static int read_doc(const char *buf, size_t len, xmlDoc **docp, char *err, size_t errlen)
{
	struct first_error fe = {0, 0, ""};
	xmlParserCtxt *ctxt;
	xmlDoc *doc;

	xmlInitParser();
	ctxt = xmlNewParserCtxt();
	if (!ctxt) {
		set_err(err, errlen, "xml parser context: out of memory");
		return -1;
	}
	ctxt->_private = &fe;
	ctxt->sax->serror = keep_first_error;
	/* no network, no entity substitution, no DTD loading; errors not printed */
	doc = xmlCtxtReadMemory(ctxt, buf, (int)len, NULL, NULL,
				XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (!doc || !ctxt->wellFormed) {
		if (!fe.set) {
			const xmlError *e = xmlCtxtGetLastError(ctxt);
			keep_first_error(ctxt, (xmlError *)e);
		}
		set_err(err, errlen, "malformed XML at line %d: %s", fe.line, fe.msg);
		xmlFreeDoc(doc);
		xmlFreeParserCtxt(ctxt);
		return -1;
	}
	xmlFreeParserCtxt(ctxt);
	*docp = doc;
	return 0;
}

int atom_parse(const char *buf, size_t len, struct atom_entry **out, size_t *n, char *err,
	       size_t errlen)
{
	char name[32];
	xmlDoc *doc = NULL;
	const xmlNode *root, *c;
	struct atom_entry *v = NULL;
	size_t count = 0, i = 0;
	int doctype;

	*out = NULL;
	*n = 0;
	if (len > LIMIT_ATOM_BYTES || len > INT_MAX) {
		set_err(err, errlen, "feed of %zu bytes is over the limit of %u", len,
			LIMIT_ATOM_BYTES);
		return -1;
	}
	root_name(buf, len, name, sizeof(name), &doctype);
	if (doctype) {
		set_err(err, errlen, "not an Atom feed: it has a DTD");
		return -1;
	}
	if (strcmp(name, "feed") != 0) {
		set_err(err, errlen, "not an Atom feed: root element is %s",
			*name ? name : "missing");
		return -1;
	}
	if (read_doc(buf, len, &doc, err, errlen) < 0)
		return -1;
	root = xmlDocGetRootElement(doc);
	if (doc->intSubset || doc->extSubset) {
		set_err(err, errlen, "not an Atom feed: it has a DTD");
		goto fail;
	}
	if (!root || !is_el(root, ATOM_NS, "feed")) {
		set_err(err, errlen, "not an Atom feed: root element is %s%s",
			root ? (const char *)root->name : "missing",
			root && is_el(root, ATOM_NS, (const char *)root->name) ? "" :
										 " outside the Atom namespace");
		goto fail;
	}
	for (c = root->children; c; c = c->next) {
		if (is_el(c, ATOM_NS, "entry") && ++count > LIMIT_ATOM_ENTRIES) {
			set_err(err, errlen, "feed has over %d entries", LIMIT_ATOM_ENTRIES);
			goto fail;
		}
	}
	if (count)
		v = xcalloc(count, sizeof(*v));
	for (c = root->children; c; c = c->next)
		if (is_el(c, ATOM_NS, "entry"))
			entry_fill(&v[i++], c);
	xmlFreeDoc(doc);
	*out = v;
	*n = count;
	return 0;
fail:
	xmlFreeDoc(doc);
	return -1;
}

void atom_entries_free(struct atom_entry *v, size_t n)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < n; i++) {
		free(v[i].title);
		free(v[i].link);
		free(v[i].msgid);
		free(v[i].updated);
		free(v[i].author_name);
		free(v[i].author_email);
		free(v[i].parent_msgid);
	}
	free(v);
}
