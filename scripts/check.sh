#!/bin/bash
# check.sh - `make check T=PATTERN`: the fast way in. Builds the plain tree
# once, starts a throwaway PostgreSQL cluster and runs the tests whose
# Criterion name (suite/test) matches the glob PATTERN, in both test
# binaries, without ASan, fuzzers or the browser. No T: every test, once.
set -euo pipefail
cd "$(dirname "$0")/.."
pattern=${1:-*}
case $pattern in *'*'* | *'?'* | *'['*) ;; *) pattern="*$pattern*" ;; esac

jobs=$(nproc 2>/dev/null || echo 2)
make -s -j"$jobs" all

tmp=$(mktemp -d /tmp/kperf-check.XXXXXX)
chmod 755 "$tmp"
pgport=$((55000 + $$ % 1000))
cleanup() {
	pkill -f -- "--port-file $tmp/" 2>/dev/null || true
	for d in "$tmp"/pg/ "$tmp"/*/; do
		[ -f "$d/data/PG_VERSION" ] && { scripts/pg.sh stop "$d" || true; }
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
KPERF_PG_OPTIONS="-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
	scripts/pg.sh start "$tmp/pg" "$pgport" >/dev/null
export KPERF_TEST_PG="host=$tmp/pg/sock port=$pgport user=kperf"
export KPERF_TEST_TMP="$tmp"
# every kperfd of the tests starts on a copy of one migrated database
scripts/pg.sh createdb "$tmp/pg" "$pgport" kperf_template
KPERF_DATABASE_URL="$KPERF_TEST_PG dbname=kperf_template" KPERF_CONFIG=/dev/null \
	build/kperfd migrate >/dev/null 2>"$tmp/template.log" || { cat "$tmp/template.log" >&2; exit 1; }
export KPERF_TEST_TEMPLATE=kperf_template
export KPERF_BIN=build/kperfd KPERF_COLLECT_BIN=build/kperf-collect

status=0 ran=0
for t in build/tests/kperf-tests build/tests/collect-tests; do
	[ -x "$t" ] || continue
	# --list prints "suite: N tests", then a "├── name" line per test
	n=$("$t" --list 2>/dev/null | awk '/^[^ ├└│]/{s=$1; sub(":$","",s)} /(├|└)── /{print s "/" $NF}' |
		while read -r name; do [[ $name == $pattern ]] && echo "$name" || true; done | wc -l)
	[ "$n" -gt 0 ] || continue
	ran=1
	"$t" --jobs "$jobs" --filter "$pattern" || status=1
done
[ $ran = 1 ] || { echo "check.sh: no test matches '$pattern' (names are suite/test)" >&2; exit 1; }
exit $status
