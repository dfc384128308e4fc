#!/bin/bash
# slowest.sh N LABEL=FILE.xml...: the N slowest tests across Criterion XML
# reports, "seconds  label  suite/test", slowest first.
set -euo pipefail
n=$1
shift
for arg in "$@"; do
	label=${arg%%=*} f=${arg#*=}
	[ -f "$f" ] || continue
	awk -v label="$label" '
		/<testsuite / { match($0, /name="[^"]*"/); suite = substr($0, RSTART + 6, RLENGTH - 7) }
		/<testcase / {
			match($0, /name="[^"]*"/); name = substr($0, RSTART + 6, RLENGTH - 7)
			match($0, /status="[^"]*"/); st = substr($0, RSTART + 8, RLENGTH - 9)
			match($0, /time="[^"]*"/); t = substr($0, RSTART + 6, RLENGTH - 7)
			if (st != "SKIPPED") printf "%8.1f  %-12s %s/%s\n", t, label, suite, name
		}' "$f"
done | sort -rn | head -n "$n"
