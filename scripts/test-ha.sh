#!/bin/bash
# test-ha.sh - `make test-ha`: kperfd on real Patroni clusters (tests/ha),
# one test at a time (each brings up its own etcd and two PostgreSQL nodes on
# ports of its own), then the measured times of each failover.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
jobs=$(nproc 2>/dev/null || echo 2)
make -j"$jobs" build/kperfd build/tests/kperf-ha-tests

tmp=$(mktemp -d /tmp/kperf-ha.XXXXXX)
chmod 755 "$tmp"
cleanup() {
	pkill -f -- "--port-file $tmp/" 2>/dev/null || true
	for env in "$tmp"/*/env; do
		[ -f "$env" ] && { tests/ha/cluster.sh down "$(dirname "$env")" || true; }
	done
	for d in "$tmp"/*/; do
		[ -f "$d/data/PG_VERSION" ] && { scripts/pg.sh stop "$d" || true; }
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
export KPERF_TEST_TMP="$tmp"

status=0
KPERF_BIN=build/kperfd build/tests/kperf-ha-tests --jobs 1 "$@" 2>&1 | tee "$tmp/ha.out" || status=1
[ "${PIPESTATUS[0]}" = 0 ] || status=1
echo "== measured (README, Running on Patroni)"
grep -h '^ha: ' "$tmp"/*/times 2>/dev/null || true
grep -E '^\[(FAIL|----)\]|CRASH|Timed out|signal' "$tmp/ha.out" | grep -v -E '^\[----\] *$' | tail -n 20 || true
echo "make test-ha: $(( $(date +%s) - start )) s, $([ $status = 0 ] && echo PASS || echo FAIL)"
exit $status
