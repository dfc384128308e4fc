/*
 * fuzz.h - what the libFuzzer harnesses in tests/fuzz/ share: the entry
 * point's prototype and FUZZ_CHECK, which turns a broken promise of the code
 * under test (a contract its header states) into a crash libFuzzer records.
 */
#ifndef KPERF_FUZZ_H
#define KPERF_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Called by libFuzzer once per input; returns 0 (nonzero is reserved). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort with the failed condition and a message when cond is false. */
#define FUZZ_CHECK(cond, ...)                                                             \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "fuzz check failed: %s: ", #cond);                 \
			fprintf(stderr, __VA_ARGS__);                                      \
			fputc('\n', stderr);                                               \
			abort();                                                           \
		}                                                                          \
	} while (0)

#endif
