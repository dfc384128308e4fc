#!/bin/bash
# bench.sh - `make bench`: speed measured as ratios against a baseline taken
# in the same run on the same machine (never as timed unit tests).
#   compare: 2 kernels x 3 runs x 5,000 metrics x 5 iterations; GET
#            /api/v1/compare (JSON and LKP text) against the baseline of
#            GET /api/v1/runs/{id} (one stored run document, ~0.5 MB) and /healthz.
#   ingest:  1, 4 and 16 clients, 3,000 runs each (BENCH_INGEST_RUNS), against
#            COPY of the same rows, in 5 rounds of a COPY then the posts; the
#            median of the rounds' ratios (ingest.c).
#   scale:   ingest and a 2,000-point trend at ~3 M stored samples, and again
#            at 50 M (BENCH_SAMPLES) after loading history into old partitions.
#   reads:   10,000 commits x 200 metrics x 3 machines: p50/p99 of trend and
#            compare, computed (each request a different answer) and repeated
#            (from the read cache), and of regressions; a static asset against a minimal
#            libmicrohttpd responder (minimal.c) with the same load (load.c).
#   memory:  peak RSS, RSS over 100,000 requests, and 16 clients posting
#            4 MiB bodies.
#   decisions: a burst of single-metric runs (600 key groups x 9 commits, 3-5
#            runs each) posted as a bulk import: the time from its last POST
#            to its last decision against its ingest time, and POST to stored
#            decision of fresh commits posted alone meanwhile (burst.c).
# BUILD names the build directory (make passes its own); BENCH_ONLY=decisions
# runs the decisions part alone (about a minute), BENCH_ONLY=bisect that and
# the bisection bench, BENCH_ONLY=robot those and the robot's loop.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD:-build}
make -s BUILD="$build" "$build/kperfd" "$build/bench/ingest" "$build/bench/load" \
	"$build/bench/minimal" "$build/bench/burst" >/dev/null

tmp=$(mktemp -d /tmp/kperf-bench.XXXXXX)
chmod 755 "$tmp"
pgport=$((57000 + $$ % 1000))
cleanup() {
	[ -n "${kpid:-}" ] && kill "$kpid" 2>/dev/null || true
	[ -n "${mpid:-}" ] && kill "$mpid" 2>/dev/null || true
	scripts/pg.sh stop "$tmp/pg" || true
	rm -rf "$tmp"
}
trap cleanup EXIT
KPERF_PG_OPTIONS="-c fsync=off -c synchronous_commit=off -c max_wal_size=4GB -c shared_buffers=512MB" scripts/pg.sh start "$tmp/pg" "$pgport"
scripts/pg.sh createdb "$tmp/pg" "$pgport" bench
export KPERF_DATABASE_URL="host=$tmp/pg/sock port=$pgport user=kperf dbname=bench"
export KPERF_BOOTSTRAP_TOKEN=bench_collector_token_01
KPERF_CONFIG=/dev/null "$build/kperfd" --port 0 --port-file "$tmp/port" 2>"$tmp/kperfd.log" &
kpid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(cat "$tmp/port")
url=http://127.0.0.1:$port
cores=$(nproc)

echo "kperf bench on $cores cores ($(date -u +%Y-%m-%dT%H:%MZ))"
# ---- decisions first, on a fresh database, as a new lab's first import
# (BENCH_BURST="GROUPS COMMITS" scales it)
"$build/bench/burst" "$url" "$KPERF_BOOTSTRAP_TOKEN" "$KPERF_DATABASE_URL" ${BENCH_BURST:-600 9}
[ "${BENCH_ONLY:-}" = decisions ] && exit 0
# ---- the lab loop: a 1,024-commit range bisected by 4 agents (bisect.sh)
tests/bench/bisect.sh "$build"
[ "${BENCH_ONLY:-}" = bisect ] && exit 0
# ---- the robot: a posted series from the inbox to its reply (robot.sh)
tests/bench/robot.sh
[ "${BENCH_ONLY:-}" = robot ] && exit 0
echo

