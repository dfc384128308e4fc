/*
 * test_jsonw.c - jsonw_double writes, byte for byte, what it wrote before it
 * took its digits from double-conversion: printf's shortest round-tripping
 * %.15g / %.16g / %.17g. The former implementation (one %.16e, its roundings
 * read back with strtod) is kept here as the reference, and checked in turn
 * against the plain statement of the rule, on ~3.3 million doubles: random
 * bit patterns, measurement-like values, ties, and every edge of the format.
 */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/jsonw.h"

/* Under AddressSanitizer, a tenth of the random values (the suite's budget). */
#if defined(__SANITIZE_ADDRESS__)
#define SCALE 10
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SCALE 10
#endif
#endif
#ifndef SCALE
#define SCALE 1
#endif

/* The rule as written: the first of %.15g, %.16g, %.17g that reads back. */
static void reference(char *out, size_t cap, double d)
{
	if (d > -1e17 && d < 1e17 && d == (double)(long long)d) {
		snprintf(out, cap, "%lld", (long long)d);
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(out, cap, "%.*g", prec, d);
		if (strtod(out, NULL) == d)
			return;
	}
}

/* The former jsonw.c, verbatim but for writing into out. */
static int old_g_style(char *out, size_t cap, int neg, const char *dig, int n, int x)
{
	char *o = out;
	int p = n;
	while (n > 1 && dig[n - 1] == '0')
		n--;
	if (neg)
		*o++ = '-';
	if (x < -4 || x >= p) {
		*o++ = dig[0];
		if (n > 1) {
			*o++ = '.';
			memcpy(o, dig + 1, (size_t)n - 1);
			o += n - 1;
		}
		return (int)(o - out) + snprintf(o, cap - (size_t)(o - out), "e%c%02d",
						 x < 0 ? '-' : '+', x < 0 ? -x : x);
	}
	if (x < 0) {
		*o++ = '0';
		*o++ = '.';
		for (int i = -1; i > x; i--)
			*o++ = '0';
		memcpy(o, dig, (size_t)n);
		o += n;
	} else {
		for (int i = 0; i <= x || i < n; i++) {
			if (i == x + 1)
				*o++ = '.';
			*o++ = i < n ? dig[i] : '0';
		}
	}
	*o = '\0';
	return (int)(o - out);
}

static void old_double(char *out, double d)
{
	char e17[40], dig[20], tmp[48];
	int neg, x, prec;

	if (d > -1e17 && d < 1e17 && d == (double)(long long)d) {
		snprintf(out, 48, "%lld", (long long)d);
		return;
	}
	snprintf(e17, sizeof(e17), "%.16e", d);
	neg = e17[0] == '-';
	dig[0] = e17[neg];
	memcpy(dig + 1, e17 + neg + 2, 16);
	x = (int)strtol(e17 + neg + 19, NULL, 10);
	for (prec = 15; prec < 17; prec++) {
		char r[20];
		int rx = x, i;
		memcpy(r, dig, 17);
		if (r[prec] == '5' && (prec == 16 || r[16] == '0')) {
			snprintf(tmp, sizeof(tmp), "%.*g", prec, d);
			if (strtod(tmp, NULL) == d) {
				memcpy(out, tmp, sizeof(tmp));
				return;
			}
			continue;
		}
		if (r[prec] >= '5') {
			for (i = prec - 1; i >= 0 && r[i] == '9'; i--)
				r[i] = '0';
			if (i >= 0) {
				r[i]++;
			} else {
				memmove(r + 1, r, (size_t)prec - 1);
				r[0] = '1';
				rx++;
			}
		}
		old_g_style(tmp, sizeof(tmp), neg, r, prec, rx);
		if (strtod(tmp, NULL) == d) {
			memcpy(out, tmp, sizeof(tmp));
			return;
		}
	}
	old_g_style(out, 48, neg, dig, 17, x);
}

static uint64_t rng = 88172645463325252ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* uniform in [0, 1) */
static double unit(void)
{
	return (double)(next() >> 11) * 0x1p-53;
}

static double from_bits(uint64_t u)
{
	double d;
	memcpy(&d, &u, sizeof(d));
	return d;
}

static long checked;

/* jsonw_double(d) as the former code wrote it; every 32nd also as the rule says */
static void check(double d)
{
	static struct buf b;
	char want[48];

	if (!isfinite(d))
		return;
	old_double(want, d);
	buf_reset(&b);
	jsonw_double(&b, d);
	cr_assert_str_eq(buf_str(&b), want, "%a: wrote %s, before %s", d, buf_str(&b), want);
	if (checked++ % 32 == 0) {
		char rule[48];
		reference(rule, sizeof(rule), d);
		cr_assert_str_eq(rule, want, "%a: the rule says %s, before %s", d, rule, want);
	}
}

/* d and its neighbours, up to k units in the last place either side */
static void check_around(double d, int k)
{
	double lo = d, hi = d;
	check(d);
	for (int i = 0; i < k; i++) {
		lo = nextafter(lo, -INFINITY);
		hi = nextafter(hi, INFINITY);
		check(lo);
		check(hi);
	}
}

