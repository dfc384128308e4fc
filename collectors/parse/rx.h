/*
 * rx.h - the parsers' regular expressions: POSIX extended expressions
 * compiled once per parse, and typed access to their captured groups.
 */
#ifndef KPERF_RX_H
#define KPERF_RX_H

#include <regex.h>
#include <stdint.h>

#define RX_GROUPS 8

struct rx {
	regex_t re;
	int ok;
	regmatch_t m[RX_GROUPS];
	const char *s; /* subject of the last match */
};

/* Compile an ERE; aborts on a bad pattern (a programming error). */
void rx_init(struct rx *r, const char *pattern);
void rx_release(struct rx *r);
/* 1 when s matches (groups then readable), else 0. */
int rx_match(struct rx *r, const char *s);
/* Group i as a finite double / unsigned 64-bit integer: 0, or -1 when absent or bad. */
int rx_double(const struct rx *r, int i, double *out);
int rx_u64(const struct rx *r, int i, uint64_t *out);
/* Group i copied into out (cut to outsz - 1 bytes); returns out ("" when absent). */
char *rx_str(const struct rx *r, int i, char *out, size_t outsz);

#endif
