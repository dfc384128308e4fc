/*
 * throttle.h - slowing down token guessing: an address that presents bad or
 * missing tokens too often is answered 429 for a while. The address is the
 * peer's, or X-Forwarded-For's when the peer is a configured proxy.
 */
#ifndef KPERF_THROTTLE_H
#define KPERF_THROTTLE_H

/* Seconds the address must still wait (0: not blocked). */
int throttle_blocked(const char *addr);

/* Count an authentication failure of addr. */
void throttle_fail(const char *addr);

#endif
