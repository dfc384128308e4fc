/*
 * alert_msg.c - composing alert mail. The body is built with LF line ends
 * and converted to CRLF for SMTP at the end; prose is kept under 80 columns,
 * the LKP table is copied as LKP prints it.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/mail/alert_msg.h"
#include "lib/util.h"

/* Prose lines stay under 80 columns; the LKP table keeps LKP's width. */
#define ALERT_COLUMNS 78
#define NOWRAP_ON '\x01'
#define NOWRAP_OFF '\x02'

void alert_change(const struct alert_item *it, char *buf, size_t cap)
{
	if (it->absolute || !isfinite(it->change_pct))
		snprintf(buf, cap, "%+.1f", it->change_abs);
	else
		snprintf(buf, cap, "%+.1f%%", it->change_pct);
}

void alert_subject(const struct alert_facts *f, struct buf *out)
{
	char change[32];

	if (f->digest) {
		size_t reg = 0;
		for (size_t i = 0; i < f->nitems; i++)
			reg += !strcmp(f->items[i].verdict, "regression");
		buf_printf(out, "[kperf] daily digest: %zu change%s, %zu regression%s", f->nitems,
			   f->nitems == 1 ? "" : "s", reg, reg == 1 ? "" : "s");
		return;
	}
	buf_puts(out, "[kperf] ");
	if (f->series)
		buf_printf(out, "[%s] ", f->series);
	buf_printf(out, "%.12s", f->sha ? f->sha : "?");
	if (f->subject)
		buf_printf(out, " %s", f->subject);
	if (f->nitems) {
		const struct alert_item *h = &f->items[0];
		alert_change(h, change, sizeof(change));
		if (h->previous_verdict && strcmp(h->previous_verdict, h->verdict))
			buf_printf(out, ": %s now %s (was %s)", h->metric, h->verdict,
				   h->previous_verdict);
		else if (h->recovered_by)
			buf_printf(out, ": %s %s recovered", h->metric, h->verdict);
		else
			buf_printf(out, ": %s %s %s", h->metric, change, h->verdict);
	}
}

/* "k: v" lines of a JSON object of strings, tab-indented like LKP's. */
static void params_lines(struct buf *b, const char *json)
{
	json_t *o = json ? json_loads(json, 0, NULL) : NULL;
	char *sorted = o ? json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
	json_t *s = sorted ? json_loads(sorted, 0, NULL) : NULL;
	const char *key;
	json_t *v;

	json_object_foreach(s, key, v)
		buf_printf(b, "\t%s: %s\n", key, json_string_value(v));
	json_decref(s);
	free(sorted);
	json_decref(o);
}

/* A change mailed without the runs its confirmation asked for. */
static int unconfirmed(const struct alert_item *it)
{
	return it->confirmation &&
	       (!strcmp(it->confirmation, "unconfirmed") || !strcmp(it->confirmation, "waiting"));
}

static void item_line(struct buf *b, const struct alert_item *it)
{
	char change[32];

	alert_change(it, change, sizeof(change));
	buf_printf(b, "  %s %s %s%s\n", it->metric, change, it->verdict,
		   unconfirmed(it) ? " (unconfirmed)" : "");
	buf_printf(b, "    on %s, %s", it->machine, it->suite);
	{
		json_t *o = it->params ? json_loads(it->params, 0, NULL) : NULL;
		const char *key;
		json_t *v;
		json_object_foreach(o, key, v)
			buf_printf(b, " %s=%s", key, json_string_value(v));
		json_decref(o);
		o = it->variant ? json_loads(it->variant, 0, NULL) : NULL;
		json_object_foreach(o, key, v)
			buf_printf(b, " %s=%s", key, json_string_value(v));
		json_decref(o);
	}
	buf_putc(b, '\n');
	if (isfinite(it->ci_lo_pct))
		buf_printf(b, "    95%% CI of the change: [%.2f%%, %.2f%%]\n", it->ci_lo_pct,
			   it->ci_hi_pct);
}

