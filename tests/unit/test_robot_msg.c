/*
 * test_robot_msg.c - the robot's reply (server/mail/robot_msg.c) in the
 * kernel test robot's order: the reply to a patch, the tree-commit form
 * with regzbot's line, and the clean report to a cover letter.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "lib/buf.h"
#include "server/mail/robot_msg.h"

static struct robot_facts patch_reply(void)
{
	struct robot_facts f;

	memset(&f, 0, sizeof(f));
	f.kind = "regression";
	f.from = "kperf@lab.example";
	f.to = "Lab Dev <dev@example.org>";
	f.cc = "linux-mm@kvack.org";
	f.date = "Wed, 02 Dec 2026 07:25:00 +0000";
	f.message_id = "<kperf.robot.1.regression.1@lab.example>";
	f.in_reply_to = "<p2@example.org>";
	f.references = "<cover@example.org> <p2@example.org>";
	f.reply_subject = "[PATCH v2 2/3] mm/vmscan: use lruvec->lru_lock";
	f.metric = "vm-scalability.throughput";
	f.change = "-11.5%";
	f.ci = "95% CI -13.0% .. -10.1% (Welch), p = 2.1e-08, 3 -> 3 runs";
	f.sha = "10e01efacb34e7935e437390abf4820b36e26380";
	f.commit_subject = f.reply_subject;
	f.base = "bb22bebfc2e892bb9073861fc3aae857169aae47";
	f.patch_url = "https://lore.kernel.org/linux-mm/p2@example.org/";
	f.patch_subject = f.reply_subject;
	f.suite = "vm-scalability";
	f.params = "{\"test\":\"lru-file-mmap-read\",\"runtime\":\"300s\"}";
	f.machine = "lkp-1: 8 CPUs, 1 sockets, 16384 MB memory, Test CPU";
	f.report_url = "http://kperf.example/regressions/7";
	f.lkp_table = "====TABLE====\n";
	f.bisection = "Bisected between a (good) and b (bad), 4 commits:\n";
	f.reproduce = "To reproduce:\n";
	return f;
}

/* Each of lines, in order, in text: the position after the last. */
static void in_order(const char *text, const char *const *lines)
{
	const char *at = text;
	for (; *lines; lines++) {
		const char *hit = strstr(at, *lines);
		cr_assert_not_null(hit, "\"%s\" missing or out of order in:\n%s", *lines, text);
		at = hit + strlen(*lines);
	}
}

Test(robot_msg, a_patch_reply_in_the_robots_order)
{
	struct robot_facts f = patch_reply();
	struct buf b = BUF_INIT;
	char dashes[120];
	const char *order[] = {
		"From: kperf <kperf@lab.example>\r\n",
		"To: Lab Dev <dev@example.org>\r\n",
		"Cc: linux-mm@kvack.org\r\n",
		"Subject: Re: [PATCH v2 2/3] mm/vmscan: use lruvec->lru_lock\r\n",
		"Message-ID: <kperf.robot.1.regression.1@lab.example>\r\n",
		"In-Reply-To: <p2@example.org>\r\n",
		"References: <cover@example.org> <p2@example.org>\r\n",
		"X-Kperf-Report: regression\r\n",
		"\r\n\r\n\r\n\r\nHello,\r\n\r\n",
		"kperf noticed a -11.5% regression of vm-scalability.throughput on:\r\n\r\n\r\n",
		"commit: 10e01efacb34e7935e437390abf4820b36e26380 (\"[PATCH v2 2/3] mm/vmscan: use "
		"lruvec->lru_lock\")\r\n",
		"base: bb22bebfc2e892bb9073861fc3aae857169aae47\r\n",
		"patch link: https://lore.kernel.org/linux-mm/p2@example.org/\r\n",
		"patch subject: [PATCH v2 2/3] mm/vmscan: use lruvec->lru_lock\r\n",
		"testcase: vm-scalability\r\n",
		"test machine: lkp-1: 8 CPUs, 1 sockets, 16384 MB memory, Test CPU\r\n",
		"parameters:\r\n\r\n\truntime: 300s\r\n\ttest: lru-file-mmap-read\r\n",
		"vm-scalability.throughput -11.5%: 95% CI -13.0% .. -10.1% (Welch)",
		"\r\n\r\n\r\n\r\nIf you fix the issue in a separate patch/commit (i.e. not just a new "
		"version of\r\nthe same patch/commit), kindly add following tags\r\n",
		"| Reported-by: kperf <kperf@lab.example>\r\n",
		"| Closes: http://kperf.example/regressions/7\r\n",
		"Details are as below:\r\n",
		dashes,
		"====TABLE====",
		"Bisected between a (good) and b (bad)",
		"To reproduce:",
		"\r\n-- \r\nkperf, kernel performance tracking\r\n",
		NULL};

	memset(dashes, '-', 97);
	strcpy(dashes + 97, ">\r\n");
	robot_message(&f, &b);
	in_order(b.data, order);
	cr_assert_null(strstr(b.data, "#regzbot"), "a patch reply names no regzbot range");
	cr_assert_null(strstr(b.data, "\n\n"), "bare LF in a CRLF message");
	buf_release(&b);
}

