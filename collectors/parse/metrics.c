/*
 * metrics.c - building the "metrics" object of a run: cleaned names and
 * appended iterations. Parsers and counter snapshots both write through here
 * so every name the collector sends passes the server's name rule.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "collectors/base/cutil.h"
#include "collectors/parse/metrics.h"

char *metric_name_clean(char *name)
{
	size_t o = 0;
	int last_bad = 0;

	for (size_t i = 0; name[i]; i++) {
		unsigned char ch = (unsigned char)name[i];
		if (ch > 0x20 && ch < 0x7f) {
			name[o++] = (char)ch;
			last_bad = 0;
		} else if (!last_bad) {
			name[o++] = '_';
			last_bad = 1;
		}
	}
	name[o < METRIC_NAME_MAX ? o : METRIC_NAME_MAX] = '\0';
	return name;
}

int metrics_add(json_t *metrics, const char *name, double v)
{
	char *n;
	json_t *arr;

	if (!isfinite(v))
		return -1;
	n = metric_name_clean(xstrdup(name));
	if (!*n) {
		free(n);
		return -1;
	}
	arr = json_object_get(metrics, n);
	if (!json_is_array(arr)) {
		arr = json_array();
		json_object_set_new(metrics, n, arr);
	}
	json_array_append_new(arr, json_real(v));
	free(n);
	return 0;
}

int metrics_addf(json_t *metrics, double v, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;
	char tmp[METRIC_NAME_MAX * 2];
	int rc;

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	buf_puts(&b, tmp);
	rc = metrics_add(metrics, buf_str(&b), v);
	buf_release(&b);
	return rc;
}

void metrics_merge(json_t *dst, const json_t *src)
{
	const char *key;
	json_t *val;
	size_t i;
	json_t *x;

	json_object_foreach((json_t *)src, key, val) {
		if (json_is_number(val)) {
			metrics_add(dst, key, json_number_value(val));
			continue;
		}
		json_array_foreach(val, i, x)
			metrics_add(dst, key, json_number_value(x));
	}
}

size_t metrics_nvalues(const json_t *metrics)
{
	const char *key;
	json_t *val;
	size_t n = 0;

	json_object_foreach((json_t *)metrics, key, val)
		n += json_is_array(val) ? json_array_size(val) : 1;
	return n;
}
