/*
 * dtoa.cc - the one C++ file of kperfd: double-conversion's shortest digits
 * (Grisu3, exact bignum fallback) behind a C function, for jsonw.c.
 */
#include <double-conversion/double-to-string.h>

#include "lib/dtoa.h"

int dtoa_shortest(double d, char digits[DTOA_DIGITS_MAX + 1], int *point)
{
	using double_conversion::DoubleToStringConverter;
	bool neg;
	int len;

	DoubleToStringConverter::DoubleToAscii(d, DoubleToStringConverter::SHORTEST, 0, digits,
					       DTOA_DIGITS_MAX + 1, &neg, &len, point);
	return len;
}
