#!/bin/bash
# valgrind-burst.sh DBURL TMPDIR - kperfd under valgrind memcheck serving a
# short burst of writes and reads (ingest, decisions, compare, trend, static),
# then SIGTERM. Fails on any memcheck error or definite leak.
set -uo pipefail
cd "$(dirname "$0")/.."
db=$1 tmp=$2
command -v valgrind >/dev/null || { echo "valgrind missing: run .ci/run or make deps" >&2; exit 1; }
token=vg_collector_token_0123456789
KPERF_DATABASE_URL="$db" KPERF_BOOTSTRAP_TOKEN=$token KPERF_CONFIG=/dev/null \
	valgrind --quiet --leak-check=full --show-leak-kinds=definite \
	--errors-for-leak-kinds=definite --error-exitcode=99 --log-file="$tmp/valgrind.log" \
	build/kperfd --port 0 --port-file "$tmp/vg.port" --threads 2 >"$tmp/vg-kperfd.log" 2>&1 &
pid=$!
for _ in $(seq 600); do [ -s "$tmp/vg.port" ] && break; sleep 0.1; done
url="http://127.0.0.1:$(cat "$tmp/vg.port")"
a=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa b=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb
for i in 1 2 3 4; do
	for side in a b; do
		if [ $side = a ]; then kernel="{\"commit\":\"$a\"}"; v=$((100 + i));
		else kernel="{\"commit\":\"$b\",\"parent\":\"$a\"}"; v=$((120 + i)); fi
		curl -s -o /dev/null -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
			--data-binary "{\"run_id\":\"vg-$side-$i\",\"machine\":{\"name\":\"vg\"},\"kernel\":$kernel,\"test\":{\"suite\":\"s\"},\"metrics\":{\"s.throughput\":[$v]}}" \
			"$url/api/v1/runs"
	done
done
curl -s -o /dev/null -H "Authorization: Bearer bad_bad_bad_bad_bad_bad" -H 'Content-Type: application/json' \
	--data-binary '{"x":NaN}' "$url/api/v1/runs"
sleep 2
for path in /healthz /metrics /api/v1/runs /api/v1/runs/vg-a-1 "/api/v1/compare?base=aaaaaaa&target=bbbbbbb" \
	"/api/v1/compare?base=aaaaaaa&target=bbbbbbb&format=lkp" \
	"/api/v1/compare?base=aaaaaaa&target=bbbbbbb&format=mmtests" \
	"/api/v1/trend?machine=vg&suite=s&metric=s.throughput" /api/v1/regressions /api/v1/series \
	/api/v1/nothing /static/index.html /trend; do
	curl -s -o /dev/null --compressed "$url$path"
done
# again from the read cache, then revalidated by ETag (304)
for path in "/api/v1/compare?base=aaaaaaa&target=bbbbbbb" "/api/v1/trend?machine=vg&suite=s&metric=s.throughput"; do
	etag=$(curl -s -o /dev/null -D - "$url$path" | tr -d '\r' | awk 'tolower($1) == "etag:" { print $2 }')
	curl -s -o /dev/null -H "If-None-Match: $etag" "$url$path"
done
kill "$pid"
wait "$pid"
rc=$?
if [ "$rc" != 0 ] || [ -s "$tmp/valgrind.log" ]; then
	cat "$tmp/valgrind.log" >&2
	echo "valgrind: kperfd exited $rc; errors or definite leaks above" >&2
	exit 1
fi
echo "valgrind: 0 errors, no definite leaks ($(grep -c ' 20[01] ' "$tmp/vg-kperfd.log") requests answered 2xx)"