/* What happened to the runs a confirmation asked for. */
static void unconfirmed_text(struct buf *b, const struct alert_item *h)
{
	const char *why = h->unconfirmed ? h->unconfirmed : "timeout";

	buf_printf(b, "\nThis change is unconfirmed: it rests on %ld run%s of the base and %ld of"
		      " the commit. ",
		   h->base_runs, h->base_runs == 1 ? "" : "s", h->target_runs);
	if (!strcmp(why, "no_agent"))
		buf_printf(b, "No agent on %s offers this test, so kperf could not ask for more"
			      " runs.\n",
			   h->machine);
	else if (!strcmp(why, "failed"))
		buf_printf(b, "kperf asked %s's agent for more runs; the job failed: %s\n", h->machine,
			   h->unconfirmed_why ? h->unconfirmed_why : "(no reason given)");
	else if (!strcmp(why, "no_job"))
		buf_puts(b, "kperf queued no job for more runs of it.\n");
	else
		buf_printf(b, "kperf asked %s's agent for more runs of both commits; they did not"
			      " come within the confirmation timeout.\n",
			   h->machine);
}

/* The kperf-collect command that made the headline's runs: its options as
 * the run recorded them ("collector"), the test, the commit, the command. */
static void reproduce_text(struct buf *b, const struct alert_facts *f,
			   const struct alert_item *h)
{
	json_t *how = f->collector ? json_loads(f->collector, 0, NULL) : NULL;
	json_t *o, *v, *variant = json_object_get(how, "variant");
	const char *key;

	buf_puts(b, "\nTo reproduce:\n\n");
	buf_printf(b, "\tkperf-collect run --suite %s", h->suite);
	if (json_string_value(json_object_get(how, "format")))
		buf_printf(b, " --format %s", json_string_value(json_object_get(how, "format")));
	if (json_integer_value(json_object_get(how, "iterations")) > 0)
		buf_printf(b, " --iterations %lld",
			   (long long)json_integer_value(json_object_get(how, "iterations")));
	if (json_is_true(json_object_get(how, "profile")))
		buf_puts(b, " --profile");
	if (json_is_true(json_object_get(how, "lock_contention")))
		buf_puts(b, " --lock-contention");
	o = h->params ? json_loads(h->params, 0, NULL) : NULL;
	json_object_foreach(o, key, v)
		buf_printf(b, " \\\n\t\t--param %s=%s", key, json_string_value(v));
	json_decref(o);
	/* the knobs given on its command line; without a record, the run's variant */
	o = how ? NULL : h->variant ? json_loads(h->variant, 0, NULL) : NULL;
	json_object_foreach(how ? variant : o, key, v)
		buf_printf(b, " \\\n\t\t--variant %s=%s", key, json_string_value(v));
	json_decref(o);
	json_decref(how);
	/* one option per line, so the command copies whole under 80 columns */
	buf_printf(b, " \\\n\t\t--commit %s \\\n\t\t-- %s\n", f->sha ? f->sha : "?",
		   f->command ? f->command : "<the benchmark command>");
}