metrics=${BENCH_METRICS:-5000}
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

# median of N timings of one GET, in milliseconds; every request differs in
# an ignored parameter (_=i), so kperfd's read cache never answers: this
# table is the cost of computing each answer
median_ms() {
	local path=$1 n=${2:-15} sep=?
	case $path in *\?*) sep='&' ;; esac
	for i in $(seq "$n"); do
		curl -s -o /dev/null -w '%{time_total}\n' "$url$path${sep}_=$i"
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

hwm_compare=$(awk '/VmHWM/ { print $2 }' /proc/$kpid/status)
echo
"$build/bench/ingest" "$url" "$KPERF_BOOTSTRAP_TOKEN" "$KPERF_DATABASE_URL" "${BENCH_INGEST_RUNS:-3000}"
hwm_ingest=$(awk '/VmHWM/ { print $2 }' /proc/$kpid/status)

# ---- scale: the same ingest and trend at ~3 M and at 50 M stored samples
psql_q() { psql -X -q -v ON_ERROR_STOP=1 "$KPERF_DATABASE_URL" "$@"; }
runs_sql() { # prefix machines first last every configs metrics iterations age
	psql_q -v prefix="$1" -v nmachines="$2" -v first="$3" -v last="$4" -v every="$5" \
		-v nconfigs="$6" -v nmetrics="$7" -v iters="$8" -v age="$9" -f tests/bench/sql/runs.sql
}
samples() {
	psql_q -At -c "ANALYZE sample" -c "SELECT sum(c.reltuples)::bigint FROM pg_inherits i
		JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'sample'::regclass"
}
load() { "$build/bench/load" "$@"; }
# p50 and p99 (ms) of n GETs of a path by 1 client: "p50 p99"
lat() { load -n "${2:-200}" "$url$1" | awk '{ print $3, $4 }'; }
# the same with "{i}" in the path made different in every request (load -k),
# so each one is computed: no answer comes from the read cache
lat_cold() { load -n "${2:-200}" -k "${2:-200}" "$url$1" | awk '{ print $3, $4 }'; }
trend_s="/api/v1/trend?machine=scale-0&suite=will-it-scale&params=nr_task=1&metric=wis.m000"
scale_row() { # label
	local ingest trend
	ingest=$(BENCH_TAG="$1" "$build/bench/ingest" "$url" "$KPERF_BOOTSTRAP_TOKEN" "$KPERF_DATABASE_URL" 800 4 |
		awk '/4 clients/ { print $(NF - 2) }')
	psql_q -c CHECKPOINT >/dev/null # the ingest's pages written out first, at both sizes
	trend=$(lat_cold "$trend_s&_={i}" 200)
	printf '%-28s %14s %16s %18s\n' "$1" "$(samples)" "$ingest" "$trend"
	echo "$ingest $trend" > "$tmp/scale-$1"
}
psql_q -f tests/bench/sql/commits.sql >/dev/null
t0=$(date +%s)
runs_sql scale 1 1 2000 1 1 20 3 '0 hours'
echo
echo "scale: the same work at two database sizes (samples partitioned by month)"
printf '%-28s %14s %16s %18s\n' "stored samples" "count" "ingest samples/s" "trend p50 p99 ms"
scale_row small
runs_sql read 3 1 10000 1 5 200 1 '0 hours'
psql_q -f tests/bench/sql/decisions.sql
have=$(samples)
want=${BENCH_SAMPLES:-50000000}
if [ "$have" -lt "$want" ]; then # the rest as older history: 5 machines, 1,000 samples per run
	per=$(( (want - have + 4999) / 5000 ))
	runs_sql fill 5 1 "$per" 1 5 200 5 '2 years'
