/*
 * regress_claim.h - the decision queue's claim: which ready entries a
 * worker takes as one batch (regress.c decides them).
 */
#ifndef KPERF_REGRESS_CLAIM_H
#define KPERF_REGRESS_CLAIM_H

#include <libpq-fe.h>

/*
 * Claim a batch in a transaction of its own, one claim at a time (an
 * advisory lock, across kperfd processes too): two claims at once would
 * pick the same first groups and could split one between them. Rows:
 * commit_id, machine_id, test_id, variant_id, version, key group id; the
 * caller PQclears them. NULL on an error (logged).
 */
PGresult *regress_claim(PGconn *c);

#endif
