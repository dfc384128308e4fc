/*
 * robot_msg.c - the robot's reply text (see robot_msg.h).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "server/mail/alert_msg.h"
#include "server/mail/robot_msg.h"

static void crlf(const char *text, struct buf *out)
{
	for (const char *p = text; *p; p++) {
		if (*p == '\n')
			buf_putc(out, '\r');
		buf_putc(out, *p);
	}
}

static void params_lines(struct buf *b, const char *json)
{
	json_t *o = json ? json_loads(json, 0, NULL) : NULL;
	char *sorted = o ? json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
	json_t *s = sorted ? json_loads(sorted, 0, NULL) : NULL;
	const char *key;
	json_t *v;

	json_object_foreach(s, key, v)
		buf_printf(b, "\t%s: %s\n", key, json_string_value(v) ? json_string_value(v) : "");
	json_decref(s);
	free(sorted);
	json_decref(o);
}

void robot_subject(const struct robot_facts *f, struct buf *b)
{
	if (f->reply_subject) {
		buf_puts(b, strncmp(f->reply_subject, "Re: ", 4) ? "Re: " : "");
		buf_puts(b, f->reply_subject);
		return;
	}
	buf_printf(b, "[%s] ", f->branch ? f->branch : "kperf");
	if (f->area && *f->area)
		buf_printf(b, "[%s] ", f->area);
	buf_printf(b, " %.10s:  %s %s %s", f->sha ? f->sha : "?", f->metric ? f->metric : "",
		   f->change ? f->change : "", f->kind);
}

static void body_clean(const struct robot_facts *f, struct buf *b)
{
	buf_puts(b, "\n\n\nHello,\n\n");
	buf_printf(b, "kperf tested this series and noticed no performance change:\n\n\n");
	buf_printf(b, "commit: %s (\"%s\")\n", f->sha ? f->sha : "?",
		   f->commit_subject ? f->commit_subject : "");
	buf_printf(b, "base: %s\n", f->base ? f->base : "?");
	if (f->patch_url)
		buf_printf(b, "patch link: %s\n", f->patch_url);
	if (f->patch_subject)
		buf_printf(b, "patch subject: %s\n", f->patch_subject);
	buf_puts(b, "\n");
	if (f->tested)
		buf_printf(b, "%s\n", f->tested);
	if (f->lkp_table && *f->lkp_table)
		buf_printf(b, "\n%s", f->lkp_table);
}

static void body_change(const struct robot_facts *f, struct buf *b)
{
	buf_puts(b, "\n\n\nHello,\n\n");
	buf_printf(b, "kperf noticed a %s %s of %s on:\n\n\n", f->change ? f->change : "?",
		   f->kind, f->metric ? f->metric : "?");
	buf_printf(b, "commit: %s (\"%s\")\n", f->sha ? f->sha : "?",
		   f->commit_subject ? f->commit_subject : "");
	if (f->reply_subject) {
		buf_printf(b, "base: %s\n", f->base ? f->base : "?");
		buf_printf(b, "patch link: %s\n", f->patch_url ? f->patch_url : "?");
		buf_printf(b, "patch subject: %s\n", f->patch_subject ? f->patch_subject : "?");
	} else {
		buf_printf(b, "%s\n", f->branch ? f->branch : "");
	}
	buf_printf(b, "\ntestcase: %s\n", f->suite ? f->suite : "?");
	buf_printf(b, "test machine: %s\n", f->machine ? f->machine : "?");
	buf_puts(b, "parameters:\n\n");
	params_lines(b, f->params);
	if (f->ci)
		buf_printf(b, "\n%s %s: %s\n", f->metric, f->change, f->ci);
	buf_puts(b, "\n\n\n\nIf you fix the issue in a separate patch/commit (i.e. not just a new "
		    "version of\nthe same patch/commit), kindly add following tags\n");
	buf_printf(b, "| Reported-by: kperf <%s>\n", f->from);
	buf_printf(b, "| Closes: %s\n", f->report_url ? f->report_url : "?");
	if (f->regzbot && f->sha)
		buf_printf(b, "\n#regzbot introduced: %.12s\n", f->sha);
	buf_puts(b, "\n\nDetails are as below:\n");
	for (int i = 0; i < 97; i++)
		buf_putc(b, '-');
	buf_puts(b, ">\n\n");
	if (f->lkp_table && *f->lkp_table)
		buf_printf(b, "%s\n", f->lkp_table);
	if (f->bisection)
		buf_printf(b, "%s\n", f->bisection);
	if (f->reproduce)
		buf_printf(b, "%s\n", f->reproduce);
}

static void body_build(const struct robot_facts *f, struct buf *b)
{
	buf_puts(b, "\n\n\nHello,\n\n");
	buf_printf(b, "kperf built this series and patch %s does not build:\n\n",
		   f->position ? f->position : "?");
	buf_printf(b, "[auto build test ERROR on %.12s]\n\n", f->base ? f->base : "?");
	buf_printf(b, "commit: %s (\"%s\")\n", f->sha ? f->sha : "?",
		   f->commit_subject ? f->commit_subject : "");
	buf_printf(b, "base: %s\n", f->base ? f->base : "?");
	if (f->patch_url)
		buf_printf(b, "patch link: %s\n", f->patch_url);
	if (f->patch_subject)
		buf_printf(b, "patch subject: %s\n", f->patch_subject);
	buf_printf(b, "config: %s\n", f->config ? f->config : "?");
	buf_printf(b, "compiler: %s\n", f->compiler ? f->compiler : "?");
	buf_puts(b, "\nIf you fix the issue in a separate patch/commit (i.e. not just a new "
		    "version of\nthe same patch/commit), kindly add following tags\n");
	buf_printf(b, "| Reported-by: kperf <%s>\n", f->from);
	buf_printf(b, "| Closes: %s\n", f->report_url ? f->report_url : "?");
	buf_printf(b, "\n%s\n", f->build_error ? f->build_error : "");
	buf_puts(b, "\nAll errors (new ones prefixed by >>):\n\n");
	for (const char *p = f->build_lines ? f->build_lines : ""; *p;) {
		size_t n = strcspn(p, "\n");
		if (n)
			buf_printf(b, "%s%.*s\n", strstr(p, ": error: ") &&
						  (size_t)(strstr(p, ": error: ") - p) < n
					      ? ">> "
					      : "   ",
				   (int)n, p);
		p += n + (p[n] == '\n');
	}
	buf_puts(b, "\nThe series is not measured: a kernel that does not build has no "
		    "performance.\n");
}

void robot_message(const struct robot_facts *f, struct buf *out)
{
	struct buf subj = BUF_INIT, body = BUF_INIT;

	robot_subject(f, &subj);
	if (!strcmp(f->kind, "clean"))
		body_clean(f, &body);
	else if (!strcmp(f->kind, "build"))
		body_build(f, &body);
	else
		body_change(f, &body);
	buf_printf(&body, "\n-- \nkperf, kernel performance tracking\n%s\n",
		   f->report_url ? f->report_url : "");
	buf_printf(out, "From: kperf <%s>\r\nTo: %s\r\n", f->from, f->to);
	if (f->cc && *f->cc)
		buf_printf(out, "Cc: %s\r\n", f->cc);
	buf_puts(out, "Subject: ");
	alert_header_text(out, buf_str(&subj));
	buf_printf(out, "\r\nDate: %s\r\nMessage-ID: %s\r\n", f->date, f->message_id);
	if (f->in_reply_to)
		buf_printf(out, "In-Reply-To: %s\r\n", f->in_reply_to);
	if (f->references)
		buf_printf(out, "References: %s\r\n", f->references);
	buf_printf(out, "X-Kperf-Report: %s\r\n", f->kind);
	if (f->sha)
		buf_printf(out, "X-Kperf-Commit: %s\r\n", f->sha);
	buf_puts(out, "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n"
		      "Content-Transfer-Encoding: 8bit\r\n\r\n");
	crlf(buf_str(&body), out);
	buf_release(&subj);
	buf_release(&body);
}
