/*
 * rx.c - POSIX regular expressions for the line parsers. LKP's parsers are
 * Ruby regexps; the ones ported here avoid the constructs where POSIX's
 * leftmost-longest rule and Ruby's leftmost-first rule disagree.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/base/cutil.h"
#include "collectors/parse/rx.h"

void rx_init(struct rx *r, const char *pattern)
{
	int rc = regcomp(&r->re, pattern, REG_EXTENDED);
	if (rc) {
		char msg[256];
		regerror(rc, &r->re, msg, sizeof(msg));
		fprintf(stderr, "kperf-collect: BUG: bad pattern %s: %s\n", pattern, msg);
		abort();
	}
	r->ok = 1;
	r->s = NULL;
}

void rx_release(struct rx *r)
{
	if (r->ok)
		regfree(&r->re);
	r->ok = 0;
}

int rx_match(struct rx *r, const char *s)
{
	r->s = s;
	return regexec(&r->re, s, RX_GROUPS, r->m, 0) == 0;
}

int rx_double(const struct rx *r, int i, double *out)
{
	if (i >= RX_GROUPS || r->m[i].rm_so < 0)
		return -1;
	return cparse_double_n(r->s + r->m[i].rm_so, (size_t)(r->m[i].rm_eo - r->m[i].rm_so), out);
}

int rx_u64(const struct rx *r, int i, uint64_t *out)
{
	char tmp[32], *end;
	size_t n;
	unsigned long long v;

	if (i >= RX_GROUPS || r->m[i].rm_so < 0)
		return -1;
	n = (size_t)(r->m[i].rm_eo - r->m[i].rm_so);
	if (n == 0 || n >= sizeof(tmp))
		return -1;
	memcpy(tmp, r->s + r->m[i].rm_so, n);
	tmp[n] = '\0';
	if (tmp[0] < '0' || tmp[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(tmp, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

char *rx_str(const struct rx *r, int i, char *out, size_t outsz)
{
	size_t n;

	out[0] = '\0';
	if (i >= RX_GROUPS || r->m[i].rm_so < 0 || outsz == 0)
		return out;
	n = (size_t)(r->m[i].rm_eo - r->m[i].rm_so);
	if (n >= outsz)
		n = outsz - 1;
	memcpy(out, r->s + r->m[i].rm_so, n);
	out[n] = '\0';
	return out;
}
