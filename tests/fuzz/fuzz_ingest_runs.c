/*
 * fuzz_ingest_runs.c - libFuzzer harness for the ingest decoder's run path
 * (lib/ingest_decode.c, ingest_decode_runs): any body bytes must give either
 * validated runs or a 400 with the contract's error code, never a crash or
 * a leak (ASan, UBSan and LeakSanitizer watch).
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
	if (ingest_decode_runs((const char *)data, size, &in, &err)) {
		FUZZ_CHECK(err.status == 400, "status %d", err.status);
		FUZZ_CHECK(err.code && (!strcmp(err.code, "malformed") || !strcmp(err.code, "invalid")),
			   "code %s", err.code ? err.code : "(null)");
		FUZZ_CHECK(err.message[0], "an error needs a message");
		FUZZ_CHECK(!in.nruns && !in.runs, "a failed decode leaves no runs");
	} else {
		FUZZ_CHECK(in.nruns >= 1, "no runs");
		for (size_t i = 0; i < in.nruns; i++) {
			const struct run_in *r = &in.runs[i];
			FUZZ_CHECK(r->run_id && r->run_id[0], "run %zu: no run_id", i);
			FUZZ_CHECK(strlen(r->run_id) <= 128, "run %zu: run_id too long", i);
			FUZZ_CHECK(r->doc && r->machine && r->commit && r->params && r->variant,
				   "run %zu: a part is missing", i);
			FUZZ_CHECK(r->suite && r->suite[0], "run %zu: no suite", i);
			FUZZ_CHECK(r->nvalues >= 1 && r->nvalues <= 100000, "run %zu: %zu values", i,
				   r->nvalues);
		}
	}
	ingest_release(&in);
	return 0;
}
