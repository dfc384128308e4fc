/*
 * jsonw.h - JSON text from jansson values, with numbers printed in their
 * shortest round-trip form (13.11, not 13.109999999999999). Used for stored
 * documents and every JSON answer.
 */
#ifndef KPERF_JSONW_H
#define KPERF_JSONW_H

#include <jansson.h>

#include "lib/buf.h"

/* Append v as compact JSON; object keys in insertion order, or sorted when sort is set. */
void jsonw_value(struct buf *b, const json_t *v, int sort);
/* Append a JSON string literal for the UTF-8 text s of n bytes. */
void jsonw_string(struct buf *b, const char *s, size_t n);
/* Length of the valid UTF-8 sequence at s (n >= 1 bytes left), 0 when invalid
 * (overlong forms, surrogates, past U+10FFFF). */
size_t jsonw_utf8_len(const unsigned char *s, size_t n);
/*
 * Append the shortest of printf's %.15g, %.16g and %.17g that reads back as
 * d, or d as an integer when it is whole and below 1e17 in magnitude (-0 is
 * 0). d must be finite.
 */
void jsonw_double(struct buf *b, double d);
/* Append d, or null when it is NaN or infinite (no value in JSON). */
void jsonw_number(struct buf *b, double d);
/* Append the NUL-terminated s as a JSON string, or null when s is NULL. */
void jsonw_str(struct buf *b, const char *s);
/* Return v as a malloc'd compact JSON string; the caller frees it. */
char *jsonw_dump(const json_t *v, int sort);

#endif
