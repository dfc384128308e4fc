/*
 * test_util.c - util's dates (format_utc against the C library's gmtime_r
 * over years 1-9999, leap days and times before 1970) and buf_printf.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lib/buf.h"
#include "lib/util.h"

static void expect_libc(int64_t t)
{
	char want[64], got[24];
	time_t tt = (time_t)t;
	struct tm tm;

	cr_assert_not_null(gmtime_r(&tt, &tm));
	/* four year digits, as to_char's YYYY (strftime's %Y has no padding) */
	snprintf(want, sizeof(want), "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	format_utc(t, got);
	cr_assert_str_eq(got, want, "t=%lld", (long long)t);
}

Test(util, format_utc_is_gmtime)
{
	/* 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z */
	const int64_t lo = -62135596800LL, hi = 253402300799LL;
	uint64_t x = 88172645463325252ULL;
	char got[24];

	format_utc(0, got);
	cr_assert_str_eq(got, "1970-01-01T00:00:00Z");
	format_utc(-1, got);
	cr_assert_str_eq(got, "1969-12-31T23:59:59Z");
	format_utc(951825599, got); /* the leap day of 2000, a century divisible by 400 */
	cr_assert_str_eq(got, "2000-02-29T11:59:59Z");
	format_utc(4107542400LL, got); /* 2100 is not a leap year */
	cr_assert_str_eq(got, "2100-03-01T00:00:00Z");
	format_utc(lo, got);
	cr_assert_str_eq(got, "0001-01-01T00:00:00Z");
	format_utc(hi, got);
	cr_assert_str_eq(got, "9999-12-31T23:59:59Z");
	format_utc(lo - 1, got);
	cr_assert_str_eq(got, "");
	format_utc(hi + 1, got);
	cr_assert_str_eq(got, "");
	for (int64_t t = -86400 * 3; t < 86400 * 3; t += 3607)
		expect_libc(t);
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		expect_libc(lo + (int64_t)(x % (uint64_t)(hi - lo + 1)));
	}
}

/* buf_printf writes in one pass when the rest of the buffer holds it, in two
 * when not: either way the same bytes, and always NUL-terminated. */
Test(util, buf_printf_across_growth)
{
	struct buf b = BUF_INIT, want = BUF_INIT;
	char piece[400];

	for (int len = 0; len < 400; len += 7) {
		memset(piece, 'a' + len % 26, (size_t)len);
		piece[len] = '\0';
		buf_printf(&b, "%s|%d;", piece, len);
		buf_append(&want, piece, (size_t)len);
		buf_append(&want, "|", 1);
		{
			char num[16];
			int n = snprintf(num, sizeof(num), "%d;", len);
			buf_append(&want, num, (size_t)n);
		}
		cr_assert_eq(b.len, want.len);
		cr_assert_eq(b.data[b.len], '\0');
		cr_assert_eq(memcmp(b.data, want.data, b.len), 0);
	}
	buf_printf(&b, "%s", "");
	cr_assert_eq(b.len, want.len);
	cr_assert_eq(b.data[b.len], '\0');
	buf_release(&b);
	buf_release(&want);
}