fi
psql_q -c "VACUUM ANALYZE" >/dev/null
echo "(history loaded in $(( $(date +%s) - t0 )) s)"
scale_row large
read -r i1 p1 q1 < "$tmp/scale-small"
read -r i2 p2 q2 < "$tmp/scale-large"
printf '%-28s %14s %16.2f %18s\n' "large / small" "" "$(echo "$i2 $i1" | awk '{ print $1 / $2 }')" \
	"$(echo "$p2 $p1 $q2 $q1" | awk '{ printf "%.2f %.2f", $1 / $2, $3 / $4 }')"

hwm_scale=$(awk '/VmHWM/ { print $2 }' /proc/$kpid/status)

# The load's dirty pages are written out before the reads, so that the
# checkpointer does not write them during a measured request. The decision
# queue's length is printed: 0 once the worker has decided the ingest's
# groups (before the claim fix in server/regress.c, 16-22 stayed claimed).
settle() {
	psql_q -c CHECKPOINT >/dev/null
	echo "(checkpoint done; decision queue: $(psql_q -At -c "SELECT count(*) FROM decision_queue"))"
}

# ---- reads on 10,000 commits x 200 metrics x 3 machines (+ the history above)
echo
settle
echo "reads: 10,000 commits x 200 metrics x 3 machines; 1 client"
echo "(computed: every request a different answer; repeated: the same request again,"
echo " answered from the read cache while the database is unchanged)"
printf '%-60s %8s %8s\n' "request" "p50 ms" "p99 ms"
trend_r="/api/v1/trend?machine=read-1&suite=will-it-scale&params=nr_task=4&metric=wis.m007"
points=$(curl -s "$url$trend_r" | grep -o '"samples"' | wc -l)
# each of 200 trends computed twice: first as the first read of its samples
# since the history load pushed them out of PostgreSQL's buffers, then again
# (a different answer for the read cache: it computes it anew)
printf '%-60s %8s %8s\n' "GET /api/v1/trend ($points points), 200 metrics, first read" \
	$(lat_cold "${trend_r%m007}m{i}" 200)
printf '%-60s %8s %8s\n' "GET /api/v1/trend ($points points), 200 metrics, computed" \
	$(lat_cold "${trend_r%m007}m{i}&_=again" 200)
printf '%-60s %8s %8s\n' "GET /api/v1/trend ($points points), repeated x 500" $(lat "$trend_r" 500)
printf '%-60s %8s %8s\n' "GET /api/v1/compare (2 kernels x $metrics metrics), computed" \
	$(lat_cold "/api/v1/compare?base=$base&target=$target&_={i}" 100)
curl -s -o /dev/null "$url/api/v1/compare?base=$base&target=$target" # computed once, then repeated
printf '%-60s %8s %8s\n' "GET /api/v1/compare (2 kernels x $metrics metrics), repeated" \
	$(lat "/api/v1/compare?base=$base&target=$target" 100)
printf '%-60s %8s %8s\n' "GET /api/v1/regressions (newest 50 of $(psql_q -At -c 'SELECT count(*) FROM decision'))" \
	$(lat "/api/v1/regressions?limit=50" 500)
printf '%-60s %8s %8s\n' "GET /api/v1/regressions?machine=read-2&verdict=regression" \
	$(lat "/api/v1/regressions?machine=read-2&verdict=regression&limit=50" 500)

asset=static/kperf.js
"$build/bench/minimal" "$asset" "$tmp/mport" &
mpid=$!
for _ in $(seq 50); do [ -s "$tmp/mport" ] && break; sleep 0.1; done
murl="http://127.0.0.1:$(cat "$tmp/mport")/"
for c in 1 8; do
	k=$(load -c $c -n 20000 "$url/static/kperf.js" | awk '{ print $5 }')
	m=$(load -c $c -n 20000 "$murl" | awk '{ print $5 }')
	printf '%-60s %8s %8s  %.2f x minimal\n' "GET /static/kperf.js ($(wc -c < $asset) B), $c client(s): req/s kperfd, minimal" \
		"$k" "$m" "$(echo "$k $m" | awk '{ print $1 / $2 }')"