static void body_report(const struct alert_facts *f, struct buf *b)
{
	const struct alert_item *h = &f->items[0];
	char change[32];
	size_t rest = 0;

	alert_change(h, change, sizeof(change));
	buf_puts(b, "Greeting,\n\n");
	if (h->previous_verdict && strcmp(h->previous_verdict, h->verdict))
		buf_printf(b, "FYI, with more runs kperf now judges %s as %s\n(it reported %s "
			      "before), for commit:\n\n",
			   h->metric, h->verdict, h->previous_verdict);
	else if (h->recovered_by)
		buf_printf(b, "FYI, the %s of %s reported for this commit\nwas undone by "
			      "commit %.12s:\n\n",
			   h->verdict, h->metric, h->recovered_by);
	else if (f->bisection)
		buf_printf(b, "FYI, kperf noticed a %s %s of %s,\nand bisected it to the first"
			      " bad commit:\n\n",
			   change, h->verdict, h->metric);
	else
		buf_printf(b, "FYI, kperf noticed a %s %s of %s\ndue to commit:\n\n", change,
			   h->verdict, h->metric);
	buf_printf(b, "commit: %s\n", f->sha ? f->sha : "?");
	if (f->subject)
		buf_printf(b, "        (\"%s\")\n", f->subject);
	if (f->series)
		buf_printf(b, "series: %s\n", f->series);
	if (f->branch)
		buf_printf(b, "branch: %s\n", f->branch);
	if (h->base_commit)
		buf_printf(b, "base: %s (%s)\n", h->base_commit,
			   !f->base_kind || !strcmp(f->base_kind, "parent") ? "parent"
			   : !strcmp(f->base_kind, "series_base")            ? "series base"
									      : "nearest tested ancestor");
	if (unconfirmed(h))
		unconfirmed_text(b, h);
	if (f->bisection) {
		buf_putc(b, '\n');
		buf_puts(b, f->bisection);
	}
	buf_printf(b, "\nin testcase: %s\non test machine: %s", h->suite, h->machine);
	if (f->nr_cpus || f->cpu_model || f->memory_mb) {
		buf_puts(b, "\n ");
		if (f->nr_cpus)
			buf_printf(b, " %s threads", f->nr_cpus);
		if (f->sockets)
			buf_printf(b, " %s sockets", f->sockets);
		if (f->cpu_model)
			buf_printf(b, " %s", f->cpu_model);
		if (f->memory_mb)
			buf_printf(b, " with %.0fG memory", strtod(f->memory_mb, NULL) / 1024.0);
	}
	buf_puts(b, "\nwith following parameters:\n\n");
	params_lines(b, h->params);
	params_lines(b, h->variant);
	if (isfinite(h->ci_lo_pct))
		buf_printf(b, "\n95%% confidence interval of the change (Welch): [%.2f%%, %.2f%%]\n",
			   h->ci_lo_pct, h->ci_hi_pct);
	if (f->not_judged && *f->not_judged) {
		buf_puts(b, "\nNot judged as a kernel change: these tests ran with other work arguments"
			    " than on the base, so their changes are not reported:\n\n");
		for (const char *l = f->not_judged; *l;) {
			size_t n = strcspn(l, "\n");
			buf_printf(b, "  %.*s\n", (int)n, l);
			l += n + (l[n] == '\n');
		}
	}
	if (isfinite(h->ci_lo_pct) && h->ci_lo_pct < -100 && !h->absolute)
		buf_puts(b, "(Its lower end is below -100%: Welch's interval is symmetric around the"
			    " change and, with few or spread samples, passes -100%, which a positive"
			    " quantity cannot fall by. Read it as a large fall known poorly; more runs"
			    " narrow it.)\n");
	for (size_t i = 1; i < f->nitems; i++)
		rest++;
	if (rest) {
		buf_puts(b, "\nThe commit also has significant impact on the following tests:\n\n");
		for (size_t i = 1; i < f->nitems; i++)
			item_line(b, &f->items[i]);
	}
	if (f->lkp_table && *f->lkp_table) {
		buf_puts(b, "\nDetails are as below:\n");
		buf_puts(b, "---------------------------------------------------------------------"
			    "---------\n\n");
		/* the table is LKP's, as wide as LKP prints it: not wrapped */
		buf_putc(b, NOWRAP_ON);
		buf_puts(b, f->lkp_table);
		buf_putc(b, NOWRAP_OFF);
	}
	reproduce_text(b, f, h);
	buf_puts(b, "\nIf you fix the issue, kindly add following tag\n");
	buf_printf(b, "Reported-by: kperf <%s>\n", f->from);
	if (f->public_url) {
		/* 12-digit abbreviations resolve like full shas and keep the line short */
		buf_printf(b, "\nCompare: %s/compare?base=%.12s&target=%.12s\n", f->public_url,
			   h->base_commit ? h->base_commit : "", f->sha ? f->sha : "");
		buf_printf(b, "Triage:  %s/regressions/%ld\n", f->public_url, h->decision_id);
	}
}

static void body_digest(const struct alert_facts *f, struct buf *b)
{
	buf_puts(b, "Greeting,\n\nkperf's changes of the last day that match your "
		    "subscription:\n\n");
	for (size_t i = 0; i < f->nitems; i++) {
		buf_printf(b, "commit %.12s\n", f->items[i].commit ? f->items[i].commit : "?");
		item_line(b, &f->items[i]);
		if (f->public_url)
			buf_printf(b, "    %s/regressions/%ld\n", f->public_url,
				   f->items[i].decision_id);
		buf_putc(b, '\n');
	}
}

