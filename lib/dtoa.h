/*
 * dtoa.h - the shortest decimal digits of a double, from Google's
 * double-conversion (C++, wrapped in dtoa.cc). jsonw.c lays them out.
 */
#ifndef KPERF_DTOA_H
#define KPERF_DTOA_H

/* Most digits a double's shortest round-trip form needs. */
#define DTOA_DIGITS_MAX 17

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Write the shortest digit string that reads back as |d| into digits,
 * NUL-terminated, no leading zero ("0" for zero): of several, the closest to
 * |d|, and of two as close, the one with an even last digit. |d| equals
 * 0.digits times 10^*point. Returns the number of digits, 1 to 17. The sign
 * of d is ignored; d must be finite. Cannot fail.
 */
int dtoa_shortest(double d, char digits[DTOA_DIGITS_MAX + 1], int *point);

#ifdef __cplusplus
}
#endif

#endif
