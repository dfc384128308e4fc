/*
 * fuzz_ingest_commits.c - libFuzzer harness for the ingest decoder's commit
 * path (lib/ingest_decode.c, ingest_decode_commits, POST /api/v1/commits):
 * described commits or a 400 with the contract's error code, never a crash.
 */
#include <string.h>

#include "lib/ingest_decode.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ingest in;
	struct decode_error err;

	memset(&in, 0, sizeof(in));
	memset(&err, 0, sizeof(err));
	if (ingest_decode_commits((const char *)data, size, &in, &err)) {
		FUZZ_CHECK(err.status == 400, "status %d", err.status);
		FUZZ_CHECK(err.code && (!strcmp(err.code, "malformed") || !strcmp(err.code, "invalid")),
			   "code %s", err.code ? err.code : "(null)");
		FUZZ_CHECK(err.message[0], "an error needs a message");
	} else {
		FUZZ_CHECK(in.ncommits >= 1 && in.ncommits <= 10000, "%zu commits", in.ncommits);
		for (size_t i = 0; i < in.ncommits; i++)
			FUZZ_CHECK(in.commits[i] && in.commits[i][0] == '{', "commit %zu: %s", i,
				   in.commits[i] ? in.commits[i] : "(null)");
	}
	ingest_release(&in);
	return 0;
}
