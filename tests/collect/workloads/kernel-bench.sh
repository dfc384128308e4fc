#!/bin/sh
# kernel-bench.sh KERNEL_FILE SECONDS [SLOW_SHA...] - the workload of the
# agent's tests: works SECONDS, appends the kernel it ran on (the first word
# of KERNEL_FILE, what record-kernel.sh wrote) to KERNEL_FILE.log, and prints
# LKP stats JSON (--format lkp-stats-json): kbench.throughput is 1000, or
# 900 on a kernel listed as SLOW_SHA (a regression to find), give or take 3.
set -eu
[ $# -ge 2 ] || { echo "usage: kernel-bench.sh KERNEL_FILE SECONDS [SLOW_SHA...]" >&2; exit 64; }
file=$1 seconds=$2
shift 2
read -r sha rest < "$file"
sleep "$seconds"
tput=1000
for slow in "$@"; do
	[ "$slow" = "$sha" ] && tput=900
done
# run-to-run noise of +-0.3% (from the shell's pid), far below the 10% step
tput=$((tput + $$ % 7 - 3))
echo "$sha" >> "$file.log"
printf '{"kbench.throughput": %s, "kbench.seconds": %s}\n' "$tput" "$seconds"
