#!/bin/bash
# test.sh - `make test`: build (plain and ASan+UBSan), start a throwaway
# PostgreSQL cluster, run the whole suite against real kperfd processes with
# each build, and end with the runner's summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)

jobs=$(nproc 2>/dev/null || echo 2)
make -j"$jobs" all
make -j"$jobs" BUILD=build-asan SANITIZE=address,undefined build-asan/kperfd build-asan/tests/kperf-tests
[ -f collectors/collect.mk ] && make -j"$jobs" BUILD=build-asan SANITIZE=address,undefined build-asan/kperf-collect build-asan/tests/collect-tests

tmp=$(mktemp -d /tmp/kperf-test.XXXXXX)
chmod 755 "$tmp"
pgport=$((55000 + $$ % 1000))
cleanup() {
	pkill -f -- "--port-file $tmp/" 2>/dev/null || true
	scripts/pg.sh stop "$tmp/pg" || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# Durability is not under test here: trade it for speed.
KPERF_PG_OPTIONS="-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
	scripts/pg.sh start "$tmp/pg" "$pgport"
export KPERF_TEST_PG="host=$tmp/pg/sock port=$pgport user=kperf"
export KPERF_TEST_TMP="$tmp"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

status=0
echo "== tests (build/)"
KPERF_BIN=build/kperfd build/tests/kperf-tests --jobs "$jobs" "$@" || status=1
if [ -x build/tests/collect-tests ]; then
	echo "== collector tests (build/)"
	KPERF_BIN=build/kperfd KPERF_COLLECT_BIN=build/kperf-collect build/tests/collect-tests --jobs "$jobs" "$@" || status=1
	echo "== collector tests under ASan + UBSan (build-asan/)"
	KPERF_BIN=build-asan/kperfd KPERF_COLLECT_BIN=build-asan/kperf-collect build-asan/tests/collect-tests --jobs "$jobs" "$@" || status=1
fi
echo "== tests under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)"
KPERF_BIN=build-asan/kperfd build-asan/tests/kperf-tests --jobs "$jobs" "$@" 2>&1 | tee "$tmp/asan.out" || status=1
[ "${PIPESTATUS[0]}" = 0 ] || status=1
if grep -l -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$tmp"/*/kperfd.log 2>/dev/null; then
	for f in $(grep -l -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$tmp"/*/kperfd.log); do
		grep -A 30 -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$f" | head -60
	done
	echo "sanitizer reports in kperfd logs above" >&2
	status=1
fi
echo "make test: $(( $(date +%s) - start )) s, $([ $status = 0 ] && echo PASS || echo FAIL)"
grep 'Synthesis:' "$tmp/asan.out" | tail -n 1
exit $status
