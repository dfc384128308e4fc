#!/bin/bash
# bisect.sh BUILD - issue 19's bench: a regression between the two ends of a
# 1,024-commit first-parent chain (3 runs each), bisected by kperfd with 4
# agents of one machine on loopback (kperf-collect agent, the test hook
# switching kernels by writing a file): the steps it takes (at most 11) and
# the jobs' overhead per step, from the job table: queued -> claimed (the
# claim's long poll), claimed -> done (hook, runs, posts), done -> the next
# job queued (decisions, the bisection's pass).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
commits=${BISECT_COMMITS:-1024}
first_bad=${BISECT_FIRST_BAD:-700}
tmp=$(mktemp -d /tmp/kperf-bisect.XXXXXX)
chmod 755 "$tmp"
pgport=$((58000 + $$ % 1000))
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	scripts/pg.sh stop "$tmp/pg" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
KPERF_PG_OPTIONS="-c fsync=off -c synchronous_commit=off" scripts/pg.sh start "$tmp/pg" "$pgport" >/dev/null
scripts/pg.sh createdb "$tmp/pg" "$pgport" bisect
db="host=$tmp/pg/sock port=$pgport user=kperf dbname=bisect"
tok=bisect_bench_token_0001
KPERF_DATABASE_URL="$db" KPERF_BOOTSTRAP_TOKEN=$tok KPERF_CONFIG=/dev/null \
	KPERF_CONFIRM_RUNS=3 KPERF_ANCESTOR_DEPTH=2000 "$build/kperfd" --port 0 --port-file "$tmp/port" 2>"$tmp/kperfd.log" &
pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
url=http://127.0.0.1:$(cat "$tmp/port")
sha() { printf 'b1%038d' "$1"; }

# the chain, posted as kperf-collect commits would
awk -v n="$commits" 'BEGIN { printf "["; for (i = 0; i < n; i++) {
	printf "%s{\"sha\":\"b1%038d\"", i ? "," : "", i
	if (i) printf ",\"parent\":\"b1%038d\"", i - 1
	printf ",\"subject\":\"mm: change %d\",\"release\":\"6.1.0-b%d\"}", i, i }
	printf "]" }' > "$tmp/commits.json"
curl -sf -o /dev/null -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' \
	--data-binary @"$tmp/commits.json" "$url/api/v1/commits"

cwd=$PWD
for a in 1 2 3 4; do
	d=$tmp/agent$a
	mkdir -p "$d"
	echo "$(sha 0) 6.1.0-b0" > "$d/kernel"
	cat > "$d/catalogue" <<CAT
[kbisect]
suite = kbisect
params = case=step
format = lkp-stats-json
iterations = 3
command = /bin/sh '$cwd/tests/bench/bisect-workload.sh' '$d/kernel' $first_bad
CAT
	KPERF_COLLECT_CONFIG=/dev/null "$build/kperf-collect" --server "$url" --token $tok \
		--machine bench-bis --spool "$d/spool" agent --catalogue "$d/catalogue" \
		--state "$d/state" --kernel-hook "/bin/sh '$cwd/tests/collect/hooks/record-kernel.sh' '$d/kernel'" \
		--running-cmd "cat '$d/kernel'" --idle-exit 300 >"$d/log" 2>&1 &
	pids+=($!)
done
# the ends: 3 runs each, as kperf-collect run posts them on the machine
for i in 0 $((commits - 1)); do
	echo "$(sha "$i") 6.1.0-b$i" > "$tmp/agent1/kernel.run"
	for r in 1 2 3; do
		KPERF_COLLECT_CONFIG=/dev/null "$build/kperf-collect" --server "$url" --token $tok \
			--machine bench-bis --spool "$tmp/spool" run --quiet --suite kbisect \
			--param case=step --iterations 3 --commit "$(sha "$i")" --format lkp-stats-json \
			-- /bin/sh tests/bench/bisect-workload.sh "$tmp/agent1/kernel.run" "$first_bad" \
			>/dev/null 2>>"$tmp/run.log"
	done
done
t0=$(date +%s.%N)
state=running
for _ in $(seq 1800); do
	state=$(curl -sf "$url/api/v1/bisections?machine=bench-bis" | sed -n 's/.*"state": *"\([a-z]*\)".*/\1/p' | head -n 1)
	[ -n "$state" ] && [ "$state" != running ] && break
	sleep 0.2
done
t1=$(date +%s.%N)
q() { psql -X -qAt "$db" -c "$1"; }
steps=$(q "SELECT count(*) FROM bisection_step")
first=$(q "SELECT c.subject FROM bisection b JOIN commits c ON c.id = b.first_bad_commit_id")
echo "bisection of $commits commits (first bad: change $first_bad) with 4 agents: $state in $steps steps" \
	"($(echo "$t0 $t1" | awk '{ printf "%.1f", $2 - $1 }') s), first bad: ${first:-none}"
q "SELECT 'per step, mean s: queued -> claimed ' || round(avg(extract(epoch FROM claimed_at - created_at))::numeric, 2)
	|| ', claimed -> done (hook, 3 runs of 3 iterations, posts) '
	|| round(avg(extract(epoch FROM ended_at - claimed_at))::numeric, 2)
	|| ', done -> next step queued (decisions, judging) '
	|| coalesce(round(avg(extract(epoch FROM nxt - ended_at))::numeric, 2)::text, '-')
	FROM (SELECT j.*, lead(created_at) OVER (ORDER BY id) AS nxt FROM job j WHERE bisection_id IS NOT NULL) x"
q "SELECT 'jobs: ' || count(*) || ', claimed more than once: ' || count(*) FILTER (WHERE attempts > 0)
	|| ', commits measured: ' || (SELECT count(DISTINCT commit_id) FROM run) FROM job"
[ "$state" = found ] && [ "$first" = "mm: change $first_bad" ] && [ "$steps" -le 11 ]
