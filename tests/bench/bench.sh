#!/bin/bash
# bench.sh - `make bench`: speed measured as ratios against a baseline taken
# in the same run on the same machine (never as timed unit tests).
#   compare: 2 kernels x 3 runs x 5,000 metrics x 5 iterations; GET
#            /api/v1/compare (JSON and LKP text) against the baseline of
#            GET /api/v1/runs/{id} (one stored run document, ~0.5 MB) and /healthz.
set -euo pipefail
cd "$(dirname "$0")/../.."
make -s build/kperfd build/bench/ingest >/dev/null

tmp=$(mktemp -d /tmp/kperf-bench.XXXXXX)
chmod 755 "$tmp"
pgport=$((57000 + $$ % 1000))
cleanup() {
	[ -n "${kpid:-}" ] && kill "$kpid" 2>/dev/null || true
	scripts/pg.sh stop "$tmp/pg" || true
	rm -rf "$tmp"
}
trap cleanup EXIT
KPERF_PG_OPTIONS="-c fsync=off -c synchronous_commit=off" scripts/pg.sh start "$tmp/pg" "$pgport"
scripts/pg.sh createdb "$tmp/pg" "$pgport" bench
export KPERF_DATABASE_URL="host=$tmp/pg/sock port=$pgport user=kperf dbname=bench"
export KPERF_BOOTSTRAP_TOKEN=bench_collector_token_01
KPERF_CONFIG=/dev/null build/kperfd --port 0 --port-file "$tmp/port" 2>"$tmp/kperfd.log" &
kpid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(cat "$tmp/port")
url=http://127.0.0.1:$port
cores=$(nproc)

metrics=${BENCH_METRICS:-5000}
echo "kperf bench on $cores cores ($(date -u +%Y-%m-%dT%H:%MZ))"
echo "compare data: 2 kernels x 3 runs x $metrics metrics x 5 iterations"
for k in 0 1; do
	sha=$(printf 'dddddddddddddddddddddddddddddddddddddd%02d' "$k")
	for r in 0 1 2; do
		awk -v k="$k" -v r="$r" -v sha="$sha" -v n="$metrics" 'BEGIN {
			srand(k * 10 + r + 1)
			printf "{\"run_id\":\"bench-%d-%d\",\"machine\":{\"name\":\"bench\"},", k, r
			printf "\"kernel\":{\"commit\":\"%s\"},\"test\":{\"suite\":\"vm-scalability\"},", sha
			printf "\"metrics\":{"
			for (i = 0; i < n; i++) {
				base = 1000 + i
				shift = (k == 1 && i % 10 == 0) ? 1.05 : 1.0
				printf "%s\"monitor.m%05d\":[", i ? "," : "", i
				for (j = 0; j < 5; j++)
					printf "%s%.3f", j ? "," : "", base * shift * (1 + (rand() - 0.5) * 0.02)
				printf "]"
			}
			printf "}}"
		}' > "$tmp/run.json"
		code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $KPERF_BOOTSTRAP_TOKEN" \
			-H 'Content-Type: application/json' --data-binary @"$tmp/run.json" "$url/api/v1/runs")
		[ "$code" = 201 ] || { echo "posting run $k-$r: HTTP $code" >&2; exit 1; }
	done
done

# median of N timings of one GET, in milliseconds
median_ms() {
	local path=$1 n=${2:-15}
	for _ in $(seq "$n"); do
		curl -s -o /dev/null -w '%{time_total}\n' "$url$path"
	done | sort -n | awk '{ t[NR] = $1 } END { printf "%.2f", t[int((NR + 1) / 2)] * 1000 }'
}

base=dddddddddddddddddddddddddddddddddddddd00
target=dddddddddddddddddddddddddddddddddddddd01
t_health=$(median_ms /healthz)
t_run=$(median_ms /api/v1/runs/bench-0-0)
t_json=$(median_ms "/api/v1/compare?base=$base&target=$target")
t_lkp=$(median_ms "/api/v1/compare?base=$base&target=$target&format=lkp")
rows=$(curl -s "$url/api/v1/compare?base=$base&target=$target" | grep -o '"verdict"' | wc -l)
shown=$(curl -s "$url/api/v1/compare?base=$base&target=$target&format=lkp" | grep -c 'monitor\.' || true)
printf '%-44s %10s %12s\n' "request" "median ms" "x baseline"
printf '%-44s %10s %12s\n' "GET /healthz" "$t_health" "-"
printf '%-44s %10s %12s\n' "GET /api/v1/runs/{id} (baseline, 25k values)" "$t_run" "1.00"
printf '%-44s %10s %12.2f\n' "GET /api/v1/compare ($rows rows, JSON)" "$t_json" "$(echo "$t_json $t_run" | awk '{ print $1 / $2 }')"
printf '%-44s %10s %12.2f\n' "GET /api/v1/compare&format=lkp ($shown rows)" "$t_lkp" "$(echo "$t_lkp $t_run" | awk '{ print $1 / $2 }')"

echo
build/bench/ingest "$url" "$KPERF_BOOTSTRAP_TOKEN" "$KPERF_DATABASE_URL" "${BENCH_INGEST_RUNS:-400}"
echo
echo "kperfd peak RSS during the benchmark: $(awk '/VmHWM/ {print $2, $3}' /proc/$kpid/status)"
