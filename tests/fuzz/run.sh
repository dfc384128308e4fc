#!/bin/sh
# run.sh - one libFuzzer harness for a while (fuzz.mk's fuzz-run-NAME):
#   run.sh NAME BINARY CORPUS WORKDIR SECONDS MAX_LEN
# Fuzzes a copy of CORPUS in WORKDIR (the committed seeds never grow); prints
# a summary line, or on a crash, leak, timeout or out-of-memory the harness,
# its saved input and the sanitizer's report, and exits 1.
set -eu

name=$1 bin=$2 corpus=$3 work=$4 seconds=$5 max_len=$6
# UBSan's reports carry a stack only when asked (scripts/test.sh asks too).
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

rm -rf "$work"
mkdir -p "$work/corpus" "$work/crashes"
if [ -d "$corpus" ]; then
	cp "$corpus"/* "$work/corpus/" 2>/dev/null || true
fi
seeds=$(ls "$work/corpus" | wc -l)

status=0
"$bin" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 -artifact_prefix="$work/crashes/" "$work/corpus" \
	> "$work/log" 2>&1 || status=$?

stat() { sed -n "s/^stat::$1: *//p" "$work/log" | tail -n 1; }
if [ "$status" = 0 ]; then
	printf 'fuzz %-26s %9s runs %7s exec/s  corpus %3s -> %4s inputs  peak %s MB\n' \
		"$name" "$(stat number_of_executed_units)" "$(stat average_exec_per_sec)" \
		"$seeds" "$(ls "$work/corpus" | wc -l)" "$(stat peak_rss_mb)"
	exit 0
fi

echo "fuzz $name: FOUND A CRASH (exit $status)" >&2
for f in "$work"/crashes/*; do
	[ -f "$f" ] || continue
	echo "fuzz $name: input saved as $f; replay with: $bin $f" >&2
	echo "fuzz $name: input (base64): $(head -c 512 "$f" | base64 -w 0)" >&2
done
# The sanitizer's or libFuzzer's report, from its first line.
sed -n '/^==[0-9]*==\|^fuzz check failed\|runtime error\|^ALARM\|out-of-memory\|deadly signal/,$p' \
	"$work/log" | head -n 60 >&2
exit 1
