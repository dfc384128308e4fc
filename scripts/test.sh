#!/bin/bash
# test.sh - `make test`: build (plain and ASan+UBSan), start a throwaway
# PostgreSQL cluster, run the whole suite against real kperfd processes with
# each build, and end with the runner's summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
# "== what": a stage's header, and the seconds the stage before it took
stage_at=
stage() {
	local now
	now=$(date +%s)
	[ -n "$stage_at" ] && echo "   ($((now - stage_at)) s)"
	stage_at=$now
	[ $# = 0 ] || echo "== $*"
}

jobs=$(nproc 2>/dev/null || echo 2)
stage "build (plain and ASan + UBSan)"
make -j"$jobs" all
make -j"$jobs" BUILD=build-asan SANITIZE=address,undefined build-asan/kperfd build-asan/tests/kperf-tests
[ -f collectors/collect.mk ] && make -j"$jobs" BUILD=build-asan SANITIZE=address,undefined build-asan/kperf-collect build-asan/tests/collect-tests

tmp=$(mktemp -d /tmp/kperf-test.XXXXXX)
chmod 755 "$tmp"
pgport=$((55000 + $$ % 1000))
cleanup() {
	pkill -f -- "--port-file $tmp/" 2>/dev/null || true
	scripts/pg.sh stop "$tmp/pg" || true
	# clusters of tests that stopped half-way (failover tests make their own)
	for d in "$tmp"/*/; do
		[ -f "$d/data/PG_VERSION" ] && { scripts/pg.sh stop "$d" || true; }
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

# Durability is not under test here: trade it for speed.
KPERF_PG_OPTIONS="-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
	scripts/pg.sh start "$tmp/pg" "$pgport"
export KPERF_TEST_PG="host=$tmp/pg/sock port=$pgport user=kperf"
export KPERF_TEST_TMP="$tmp"
# every kperfd of the tests starts on a copy of one migrated database
scripts/pg.sh createdb "$tmp/pg" "$pgport" kperf_template
KPERF_DATABASE_URL="$KPERF_TEST_PG dbname=kperf_template" KPERF_CONFIG=/dev/null \
	build/kperfd migrate >/dev/null 2>"$tmp/template.log" || { cat "$tmp/template.log" >&2; exit 1; }
export KPERF_TEST_TEMPLATE=kperf_template
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

status=0
if [ -f tests/fuzz/fuzz.mk ]; then
	stage "fuzzing each harness for a few seconds"
	make -s fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-3}" || status=1
fi
stage "tests (build/)"
KPERF_BIN=build/kperfd build/tests/kperf-tests --jobs "$jobs" "$@" 2>&1 | tee "$tmp/plain.out" || status=1
[ "${PIPESTATUS[0]}" = 0 ] || status=1
if [ -x build/tests/collect-tests ]; then
	stage "collector tests (build/)"
	KPERF_BIN=build/kperfd KPERF_COLLECT_BIN=build/kperf-collect build/tests/collect-tests --jobs "$jobs" "$@" 2>&1 | tee "$tmp/collect.out" || status=1
	[ "${PIPESTATUS[0]}" = 0 ] || status=1
	stage "collector tests under ASan + UBSan (build-asan/)"
	KPERF_BIN=build-asan/kperfd KPERF_COLLECT_BIN=build-asan/kperf-collect build-asan/tests/collect-tests --jobs "$jobs" "$@" 2>&1 | tee "$tmp/collect-asan.out" || status=1
	[ "${PIPESTATUS[0]}" = 0 ] || status=1
fi
stage "tests under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)"
KPERF_BIN=build-asan/kperfd build-asan/tests/kperf-tests --jobs "$jobs" "$@" 2>&1 | tee "$tmp/asan.out" || status=1
[ "${PIPESTATUS[0]}" = 0 ] || status=1
stage "kperfd under valgrind memcheck (a short burst of requests)"
scripts/pg.sh createdb "$tmp/pg" "$pgport" kperf_vg
scripts/valgrind-burst.sh "host=$tmp/pg/sock port=$pgport user=kperf dbname=kperf_vg" "$tmp" || status=1
stage "browser tests (tests/e2e, headless Chromium)"
if [ -x /usr/bin/chromium ] && [ -d node_modules/playwright-core ]; then
	scripts/pg.sh createdb "$tmp/pg" "$pgport" kperf_e2e
	# A real SMTP server on loopback: the browser follows a mail's links.
	# kperfd gets no KPERF_PUBLIC_URL, so the links name the address it serves.
	mkdir -p "$tmp/e2e-mail/new" "$tmp/e2e-mail/cur" "$tmp/e2e-mail/tmp"
	smtp_pid=
	for i in $(seq 0 40); do
		smtp_port=$((20000 + ($$ * 7 + i * 131) % 12000))
		(exec 3<>"/dev/tcp/127.0.0.1/$smtp_port") 2>/dev/null && continue # taken
		/usr/bin/python3 -m aiosmtpd -n -l "127.0.0.1:$smtp_port" -c aiosmtpd.handlers.Mailbox \
			"$tmp/e2e-mail" >/dev/null 2>&1 &
		smtp_pid=$!
		for _ in $(seq 50); do
			(exec 3<>"/dev/tcp/127.0.0.1/$smtp_port") 2>/dev/null && break
			kill -0 "$smtp_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$smtp_pid" 2>/dev/null && break
		smtp_pid=
	done
	[ -n "$smtp_pid" ] || { echo "no SMTP server for the browser tests" >&2; status=1; }
	KPERF_DATABASE_URL="host=$tmp/pg/sock port=$pgport user=kperf dbname=kperf_e2e" \
	KPERF_BOOTSTRAP_TOKEN=e2e_collector_token_0123456789 \
	KPERF_BOOTSTRAP_ADMIN_TOKEN=e2e_admin_token_0123456789 KPERF_CONFIG=/dev/null \
	KPERF_SMTP_URL="smtp://127.0.0.1:$smtp_port" KPERF_ALERT_SETTLE_S=1 \
		build/kperfd --port 0 --port-file "$tmp/e2e.port" --static static \
		>"$tmp/e2e-kperfd.log" 2>&1 &
	e2e_pid=$!
	# its port, once it listens: at most 60 s (a loaded machine), else say so
	end=$(($(date +%s) + 60))
	until [ -s "$tmp/e2e.port" ]; do
		if ! kill -0 "$e2e_pid" 2>/dev/null || [ "$(date +%s)" -ge "$end" ]; then
			echo "kperfd for the browser tests wrote no port file within 60 s" \
				"(or exited); its log:" >&2
			tail -n 20 "$tmp/e2e-kperfd.log" >&2
			status=1
			break
		fi
		sleep 0.1
	done
	if [ -s "$tmp/e2e.port" ]; then
		KPERF_URL="http://127.0.0.1:$(cat "$tmp/e2e.port")" KPERF_MAILDIR="$tmp/e2e-mail" \
		KPERF_TOKEN=e2e_collector_token_0123456789 \
		KPERF_ADMIN_TOKEN=e2e_admin_token_0123456789 \
		KPERF_DATABASE_URL="host=$tmp/pg/sock port=$pgport user=kperf dbname=kperf_e2e" \
			node tests/e2e/run.mjs || status=1
	fi
	kill "$e2e_pid" 2>/dev/null || true
	wait "$e2e_pid" 2>/dev/null || true
	[ -n "$smtp_pid" ] && { kill "$smtp_pid" 2>/dev/null || true; wait "$smtp_pid" 2>/dev/null || true; }
else
	echo "chromium or playwright-core missing: run .ci/run or make deps" >&2
	status=1
fi
if grep -l -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$tmp"/*/kperfd.log 2>/dev/null; then
	for f in $(grep -l -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$tmp"/*/kperfd.log); do
		grep -A 30 -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$f" | head -60
	done
	echo "sanitizer reports in kperfd logs above" >&2
	status=1
fi
# Repeat what failed where the tail of the log shows it (CI keeps only the tail).
for f in "$tmp"/plain.out "$tmp"/collect.out "$tmp"/collect-asan.out "$tmp"/asan.out; do
	[ -f "$f" ] || continue
	grep -E '^\[(FAIL|----)\]|CRASH|Timed out|signal' "$f" | grep -v -E '^\[----\] *$' | sed "s|^|$(basename "$f" .out): |" | tail -n 20 || true
done
stage
echo "make test: $(( $(date +%s) - start )) s, $([ $status = 0 ] && echo PASS || echo FAIL)"
grep 'Synthesis:' "$tmp/asan.out" | tail -n 1
exit $status