done
kill "$mpid"
mpid=

# ---- memory
echo
rss() { awk '/VmRSS/ { print $2 }' /proc/$kpid/status; }
hwm() { awk '/VmHWM/ { print $2 }' /proc/$kpid/status; }
echo "memory (kB): peak RSS of kperfd during everything above: $(hwm) (after compare: $hwm_compare, ingest: $hwm_ingest, scale: $hwm_scale)"
printf '{"run_id":"bench-leak","machine":{"name":"bench-leak"},"kernel":{"release":"6.1.0-leak"},"test":{"suite":"leak"},"metrics":{"m":[1,2,3]}}' > "$tmp/leak.json"
curl -s -o /dev/null -H "Authorization: Bearer $KPERF_BOOTSTRAP_TOKEN" -H 'Content-Type: application/json' \
	--data-binary @"$tmp/leak.json" "$url/api/v1/runs"
leak_round() { # 33,300 requests of every kind kperfd serves often
	load -c 4 -n 10000 "$url/static/kperf.js" >/dev/null
	load -c 4 -n 10000 "$url/healthz" >/dev/null
	load -c 4 -n 3000 "$url/api/v1/runs/bench-leak" >/dev/null
	load -c 4 -n 10000 -t "$KPERF_BOOTSTRAP_TOKEN" -d "$tmp/leak.json" "$url/api/v1/runs" >/dev/null
	load -c 4 -n 200 "$url/api/v1/regressions?machine=read-2&verdict=regression&limit=20" >/dev/null
	load -c 4 -n 100 "$url$trend_s" >/dev/null
	load -c 4 -n 100 -k 100 "$url$trend_s&_={i}" >/dev/null # read-cache misses, evictions
}
# RSS at rest: kperfd gives freed pages back once reads pause for 0.2 s
# (http_idle), not after every computed answer
rest_rss() { sleep 0.5; rss; }
leak_round
r1=$(rest_rss)
rounds=$r1
for _ in 1 2 3; do leak_round; rounds="$rounds $(rest_rss)"; done
r2=$(rss)
echo "RSS after each 33,300 requests (kB): $rounds"
echo "RSS after 33,300 requests: $r1 kB; after 133,200: $r2 kB (growth $(( r2 - r1 )) kB)"
# hostile: 16 clients x 4 MiB bodies: [0,0,...] (refused by the pre-scan) and a
# run of 999,000 values (decoded, a few at a time, then refused)
awk 'BEGIN { printf "["; for (i = 0; i < 2097000; i++) printf "0,"; printf "0]" }' > "$tmp/zeros.json"
awk 'BEGIN { printf "{\"run_id\":\"bench-big\",\"machine\":{\"name\":\"b\"},\"kernel\":{\"release\":\"b\"},\"test\":{\"suite\":\"b\"},\"metrics\":{\"m\":[";
	for (i = 0; i < 999000; i++) printf "0.5,"; printf "0]}}" }' > "$tmp/big.json"
echo 5 > /proc/$kpid/clear_refs 2>/dev/null || true
base_rss=$(hwm)
z=$(load -c 16 -n 160 -s 413 -t "$KPERF_BOOTSTRAP_TOKEN" -d "$tmp/zeros.json" "$url/api/v1/runs" | awk '{ print $2 "/" $1, $3, $4 }')
b=$(load -c 16 -n 160 -s 400 -t "$KPERF_BOOTSTRAP_TOKEN" -d "$tmp/big.json" "$url/api/v1/runs" | awk '{ print $2 "/" $1, $3, $4 }')
echo "16 clients x 160 posts of $(wc -c < "$tmp/zeros.json") B [0,0,...]: answered 413 $z (ok, p50 ms, p99 ms)"
echo "16 clients x 160 posts of $(wc -c < "$tmp/big.json") B runs of 999,001 values: answered 400 $b"
echo "peak RSS under that load: $(hwm) kB (before it: $base_rss kB; goal < 262144 kB)"
