#!/bin/sh
# pg.sh - a private PostgreSQL cluster for `make run` and the tests.
#   pg.sh dir PREFERRED      print where the cluster can live (PREFERRED, or
#                            /var/lib/kperf/pg when the cluster's owner cannot reach it)
#   pg.sh start DIR PORT     initdb on first use, then start; socket in DIR/sock
#   pg.sh stop DIR           fast shutdown, when running
#   pg.sh createdb DIR PORT NAME
#   pg.sh standby PRIMARY_DIR PRIMARY_PORT DIR PORT NAME
#                            a hot standby of the primary, made with
#                            pg_basebackup -R and started; it connects as NAME
#                            (cluster_name), the name synchronous_standby_names uses
#   pg.sh promote DIR        make a standby the primary (pg_ctl promote, waits)
#   pg.sh kill DIR           SIGKILL to the postmaster (a crash, not a stop), then
#                            wait until its orphaned processes are gone
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

# Wait up to $2 seconds while a process works in cluster $1's data directory
# (a server's processes all have it as their working directory); 1 if one
# still does then, with the processes said on stderr.
orphans() {
	[ -d "$1/data" ] || return 0
	data=$(cd "$1/data" && pwd -P)
	end=$(($(date +%s) + $2))
	while :; do
		# one find for every process (not a readlink, and a fork, each)
		busy=$(find /proc -mindepth 2 -maxdepth 2 -path '/proc/[0-9]*/cwd' -lname "$data" \
			2>/dev/null | cut -d/ -f3 | tr '\n' ' ')
		[ -z "$busy" ] && return 0
		if [ "$(date +%s)" -ge "$end" ]; then
			echo "pg.sh: processes still work in $data after $2 s:" >&2
			for p in $busy; do
				line=$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null || true)
				echo "  $p $line" >&2
			done
			return 1
		fi
		sleep 0.1
	done
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
	# A killed postmaster can linger as a zombie until its parent reaps it;
	# its postmaster.pid then looks held (pg_ctl and the postmaster both ask
	# kill(pid, 0)) though nothing runs: the file is stale.
	pid=$(head -n 1 "$dir/data/postmaster.pid" 2>/dev/null || true)
	if [ -n "$pid" ] && { [ ! -r "/proc/$pid/stat" ] ||
		[ "$(sed 's/.*) //' "/proc/$pid/stat" | cut -d' ' -f1)" = Z ]; }; then
		rm -f "$dir/data/postmaster.pid" "$dir/sock/.s.PGSQL.$port.lock"
	fi
	if as_owner "$BIN/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
		exit 0
	fi
	# After a kill the old server's backends exit once they notice; until
	# then its shared memory is in use and a new postmaster refuses to start.
	orphans "$dir" 30 || exit 1
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
standby)
	primary=$2 pport=$3 dir=$4 port=$5 name=$6
	mkdir -p "$dir/sock"
	[ "$(id -u)" = 0 ] && chown "$(owner)" "$dir" "$dir/sock"
	if [ ! -f "$dir/data/PG_VERSION" ]; then
		as_owner "$BIN/pg_basebackup" -h "$primary/sock" -p "$pport" -U kperf -D "$dir/data" \
			-R -X stream -c fast >"$dir/basebackup.log" 2>&1 ||
			{ cat "$dir/basebackup.log" >&2; exit 1; }
	fi
	as_owner setsid "$BIN/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 \
		-o "-k $dir/sock -p $port -c listen_addresses='' -c cluster_name=$name ${KPERF_PG_OPTIONS:-}" \
		start >/dev/null || { tail -n 20 "$dir/log" >&2; exit 1; }
	;;
promote)
	dir=$2
	as_owner "$BIN/pg_ctl" -D "$dir/data" -w -t 60 promote >/dev/null
	;;
kill)
	dir=$2
	pid=$(head -n 1 "$dir/data/postmaster.pid" 2>/dev/null || true)
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null || true
	# Back once the orphaned backends have noticed and exited (their FATAL
	# sent): then no statement is answered by the killed server.
	orphans "$dir" 30 || exit 1
	;;
*)
	echo "usage: pg.sh dir PREFERRED | start DIR PORT | stop DIR | createdb DIR PORT NAME" \
		"| standby PRIMARY_DIR PRIMARY_PORT DIR PORT NAME | promote DIR | kill DIR" >&2
	exit 2
	;;
esac
