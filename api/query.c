/*
 * query.c - parsers for query-string values; everything that comes from a
 * URL is untrusted and reaches SQL only as a $n parameter.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "lib/kperf_limits.h"
#include "lib/util.h"
#include "api/query.h"

void query_glob_like(struct buf *out, const char *glob)
{
	for (const char *p = glob; *p; p++) {
		if (*p == '*')
			buf_putc(out, '%');
		else if (*p == '?')
			buf_putc(out, '_');
		else {
			if (*p == '%' || *p == '_' || *p == '\\')
				buf_putc(out, '\\');
			buf_putc(out, *p);
		}
	}
}

static int key_ok(const char *k, size_t n)
{
	if (n < 1 || n > LIMIT_KEY)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)k[i]) && !strchr("._-", k[i]))
			return 0;
	return 1;
}

json_t *query_pairs(const char *s)
{
	json_t *obj = json_object();
	const char *p = s;

	while (*p) {
		size_t len = strcspn(p, ",");
		const char *eq = memchr(p, '=', len);
		char key[LIMIT_KEY + 1];
		char *val;

		if (!eq || !key_ok(p, (size_t)(eq - p)) || len - (size_t)(eq - p) - 1 > LIMIT_VALUE)
			goto bad;
		memcpy(key, p, (size_t)(eq - p));
		key[eq - p] = '\0';
		val = xstrndup(eq + 1, len - (size_t)(eq - p) - 1);
		if (json_object_get(obj, key) || json_object_set_new(obj, key, json_string(val))) {
			free(val);
			goto bad; /* repeated key, or not UTF-8 */
		}
		free(val);
		p += len;
		if (*p == ',' && !*++p)
			goto bad;
	}
	return obj;
bad:
	json_decref(obj);
	return NULL;
}

int query_flag(const char *s)
{
	if (!s || !strcmp(s, "0") || !strcmp(s, "false"))
		return 0;
	if (!strcmp(s, "1") || !strcmp(s, "true"))
		return 1;
	return -1;
}