Test(jsonw, double_written_as_before)
{
	static const struct {
		double d;
		const char *want;
	} v[] = {
		{0.1, "0.1"},
		{-0.1, "-0.1"},
		{-0.0, "0"},
		{0.0, "0"},
		{160, "160"},
		{-42, "-42"},
		{1070.25, "1070.25"},
		{13.11, "13.11"},
		{0.30000000000000004, "0.30000000000000004"},
		{99999999999999984.0, "99999999999999984"},
		{1e17, "1e+17"},
		{123456789012345680.0, "1.2345678901234568e+17"},
		{1e23, "1e+23"},
		{1e-5, "1e-05"},
		{1.5e-5, "1.5e-05"},
		{0.0001, "0.0001"},
		{9.9999e-5, "9.9999e-05"},
		{1e15 + 0.5, "1000000000000000.5"},
		{123456789012345.6, "123456789012345.6"},
		{2.5e100, "2.5e+100"},
		{DBL_MAX, "1.7976931348623157e+308"},
		{-DBL_MIN, "-2.2250738585072014e-308"},
		{5e-324, "4.94065645841247e-324"},
		{0x1p-1073, "9.88131291682493e-324"},
		/* ties between two 16-digit decimals: to the even one, as printf */
		{562949953421312.25, "562949953421312.2"},
		{562949953421312.75, "562949953421312.8"},
		/* powers of two whose nearest 16 digits fall below their interval,
		 * where 5.960464477539063e-08 would read back */
		{0x1p-24, "5.9604644775390625e-08"},
		{0x1p-44, "5.6843418860808015e-14"},
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct buf b = BUF_INIT;
		char old[48];
		jsonw_double(&b, v[i].d);
		cr_assert_str_eq(buf_str(&b), v[i].want, "%a: wrote %s", v[i].d, buf_str(&b));
		old_double(old, v[i].d);
		cr_assert_str_eq(old, v[i].want, "%a: before %s", v[i].d, old);
		buf_release(&b);
	}
}

Test(jsonw, number_null_when_not_finite)
{
	struct buf b = BUF_INIT;
	jsonw_number(&b, NAN);
	buf_putc(&b, ',');
	jsonw_number(&b, -INFINITY);
	buf_putc(&b, ',');
	jsonw_number(&b, 2.5);
	cr_assert_str_eq(buf_str(&b), "null,null,2.5");
	buf_release(&b);
}

Test(jsonw, double_random_bit_patterns)
{
	checked = 0;
	for (long i = 0; i < 2000000 / SCALE; i++)
		check(from_bits(next()));
	/* a NaN or infinity is 1 in 2048 */
	cr_assert_gt(checked, 2000000 / SCALE * 99 / 100);
}

Test(jsonw, double_measurement_like)
{
	static const double pow10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6};

	checked = 0;
	for (long i = 0; i < 1000000 / SCALE; i++) {
		uint64_t r = next();
		switch (i % 6) {
		case 0: /* few digits: 1070.25, 0.013 */
			check((double)(r % 100000000) / pow10[r >> 32 & 3] / pow10[(r >> 40) % 7]);
			break;
		case 1: /* x / 10^k up to 1e12 */
			check((double)(r % 1000000000000000ULL) / pow10[(r >> 50) % 4 + 3]);
			break;
		case 2: /* 1000 + noise, and its mean-like ratios */
			check((1000 + (unit() - 0.5) * 40) / (double)((r >> 54) % 7 + 1));
			break;
		case 3: /* 1e-6 .. 1e12, all digits, both signs */
			check((r & 1 ? -1 : 1) * (1 + 9 * unit()) * pow10[r >> 8 & 3] *
			      pow(10, -6 + (int)(r % 16)));
			break;
		case 4: /* ratios, percentages */
			check(100.0 * (double)(r % 9973) / (double)((r >> 20) % 9973 + 1) - 100);
			break;
		default: /* 1e13 .. 1e16 and a few binary places: ties at 16 and 17 digits */
			check(floor((1 + 9 * unit()) * pow10[r % 4] * 1e13) +
			      ldexp((double)(r >> 16 & 63), -(int)((r >> 24) % 7) - 1));
			break;
		}
	}
	cr_assert_eq(checked, 1000000 / SCALE);
}

Test(jsonw, double_edges)
{
	checked = 0;
	/* subnormals: the smallest and largest, and random ones of both signs */
	for (uint64_t u = 1; u < 2000; u++) {
		check(from_bits(u));
		check(from_bits(0x000fffffffffffffULL - u + 1));
	}
	for (long i = 0; i < 200000 / SCALE; i++)
		check(from_bits(next() & 0x800fffffffffffffULL));
	check_around(DBL_MIN, 50);
	check_around(DBL_MAX, 50);
	check_around(5e-324, 3);
	check_around(0.1, 50);
	/* every power of two and of ten, and their neighbours */
	for (int e = -1074; e <= 1023; e++) {
		check_around(ldexp(1, e), 3);
		check_around(-ldexp(1, e), 1);
	}
	for (int e = -323; e <= 308; e++) {
		char s[16];
		snprintf(s, sizeof(s), "1e%d", e);
		check_around(strtod(s, NULL), 3);
		snprintf(s, sizeof(s), "-5e%d", e);
		check_around(strtod(s, NULL), 1);
	}
	/* where whole numbers stop, and where 15, 16, 17 digits run out */
	for (double d = 1e15; d <= 1e23; d *= 10)
		for (int m = 1; m < 10; m++)
			check_around(d * m, 300);
	/* where %g switches to an exponent */
	check_around(1e-5, 300);
	check_around(9.9999e-5, 300);
	check_around(1e-4, 300);
	check_around(1e15, 300);
	check_around(1e16, 300);
	check_around(1e17, 300);
	for (int k = 1; k <= 17; k++) {
		check_around(1 - pow(10, -k), 3);
		check_around(pow(10, k) - 0.5, 3);
	}
	cr_assert_gt(checked, 50000);
}