Test(robot_msg, a_branch_head_in_the_tree_form_with_regzbot)
{
	struct robot_facts f = patch_reply();
	struct buf b = BUF_INIT;
	const char *order[] = {"To: Lab Dev <dev@example.org>\r\n",
			       "Subject: [linux-next] [mm/vmscan]  10e01efacb:  "
			       "vm-scalability.throughput -11.5% regression\r\n",
			       "commit: 10e01efacb34e7935e437390abf4820b36e26380", "linux-next\r\n",
			       "testcase: vm-scalability\r\n", "| Closes: ",
			       "\r\n#regzbot introduced: 10e01efacb34\r\n", "Details are as below:",
			       NULL};

	f.reply_subject = NULL;
	f.in_reply_to = NULL;
	f.references = NULL;
	f.branch = "linux-next";
	f.area = "mm/vmscan";
	f.regzbot = 1;
	robot_message(&f, &b);
	in_order(b.data, order);
	cr_assert_null(strstr(b.data, "In-Reply-To:"));
	cr_assert_null(strstr(b.data, "patch link:"));
	buf_release(&b);
}

Test(robot_msg, a_clean_report_to_the_cover_letter)
{
	struct robot_facts f = patch_reply();
	struct buf b = BUF_INIT;
	const char *order[] = {"Subject: Re: [PATCH v3 0/3] mm: per-memcg lru_lock\r\n",
			       "X-Kperf-Report: clean\r\n",
			       "kperf tested this series and noticed no performance change:\r\n",
			       "base: bb22bebfc2e892bb9073861fc3aae857169aae47\r\n",
			       "no KPI changed", "====TABLE====", NULL};

	f.kind = "clean";
	f.reply_subject = "[PATCH v3 0/3] mm: per-memcg lru_lock";
	f.tested = "The series (3 patches) was applied on its base; no KPI changed.";
	robot_message(&f, &b);
	in_order(b.data, order);
	cr_assert_null(strstr(b.data, "Reported-by"), "nothing to fix, no tags");
	buf_release(&b);
}

Test(robot_msg, a_build_report_names_the_patch_base_config_compiler_and_errors)
{
	struct robot_facts f = patch_reply();
	struct buf b = BUF_INIT;
	const char *order[] = {
	    "Subject: Re: [PATCH v2 3/3] mm/swap: batch folio_mark_accessed\r\n",
	    "In-Reply-To: <p3@example.org>\r\n",
	    "References: <cover@example.org> <p3@example.org>\r\n",
	    "X-Kperf-Report: build\r\n",
	    "kperf built this series and patch 3/3 does not build:\r\n",
	    "[auto build test ERROR on bb22bebfc2e8]\r\n",
	    "commit: 10e01efacb34e7935e437390abf4820b36e26380 (\"[PATCH v2 3/3] mm/swap: batch "
	    "folio_mark_accessed\")\r\n",
	    "base: bb22bebfc2e892bb9073861fc3aae857169aae47\r\n",
	    "patch link: https://lore.kernel.org/linux-mm/p3@example.org/\r\n",
	    "config: 42559067c3c618b8 (tinyconfig + kperf.config)\r\n",
	    "compiler: gcc (Debian 12.2.0-14+deb12u1) 12.2.0\r\n",
	    "| Reported-by: kperf <kperf@lab.example>\r\n",
	    "| Closes: http://kperf.example/series/mm%3A%20lru\r\n",
	    "make bzImage exited with status 2: mm/swap.c:469:28: error: expected expression\r\n",
	    "All errors (new ones prefixed by >>):\r\n",
	    "   mm/swap.c: In function 'folio_mark_accessed':\r\n",
	    ">> mm/swap.c:469:28: error: expected expression before ';' token\r\n",
	    "The series is not measured",
	    NULL};

	f.kind = "build";
	f.reply_subject = f.patch_subject = f.commit_subject =
	    "[PATCH v2 3/3] mm/swap: batch folio_mark_accessed";
	f.in_reply_to = "<p3@example.org>";
	f.references = "<cover@example.org> <p3@example.org>";
	f.patch_url = "https://lore.kernel.org/linux-mm/p3@example.org/";
	f.report_url = "http://kperf.example/series/mm%3A%20lru";
	f.position = "3/3";
	f.config = "42559067c3c618b8 (tinyconfig + kperf.config)";
	f.compiler = "gcc (Debian 12.2.0-14+deb12u1) 12.2.0";
	f.build_error = "make bzImage exited with status 2: mm/swap.c:469:28: error: expected "
			"expression";
	f.build_lines = "mm/swap.c: In function 'folio_mark_accessed':\n"
			"mm/swap.c:469:28: error: expected expression before ';' token\n";
	robot_message(&f, &b);
	in_order(buf_str(&b), order);
	/* a build report quotes no measurement */
	cr_assert_null(strstr(buf_str(&b), "vm-scalability"), "%s", buf_str(&b));
	cr_assert_null(strstr(buf_str(&b), "====TABLE===="), "%s", buf_str(&b));
	buf_release(&b);
}
