/*
 * test_jsonw.c - jsonw_double writes what printf's shortest round-tripping
 * %.15g / %.16g / %.17g writes (the plain statement of the rule, kept here
 * as the reference), for 400,000 doubles of every kind: random bit patterns
 * (subnormals, huge, tiny), three-decimal samples, ratios, scaled fractions.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "jsonw.h"

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

Test(jsonw, double_is_the_shortest_printf_form_that_reads_back)
{
	unsigned long long st = 88172645463325252ULL;
	long checked = 0;

	for (long i = 0; i < 400000; i++) {
		char want[48];
		struct buf b = BUF_INIT;
		double d;

		st ^= st << 13;
		st ^= st >> 7;
		st ^= st << 17;
		switch (i % 4) {
		case 0:
			memcpy(&d, &st, sizeof(d));
			if (!isfinite(d))
				continue;
			break;
		case 1:
			d = (double)(st % 1000000) / 1000.0;
			break;
		case 2:
			d = ((double)st / 1.8446744073709552e19) * pow(10, (int)(st % 40) - 20);
			break;
		default:
			d = 1000.0 / ((double)(st % 997) + 1);
			break;
		}
		reference(want, sizeof(want), d);
		jsonw_double(&b, d);
		cr_assert_str_eq(buf_str(&b), want, "%.17g", d);
		cr_assert_eq(strtod(buf_str(&b), NULL), d);
		buf_release(&b);
		checked++;
	}
	cr_assert_gt(checked, 390000);
}

Test(jsonw, double_edge_values)
{
	static const double v[] = {0.1, -0.1, 1e-5, 1.5e-5, 0.0001, 123456789012345.6,
				   1e15 + 0.5, 9.9999999999999995e-5, 5e-324, 1.7976931348623157e308,
				   -2.2250738585072014e-308, 0.30000000000000004, 9.5, 99.5};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char want[48];
		struct buf b = BUF_INIT;
		reference(want, sizeof(want), v[i]);
		jsonw_double(&b, v[i]);
		cr_assert_str_eq(buf_str(&b), want, "%.17g", v[i]);
		buf_release(&b);
	}
}
