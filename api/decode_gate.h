/*
 * decode_gate.h - how many request bodies are decoded at once. A decoded body
 * costs ~60 bytes per JSON value, so concurrent requests are admitted while
 * the values they may hold (bytes / 2, at most LIMIT_REQUEST_VALUES each) stay
 * within LIMIT_DECODE_VALUES; the others wait their turn.
 */
#ifndef KPERF_DECODE_GATE_H
#define KPERF_DECODE_GATE_H

#include <stddef.h>

/* Wait until a body of len bytes may be decoded; returns the weight to give back. */
size_t decode_gate_enter(size_t len);

/* Give back what decode_gate_enter took, once the decoded tree is released. */
void decode_gate_leave(size_t weight);

#endif
