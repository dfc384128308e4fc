/*
 * fuzz_query.c - libFuzzer harness for the read API's query-string value
 * parsers (api/query.c): query_pairs ("k=v,k=v" for params=, variant= and
 * REF qualifiers), query_glob_like (metric globs into LIKE patterns) and
 * query_flag. Checks what query.h promises: pairs that print back to the
 * same set, and LIKE patterns that unescape back to the glob.
 */
#include <string.h>

#include "api/query.h"
#include "tests/fuzz/fuzz.h"

static const char key_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";

static void check_pairs(const char *s)
{
	json_t *obj = query_pairs(s);
	const char *key;
	json_t *v;
	size_t n = 0;

	if (!obj)
		return;
	json_object_foreach(obj, key, v) {
		size_t kl = strlen(key);
		const char *val = json_string_value(v);
		FUZZ_CHECK(kl >= 1 && kl <= 64 && strspn(key, key_chars) == kl, "key \"%s\"", key);
		FUZZ_CHECK(val && strlen(val) <= 256 && !strchr(val, ','), "value of %s", key);
		/* each pair is in the text as "key=value" */
		{
			struct buf b = BUF_INIT;
			buf_printf(&b, "%s=%s", key, val);
			FUZZ_CHECK(strstr(s, buf_str(&b)) != NULL, "%s not in \"%s\"", buf_str(&b), s);
			buf_release(&b);
		}
		n++;
	}
	/* an accepted text is exactly its pairs joined by ',' */
	FUZZ_CHECK(!*s ? n == 0 : n >= 1, "%zu pairs from \"%s\"", n, s);
	json_decref(obj);
}

static void check_glob(const char *s)
{
	struct buf out = BUF_INIT;
	const char *p;
	size_t i = 0;

	query_glob_like(&out, s);
	/* unescape the LIKE pattern: it must give the glob back */
	for (p = buf_str(&out); *p; p++, i++) {
		char want;
		if (*p == '\\') {
			p++;
			FUZZ_CHECK(*p == '%' || *p == '_' || *p == '\\', "stray escape in %s",
				   buf_str(&out));
			want = *p;
		} else if (*p == '%') {
			want = '*';
		} else if (*p == '_') {
			want = '?';
		} else {
			want = *p;
		}
		FUZZ_CHECK(s[i] == want, "pattern %s is not glob %s", buf_str(&out), s);
	}
	FUZZ_CHECK(s[i] == '\0', "pattern %s is shorter than glob %s", buf_str(&out), s);
	buf_release(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	int flag;

	memcpy(s, data, size);
	s[size] = '\0';
	check_pairs(s);
	check_glob(s);
	flag = query_flag(s);
	FUZZ_CHECK(flag >= -1 && flag <= 1, "flag %d", flag);
	free(s);
	return 0;
}
