#!/bin/bash
# test.sh - `make test`: build (plain and ASan+UBSan), then run every pass of
# the suite: the Criterion tests of kperfd and of kperf-collect with each
# build, the fuzzers, kperfd under valgrind and the browser tests. The passes
# share no process, database or directory, so they run side by side in three
# lanes, each on a PostgreSQL cluster of its own; TCP ports are claimed in one
# directory ($KPERF_TEST_PORTS) that all of them use. Ends with each stage's
# seconds, the 15 slowest tests and the runner's summary lines.
#   KPERF_TEST_JOBS  Criterion processes per pass (default 4: most tests wait
#                    on servers, timers and child processes, not on a core)
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
jobs=$(nproc 2>/dev/null || echo 2)
test_jobs=${KPERF_TEST_JOBS:-4}

tmp=$(mktemp -d /tmp/kperf-test.XXXXXX)
chmod 755 "$tmp"
export KPERF_TEST_PORTS="$tmp/ports"
mkdir -p "$KPERF_TEST_PORTS"
lane_pids=
cleanup() {
	for p in $lane_pids; do kill "$p" 2>/dev/null || true; done
	pkill -f -- "--port-file $tmp/" 2>/dev/null || true
	# the lanes' clusters, and those of tests that stopped half-way
	# (failover tests make their own)
	for d in "$tmp"/*/pg/ "$tmp"/*/*/; do
		[ -f "$d/data/PG_VERSION" ] && { scripts/pg.sh stop "$d" || true; }
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

# "NAME|SECONDS|STATUS|CPU SECONDS" lines, for the table at the end
stages="$tmp/stages"
: >"$stages"
# CPU seconds (user + system) of this shell's children that have ended,
# into the variable cpu (`times` run here, not in a subshell)
cpu_now() {
	local f="$tmp/.times.$BASHPID"
	times >"$f"
	cpu=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } }
		END { printf "%.0f", t }' "$f")
}
timed() { # NAME COMMAND...: run it, record its seconds; its status
	local name=$1 t0 c0 cpu rc=0
	shift
	t0=$(date +%s)
	cpu_now
	c0=$cpu
	"$@" || rc=$?
	cpu_now
	echo "$name|$(($(date +%s) - t0))|$([ $rc = 0 ] && echo ok || echo FAIL)|$((cpu - c0))" >>"$stages"
	return $rc
}