/*
 * Copy text to out with CRLF line ends, wrapping prose lines longer than
 * ALERT_COLUMNS at blanks (continuations indented), except between
 * NOWRAP_ON and NOWRAP_OFF and words that cannot be broken (URLs).
 */
void alert_wrap_crlf(const char *text, struct buf *out)
{
	int nowrap = 0;

	while (*text) {
		size_t len = strcspn(text, "\n");
		const char *line = text, *end = text + len;

		while (line < end) {
			size_t rest = (size_t)(end - line), cut = rest;
			if (*line == NOWRAP_ON || *line == NOWRAP_OFF) {
				nowrap = *line == NOWRAP_ON;
				line++;
				continue;
			}
			if (!nowrap && rest > ALERT_COLUMNS) {
				cut = ALERT_COLUMNS;
				while (cut > 8 && line[cut] != ' ')
					cut--;
				if (cut <= 8)
					cut = rest; /* one long word: leave it whole */
			}
			for (size_t i = 0; i < cut; i++)
				if (line[i] != NOWRAP_ON && line[i] != NOWRAP_OFF)
					buf_putc(out, line[i]);
				else
					nowrap = line[i] == NOWRAP_ON;
			buf_puts(out, "\r\n");
			line += cut;
			if (line < end) {
				while (line < end && *line == ' ')
					line++;
				buf_puts(out, "    ");
			}
		}
		if (len == 0)
			buf_puts(out, "\r\n");
		text = *end ? end + 1 : end;
	}
}

/* RFC 2047 for a non-ASCII header value. */
void alert_header_text(struct buf *b, const char *s)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(s);
	int ascii = 1;

	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] >= 0x80 || s[i] == '\r' || s[i] == '\n')
			ascii = 0;
	if (ascii) {
		buf_puts(b, s);
		return;
	}
	buf_puts(b, "=?UTF-8?B?");
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)s[i] << 16;
		if (i + 1 < n)
			v |= (unsigned char)s[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)s[i + 2];
		buf_putc(b, b64[(v >> 18) & 63]);
		buf_putc(b, b64[(v >> 12) & 63]);
		buf_putc(b, i + 1 < n ? b64[(v >> 6) & 63] : '=');
		buf_putc(b, i + 2 < n ? b64[v & 63] : '=');
	}
	buf_puts(b, "?=");
}

void alert_message(const struct alert_facts *f, struct buf *out)
{
	struct buf subject = BUF_INIT, body = BUF_INIT;

	alert_subject(f, &subject);
	if (f->digest || !f->nitems)
		body_digest(f, &body);
	else
		body_report(f, &body);
	if (f->unsubscribe_url || f->served)
		buf_puts(&body, "\n-- \nkperf, kernel performance tracking.\n");
	if (f->served)
		buf_puts(&body, f->served);
	if (f->unsubscribe_url)
		buf_printf(&body, "Unsubscribe:\n%s\n", f->unsubscribe_url);

	buf_printf(out, "From: kperf <%s>\r\nTo: %s\r\nSubject: ", f->from, f->to);
	alert_header_text(out, buf_str(&subject));
	buf_printf(out, "\r\nDate: %s\r\nMessage-ID: %s\r\n", f->date, f->message_id);
	if (f->in_reply_to)
		buf_printf(out, "In-Reply-To: %s\r\nReferences: %s\r\n", f->in_reply_to,
			   f->in_reply_to);
	if (f->unsubscribe_url)
		buf_printf(out, "List-Unsubscribe: <%s>\r\n"
				"List-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n",
			   f->unsubscribe_url);
	if (f->sha)
		buf_printf(out, "X-Kperf-Commit: %s\r\n", f->sha);
	buf_puts(out, "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n"
		      "Content-Transfer-Encoding: 8bit\r\n\r\n");
	alert_wrap_crlf(buf_str(&body), out);
	buf_release(&subject);
	buf_release(&body);
}
