#!/bin/bash
# robot.sh - the robot's bench: a v2 series of 3 patches injected into a
# real public-inbox, polled, applied by an agent with b4, measured, its
# regression bisected to patch 2 and the reply sent (the end-to-end test
# robot/v2_*, tests/collect/test_robot.c): seconds from the mails' arrival
# to each step, and each step's share of the whole loop measured in the
# same run.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(scripts/check.sh 'robot/v2_*' 2>&1) || { echo "$out" | tail -40 >&2; exit 1; }
line=$(echo "$out" | grep -o 'robot steps: .*' | tail -1)
[ -n "$line" ] || { echo "robot bench: no steps line" >&2; exit 1; }
echo "$line" | awk '{
	n = 0
	for (i = 3; i < NF; i += 2) { name[++n] = $i; t[n] = $(i + 1) }
	total = t[n]; prev = 0
	printf "robot: series arrival to reply sent: %.2f s\n", total
	for (i = 1; i <= n; i++) {
		printf "  %-9s at %6.2f s  (+%5.2f s, %4.1f%% of the loop)\n", name[i], t[i],
			t[i] - prev, (total > 0 ? 100 * (t[i] - prev) / total : 0)
		prev = t[i]
	}
}'
