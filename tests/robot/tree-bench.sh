#!/bin/sh
# tree-bench.sh TREE KERNEL_FILE - the robot tests' workload, whose speed
# depends on what the applied tree holds: kbench.throughput is 1000 less the
# number in TREE/mm/lru_cost (0 on the base, 400 once patch 2 of the slow
# series is applied), give or take 3. Fails when the running kernel (the
# first word of KERNEL_FILE, what the kernel hook recorded) is not the
# tree's HEAD: a lab measures the kernel it built from that tree.
set -eu
[ $# -eq 2 ] || { echo "usage: tree-bench.sh TREE KERNEL_FILE" >&2; exit 64; }
tree=$1
read -r running rest < "$2"
head=$(git -C "$tree" rev-parse HEAD)
[ "$running" = "$head" ] || { echo "running $running, but the tree is at $head" >&2; exit 1; }
cost=$(cat "$tree/mm/lru_cost" 2>/dev/null || echo 0)
# run-to-run noise of +-0.3% (from the shell's pid), far below the step
tput=$((1000 - cost + $$ % 7 - 3))
printf '{"kbench.throughput": %s}\n' "$tput"