# A TCP port on 127.0.0.1 in the tests' range (20000-31999), free and claimed
# in $KPERF_TEST_PORTS as tests/integration/harness.c claims its ports.
claim_port() {
	local p
	for i in $(seq 0 400); do
		p=$((20000 + ($$ * 7 + i * 131) % 12000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && continue
		(set -C; : >"$KPERF_TEST_PORTS/$p") 2>/dev/null && { echo "$p"; return 0; }
	done
	return 1
}

# A lane's own PostgreSQL cluster with the migrated template every kperfd of
# its tests copies, migrated by KPERFD: sets KPERF_TEST_PG, KPERF_TEST_TMP, KPERF_TEST_TEMPLATE.
lane_pg() { # DIR KPERFD
	local dir=$1 kperfd=$2 port
	mkdir -p "$dir"
	chmod 755 "$dir"
	port=$((55000 + ($$ + ${#dir} + RANDOM) % 1000))
	# Durability is not under test here: trade it for speed.
	KPERF_PG_OPTIONS="-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
		scripts/pg.sh start "$dir/pg" "$port" || return 1
	export KPERF_TEST_PG="host=$dir/pg/sock port=$port user=kperf"
	export KPERF_TEST_TMP="$dir"
	scripts/pg.sh createdb "$dir/pg" "$port" kperf_template || return 1
	KPERF_DATABASE_URL="$KPERF_TEST_PG dbname=kperf_template" KPERF_CONFIG=/dev/null \
		"$kperfd" migrate >/dev/null 2>"$dir/template.log" || { cat "$dir/template.log" >&2; return 1; }
	export KPERF_TEST_TEMPLATE=kperf_template
	LANE_PGPORT=$port
}

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# One Criterion binary: output in OUT.out, per-test times in OUT.xml.
criterion_pass() { # OUT BINARY [ARGS...]
	local out=$1 bin=$2
	shift 2
	"$bin" --jobs "$test_jobs" --xml="$out.xml" "$@" >"$out.out" 2>&1
}

# The lanes: each a subshell whose output goes to $tmp/LANE.log.
lane_plain() {
	lane_pg "$tmp/plain" build/kperfd || return 1
	local rc=0
	KPERF_BIN=build/kperfd timed "kperfd tests (build/)" \
		criterion_pass "$tmp/plain" build/tests/kperf-tests "$@" || rc=1
	KPERF_BIN=build/kperfd KPERF_COLLECT_BIN=build/kperf-collect timed "collector tests (build/)" \
		criterion_pass "$tmp/collect" build/tests/collect-tests "$@" || rc=1
	return $rc
}

lane_asan() {
	lane_pg "$tmp/asan" build-asan/kperfd || return 1
	local rc=0
	KPERF_BIN=build-asan/kperfd KPERF_COLLECT_BIN=build-asan/kperf-collect \
		timed "collector tests under ASan + UBSan" \
		criterion_pass "$tmp/collect-asan" build-asan/tests/collect-tests "$@" || rc=1
	KPERF_BIN=build-asan/kperfd timed "kperfd tests under ASan + UBSan" \
		criterion_pass "$tmp/asan" build-asan/tests/kperf-tests "$@" || rc=1
	return $rc
}

browser_tests() {
	local smtp_port smtp_pid e2e_pid end rc=0 db
	db="host=$tmp/misc/pg/sock port=$LANE_PGPORT user=kperf dbname=kperf_e2e"
	if ! [ -x /usr/bin/chromium ] || ! [ -d node_modules/playwright-core ]; then
		echo "chromium or playwright-core missing: run .ci/run or make deps" >&2
		return 1
	fi
	scripts/pg.sh createdb "$tmp/misc/pg" "$LANE_PGPORT" kperf_e2e
	# A real SMTP server on loopback: the browser follows a mail's links.
	# kperfd gets no KPERF_PUBLIC_URL, so the links name the address it serves.
	mkdir -p "$tmp/e2e-mail/new" "$tmp/e2e-mail/cur" "$tmp/e2e-mail/tmp"
	smtp_port=$(claim_port) || { echo "no free port for the browser tests' SMTP server" >&2; return 1; }
	/usr/bin/python3 -m aiosmtpd -n -l "127.0.0.1:$smtp_port" -c aiosmtpd.handlers.Mailbox \
		"$tmp/e2e-mail" >"$tmp/e2e-smtp.log" 2>&1 &
	smtp_pid=$!
	end=$(($(date +%s) + 60))
	until (exec 3<>"/dev/tcp/127.0.0.1/$smtp_port") 2>/dev/null; do
		if ! kill -0 "$smtp_pid" 2>/dev/null || [ "$(date +%s)" -ge "$end" ]; then
			echo "the browser tests' SMTP server did not listen on $smtp_port:" >&2
			cat "$tmp/e2e-smtp.log" >&2
			return 1
		fi
		sleep 0.1
	done
	KPERF_DATABASE_URL="$db" \
	KPERF_BOOTSTRAP_TOKEN=e2e_collector_token_0123456789 \
	KPERF_BOOTSTRAP_ADMIN_TOKEN=e2e_admin_token_0123456789 KPERF_CONFIG=/dev/null \
	KPERF_SMTP_URL="smtp://127.0.0.1:$smtp_port" KPERF_ALERT_SETTLE_S=1 \
		build/kperfd --port 0 --port-file "$tmp/e2e.port" --static static \
		>"$tmp/misc/e2e-kperfd.log" 2>&1 &
	e2e_pid=$!
	# its port, once it listens: at most 60 s (a loaded machine), else say so
	end=$(($(date +%s) + 60))
	until [ -s "$tmp/e2e.port" ]; do
		if ! kill -0 "$e2e_pid" 2>/dev/null || [ "$(date +%s)" -ge "$end" ]; then
			echo "kperfd for the browser tests wrote no port file within 60 s" \
				"(or exited); its log:" >&2
			tail -n 20 "$tmp/misc/e2e-kperfd.log" >&2
			rc=1
			break
		fi
		sleep 0.1
	done
	if [ -s "$tmp/e2e.port" ]; then
		KPERF_URL="http://127.0.0.1:$(cat "$tmp/e2e.port")" KPERF_MAILDIR="$tmp/e2e-mail" \
		KPERF_TOKEN=e2e_collector_token_0123456789 \
		KPERF_ADMIN_TOKEN=e2e_admin_token_0123456789 \
		KPERF_DATABASE_URL="$db" \
			node tests/e2e/run.mjs || rc=1
	fi
	kill "$e2e_pid" 2>/dev/null || true
	wait "$e2e_pid" 2>/dev/null || true
	kill "$smtp_pid" 2>/dev/null || true
	wait "$smtp_pid" 2>/dev/null || true
	return $rc
}

lane_misc() {
	lane_pg "$tmp/misc" build/kperfd || return 1
	local rc=0
	if [ -f tests/fuzz/fuzz.mk ]; then
		timed "fuzzing each harness for a few seconds" \
			make -s fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-3}" || rc=1
	fi
	scripts/pg.sh createdb "$tmp/misc/pg" "$LANE_PGPORT" kperf_vg
	timed "kperfd under valgrind memcheck (a burst of requests)" \
		scripts/valgrind-burst.sh "host=$tmp/misc/pg/sock port=$LANE_PGPORT user=kperf dbname=kperf_vg" \
		"$tmp/misc" || rc=1
	timed "browser tests (tests/e2e, headless Chromium)" browser_tests || rc=1
	return $rc
}

run_lane() { # NAME [ARGS...]: lane_NAME in the background, its log $tmp/NAME.log
	local name=$1
	shift
	( set +e; timed "lane $name (all of it)" "lane_$name" "$@"; echo "lane $name: exit $?" ) \
		>"$tmp/$name.log" 2>&1 &
	lane_pids="$lane_pids $!"
	echo "   lane $name started (log $tmp/$name.log)"
}

status=0
# The sanitizer build first, alone: its lane is the longest. The plain
# build compiles while that lane's tests wait on servers and timers.
echo "== build (ASan + UBSan)"
if timed "build (ASan + UBSan)" make -s -j"$jobs" BUILD=build-asan SANITIZE=address,undefined OPT=-O1 \
	build-asan/kperfd build-asan/tests/kperf-tests build-asan/kperf-collect \
	build-asan/tests/collect-tests vendor; then
	run_lane asan "$@"
else
	status=1
fi
echo "== build (plain) while the sanitizer build's tests run"
if timed "build (plain)" make -s -j"$jobs" all; then
	run_lane plain "$@"
	run_lane misc
else
	status=1
fi
echo "== waiting for the lanes"
for p in $lane_pids; do
	wait "$p" || status=1
done
lane_pids=
for lane in plain asan misc; do
	[ -f "$tmp/$lane.log" ] || continue
	echo "== lane $lane"
	cat "$tmp/$lane.log"
	grep -q "^lane $lane: exit 0$" "$tmp/$lane.log" || status=1
done

if grep -l -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$tmp"/*/*/kperfd.log 2>/dev/null; then
	for f in $(grep -l -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$tmp"/*/*/kperfd.log); do
		grep -A 30 -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$f" | head -60
	done
	echo "sanitizer reports in kperfd logs above" >&2
	status=1
fi
# The end of the log is what CI keeps: what failed, then the times.
echo "== the Criterion passes"
for f in plain collect collect-asan asan; do
	[ -f "$tmp/$f.out" ] || continue
	grep -E '^\[(FAIL|----)\]|CRASH|Timed out|signal' "$tmp/$f.out" | grep -v -E '^\[----\] *$' |
		sed "s|^|$f: |" | tail -n 20 || true
	echo "$f: $(grep 'Synthesis:' "$tmp/$f.out" | tail -n 1)"
done
echo "== stages (the lanes run side by side; CPU: user + system seconds of its processes)"
awk -F'|' 'BEGIN { printf "%7s %7s %-4s %s\n", "seconds", "CPU", "", "stage" }
	{ printf "%7d %7d %-4s %s\n", $2, $4, $3, $1 }' "$stages"
echo "== the 15 slowest tests (seconds)"
scripts/slowest.sh 15 plain="$tmp/plain.xml" collect="$tmp/collect.xml" \
	collect-asan="$tmp/collect-asan.xml" asan="$tmp/asan.xml"
echo "make test: $(($(date +%s) - start)) s, $([ $status = 0 ] && echo PASS || echo FAIL)"
exit $status
