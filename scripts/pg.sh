#!/bin/sh
# pg.sh - a private PostgreSQL cluster for `make run` and the tests.
#   pg.sh dir PREFERRED      print where the cluster can live (PREFERRED, or
#                            /var/lib/kperf/pg when the cluster's owner cannot reach it)
#   pg.sh start DIR PORT     initdb on first use, then start; socket in DIR/sock
#   pg.sh stop DIR           fast shutdown, when running
#   pg.sh createdb DIR PORT NAME
# Layout: DIR/data (0700), DIR/sock (the Unix socket, no TCP), DIR/log.
# initdb refuses to run as root: as root the cluster belongs to the postgres
# user (or a "kperf" system user when postgres does not exist).
set -eu

BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$BIN" ] || { echo "pg.sh: PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 1; }

owner() {
	if [ "$(id -u)" != 0 ]; then id -un; return; fi
	if id postgres >/dev/null 2>&1; then echo postgres; return; fi
	id kperf >/dev/null 2>&1 || useradd --system --home-dir /var/lib/kperf --shell /usr/sbin/nologin kperf
	echo kperf
}

as_owner() {
	if [ "$(id -u)" = 0 ]; then runuser -u "$(owner)" -- "$@"; else "$@"; fi
}

cmd=${1:-}
case $cmd in
dir)
	want=$2
	mkdir -p "$want"
	if [ "$(id -u)" = 0 ] && ! runuser -u "$(owner)" -- test -x "$(cd "$want" && pwd)"; then
		echo "pg.sh: user $(owner) cannot reach $(cd "$want" && pwd) (a 0700 home?);" \
			"keeping the cluster under /var/lib/kperf/pg instead" >&2
		want=/var/lib/kperf/pg
		mkdir -p "$want"
	fi
	cd "$want" && pwd
	;;
start)
	dir=$2 port=$3
	mkdir -p "$dir/sock"
	[ "$(id -u)" = 0 ] && chown "$(owner)" "$dir" "$dir/sock"
	if [ ! -f "$dir/data/PG_VERSION" ]; then
		as_owner "$BIN/initdb" -D "$dir/data" -U kperf --auth=trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 ||
			{ cat "$dir/initdb.log" >&2; exit 1; }
	fi
	if as_owner "$BIN/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
		exit 0
	fi
	# setsid: Ctrl-C in the terminal stops kperfd, and run.sh stops the cluster.
	as_owner setsid "$BIN/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 \
		-o "-k $dir/sock -p $port -c listen_addresses='' ${KPERF_PG_OPTIONS:-}" start >/dev/null ||
		{ tail -n 20 "$dir/log" >&2; exit 1; }
	;;
stop)
	dir=$2
	if [ -f "$dir/data/PG_VERSION" ] && as_owner "$BIN/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
		as_owner "$BIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
	fi
	;;
createdb)
	dir=$2 port=$3 name=$4
	if ! "$BIN/psql" -h "$dir/sock" -p "$port" -U kperf -d postgres -tAc \
		"SELECT 1 FROM pg_database WHERE datname = '$name'" | grep -q 1; then
		"$BIN/createdb" -h "$dir/sock" -p "$port" -U kperf "$name"
	fi
	;;
*)
	echo "usage: pg.sh dir PREFERRED | start DIR PORT | stop DIR | createdb DIR PORT NAME" >&2
	exit 2
	;;
esac
