#!/bin/bash
# run.sh - `make run`: a private PostgreSQL under var/ (unless
# KPERF_DATABASE_URL names one), migrations, and kperfd in the foreground.
# Ctrl-C stops kperfd and the cluster this script started. `run.sh stop`
# (make stop) stops leftovers of an earlier run.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p var

port=${KPERF_PORT:-8080}
pgport=${KPERF_PG_PORT:-54329}

stop_all() {
	if [ -f var/kperfd.pid ]; then
		kill "$(cat var/kperfd.pid)" 2>/dev/null || true
		rm -f var/kperfd.pid
	fi
	if [ -f var/pgdir ]; then
		scripts/pg.sh stop "$(cat var/pgdir)"
		echo "kperf: stopped PostgreSQL in $(cat var/pgdir)" >&2
		rm -f var/pgdir
	fi
}

if [ "${1:-}" = stop ]; then
	stop_all
	exit 0
fi

[ -n "${KPERF_DATABASE_URL:-}" ] && export KPERF_DATABASE_URL_GIVEN=1
if [ -z "${KPERF_DATABASE_URL:-}" ]; then
	pgdir=$(scripts/pg.sh dir var/pg)
	scripts/pg.sh start "$pgdir" "$pgport"
	echo "$pgdir" > var/pgdir
	scripts/pg.sh createdb "$pgdir" "$pgport" kperf
	export KPERF_DATABASE_URL="host=$pgdir/sock port=$pgport user=kperf dbname=kperf"
	echo "kperf: PostgreSQL in $pgdir (socket $pgdir/sock, port $pgport)" >&2
fi

# Tokens for this development instance, made once and kept in var/.
for kind in collector admin; do
	f=var/dev-$kind-token
	if [ ! -s "$f" ]; then
		(umask 077; head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' | sed "s/^/dev_${kind}_/" > "$f")
	fi
done
export KPERF_BOOTSTRAP_TOKEN=${KPERF_BOOTSTRAP_TOKEN:-$(cat var/dev-collector-token)}
export KPERF_BOOTSTRAP_ADMIN_TOKEN=${KPERF_BOOTSTRAP_ADMIN_TOKEN:-$(cat var/dev-admin-token)}
echo "kperf: collector token in var/dev-collector-token, admin token in var/dev-admin-token" >&2
echo "kperf: serving http://127.0.0.1:$port (Ctrl-C stops)" >&2

# Links in alert mail (compare, triage, unsubscribe) open this instance.
export KPERF_PUBLIC_URL=${KPERF_PUBLIC_URL:-http://${KPERF_LISTEN:-127.0.0.1}:$port}

trap 'trap - INT TERM EXIT; stop_all' INT TERM EXIT
build/kperfd --listen "${KPERF_LISTEN:-127.0.0.1}" --port "$port" &
echo $! > var/kperfd.pid
# A newcomer sees every page populated: demo data into an empty database
# (machines named demo-*); KPERF_DEMO=0 skips it.
if [ "${KPERF_DEMO:-1}" != 0 ] && [ -z "${KPERF_DATABASE_URL_GIVEN:-}" ]; then
	node scripts/demo.mjs "http://127.0.0.1:$port" "$KPERF_BOOTSTRAP_TOKEN" ||
		echo "kperf: demo data not loaded" >&2
fi
wait "$(cat var/kperfd.pid)" || true
