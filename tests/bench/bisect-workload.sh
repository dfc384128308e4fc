#!/bin/sh
# bisect-workload.sh KERNEL_FILE FIRST_BAD - the workload of the bisection
# bench: reads the kernel the hook recorded (its sha is "b1" and the commit's
# number), prints LKP stats JSON with kbisect.throughput 1000, or 900 from
# commit FIRST_BAD on, give or take 3.
set -eu
read -r sha rest < "$1"
n=$(echo "$sha" | sed 's/^b1//; s/^0*//')
tput=1000
[ "${n:-0}" -ge "$2" ] && tput=900
printf '{"kbisect.throughput": %s}\n' "$((tput + $$ % 7 - 3))"
