#!/bin/sh
# record-kernel.sh FILE SHA RELEASE - the kernel hook of the agent's tests
# (kperf-collect agent --kernel-hook "sh record-kernel.sh FILE"): where a
# lab's hook builds, installs and boots kernel SHA, this one records
# "SHA RELEASE" in FILE. `--running-cmd "cat FILE"` then reports it as the
# running kernel, and tests/collect/workloads/kernel-bench.sh reads it. A
# test that plays the reboot names a FILE of its own and moves it into place.
set -eu
[ $# -eq 3 ] || { echo "usage: record-kernel.sh FILE SHA RELEASE" >&2; exit 64; }
printf '%s %s\n' "$2" "$3" > "$1.tmp"
mv "$1.tmp" "$1"
echo "record-kernel: kernel $2 ($3) recorded in $1"
