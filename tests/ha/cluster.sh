#!/bin/bash
# cluster.sh - a Patroni cluster on loopback for the HA tests: one etcd member
# and two Patroni 3.0 / PostgreSQL 15 nodes under W, configured from
# packaging/patroni/ (render.sh) with what a test host needs (trust on
# loopback, no watchdog device). Recipe: specs/patroni.md.
#   cluster.sh up W ETCD_PORT ETCD_PEER PG1 PG2 API1 API2   (W fresh; writes W/env)
#   cluster.sh down W                   SIGKILL everything (by recorded pid)
#   cluster.sh leader W                 the leader's node number (1, 2), or nothing
#   cluster.sh kill-pm W N              SIGKILL node N's postmaster
#   cluster.sh kill-node W N            SIGKILL node N's Patroni and postmaster (a crash)
#   cluster.sh start W N                start node N's Patroni again
#   cluster.sh wait-leader W SECONDS    until one node leads; prints its number
#   cluster.sh wait-replica W N SECONDS until node N streams as the sync standby
#   cluster.sh switchover W             patronictl switchover to the replica
#   cluster.sh etcd-stop|etcd-cont W    SIGSTOP / SIGCONT the etcd member
#   cluster.sh set W KEY=VALUE          patronictl edit-config --set (dynamic config)
#   cluster.sh backrest W ARGS...       pgbackrest --stanza=kperf ARGS as postgres
#   cluster.sh psql W N SQL             one statement on node N's postgres database
#   cluster.sh pitr W TIME PORT         restore the newest backup as of TIME into W/pitr/data
#                                       (pgBackRest, WAL from the archive), start it on PORT
#   cluster.sh rebuild W                the restored copy (W/pitr/data, running) as the
#                                       cluster's data: Patroni stopped on both nodes,
#                                       the cluster removed from etcd, node1 started on
#                                       the copy, node2 cloned from it
#   cluster.sh list W                   patronictl list
# Env: SYNC (true), FAILSAFE (true), TTL (10), UP_TIMEOUT (90).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
RENDER=$HERE/../../packaging/patroni/render.sh
[ "$(id -u)" = 0 ] && AS=(setpriv --reuid=postgres --regid=postgres --init-groups) || AS=()
PSQL=/usr/bin/psql
PGBIN=/usr/lib/postgresql/15/bin

die() { echo "cluster.sh: $*" >&2; exit 1; }
cmd=${1:-}; W=${2:?usage: cluster.sh VERB W ...}
shift 2
W=$(realpath -m -- "$W")
[ "$cmd" = up ] || { [ -f "$W/env" ] || die "no cluster in $W"; . "$W/env"; }

now() { date +%s.%N; }
elapsed() { echo "$(now) - $1" | bc; }
pgport() { [ "$1" = 1 ] && echo "$PG1" || echo "$PG2"; }
apiport() { [ "$1" = 1 ] && echo "$API1" || echo "$API2"; }
rest() { curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$(apiport "$1")/$2"; }
# wait_for SECONDS WHAT command...
wait_for() {
	local limit=$1 what=$2 t0
	t0=$(now)
	shift 2
	until "$@" >/dev/null 2>&1; do
		if [ "$(echo "$(elapsed "$t0") > $limit" | bc)" = 1 ]; then
			echo "cluster.sh: timed out ($limit s) waiting for: $what" >&2
			tail -n 15 "$W"/log/*.log >&2
			return 1
		fi
		sleep 0.2
	done
}
postmaster() { # the pid of node N's (or the restored "pitr") postmaster, when one runs
	local pf=$W/node$1/data/postmaster.pid p
	[ "$1" = pitr ] && pf=$W/pitr/data/postmaster.pid
	[ -f "$pf" ] || return 1
	p=$(head -1 "$pf")
	grep -qs postgres "/proc/$p/cmdline" && echo "$p"
}
start_node() {
	"${AS[@]}" patroni "$W/node$1.yml" >>"$W/log/node$1.log" 2>&1 &
	echo $! >"$W/node$1.pid"
}
streaming() { # node N streams from the leader
	local l
	l=$(leader) && [ -n "$l" ] && [ "$l" != "$1" ] &&
		"$PSQL" -qAtX "host=127.0.0.1 port=$(pgport "$l") user=postgres dbname=postgres connect_timeout=2" \
			-c "SELECT 1 FROM pg_stat_replication WHERE application_name = 'node$1' AND state = 'streaming'" |
		grep -q 1
}
leader() {
	for n in 1 2; do rest "$n" primary 2>/dev/null && { echo "$n"; return 0; }; done
	return 0
}
patronictl_() { "${AS[@]}" env HOME="$W" patronictl -c "$W/node1.yml" "$@"; }

case $cmd in
up)
	[ $# = 6 ] || die "up W ETCD_PORT ETCD_PEER PG1 PG2 API1 API2"
	[ -e "$W" ] && [ -n "$(ls -A "$W")" ] && die "$W is not empty"
	ETCD_PORT=$1 ETCD_PEER=$2 PG1=$3 PG2=$4 API1=$5 API2=$6
	mkdir -p "$W"/{log,etcd,node1,node2,backrest,backrest-log,backrest-lock}
	printf 'ETCD_PORT=%s\nETCD_PEER=%s\nPG1=%s\nPG2=%s\nAPI1=%s\nAPI2=%s\n' \
		"$ETCD_PORT" "$ETCD_PEER" "$PG1" "$PG2" "$API1" "$API2" >"$W/env"
	export SCOPE=kperf ADDR=127.0.0.1 AUTH=trust LOCAL_AUTH=trust NET=127.0.0.1/32 WATCHDOG=off
	export SUPERUSER_PASSWORD=postgres REPLICATION_PASSWORD=replicator
	export SYNC=${SYNC:-true} FAILSAFE=${FAILSAFE:-true} TTL=${TTL:-10}
	export ETCD_HOSTS=127.0.0.1:$ETCD_PORT ETCD_NAME=e1 ETCD_DATA=$W/etcd
	export ETCD_CLIENT_PORT=$ETCD_PORT ETCD_PEER_PORT=$ETCD_PEER
	export ETCD_INITIAL_CLUSTER=e1=http://127.0.0.1:$ETCD_PEER
	export PGBACKREST_CONF=$W/pgbackrest.conf REPO=$W/backrest
	export LOG_PATH=$W/backrest-log LOCK_PATH=$W/backrest-lock
	export DATA1=$W/node1/data DATA2=$W/node2/data PGPORT1=$PG1 PGPORT2=$PG2
	export SOCKDIR1=$W/node1 SOCKDIR2=$W/node2
	unset ARCHIVE_COMMAND
	"$RENDER" etcd >"$W/etcd.yml"
	"$RENDER" pgbackrest >"$W/pgbackrest.conf"
	for n in 1 2; do
		NAME=node$n PGPORT=$(pgport "$n") APIPORT=$(apiport "$n") DATA=$W/node$n/data \
			SOCKDIR=$W/node$n PGPASS=$W/node$n/pgpass "$RENDER" patroni >"$W/node$n.yml"
	done
	[ "$(id -u)" = 0 ] && chown -R postgres:postgres "$W"
	chmod 700 "$W"/etcd "$W"/node1 "$W"/node2
	t0=$(now)
	"${AS[@]}" etcd --config-file "$W/etcd.yml" >"$W/log/etcd.log" 2>&1 &
	echo $! >"$W/etcd.pid"
	limit=${UP_TIMEOUT:-90}
	wait_for "$limit" "etcd healthy" sh -c "curl -fsS http://127.0.0.1:$ETCD_PORT/health | grep -q '\"health\":\"true\"'"
	start_node 1
	wait_for "$limit" "node1 is primary" rest 1 primary
	start_node 2
	wait_for "$limit" "node2 is a replica" rest 2 replica
	[ "$SYNC" = true ] && wait_for "$limit" "node2 is the sync standby" rest 2 sync
	wait_for "$limit" "node2 streaming" streaming 2
	echo "cluster.sh: up in $(elapsed "$t0") s" >&2
	;;
down)
	for n in 2 1; do
		[ -f "$W/node$n.pid" ] && kill -KILL "$(cat "$W/node$n.pid")" 2>/dev/null || true
	done
	pids=()
	for n in 1 2 pitr; do
		p=$(postmaster "$n") && { kill -QUIT "$p" 2>/dev/null || true; pids+=("$p"); }
	done
	[ -f "$W/etcd.pid" ] && { p=$(cat "$W/etcd.pid"); kill -CONT "$p" 2>/dev/null || true; kill -KILL "$p" 2>/dev/null || true; pids+=("$p"); }
	for p in "${pids[@]}"; do
		for _ in $(seq 200); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
	done
	rm -f "$W"/*.pid
	;;
leader) leader ;;
kill-pm)
	p=$(postmaster "$1") || die "node$1 has no postmaster"
	kill -KILL "$p"
	;;
kill-node)
	kill -KILL "$(cat "$W/node$1.pid")" 2>/dev/null || true
	p=$(postmaster "$1") && kill -KILL "$p"
	# the orphaned backends end once they notice the postmaster is gone
	for _ in $(seq 100); do pgrep -f -- "-D $W/node$1/data" >/dev/null || break; sleep 0.05; done
	;;
start) start_node "$1" ;;
wait-leader)
	wait_for "$1" "a leader" sh -c "curl -fsS -o /dev/null --max-time 2 http://127.0.0.1:$API1/primary ||
		curl -fsS -o /dev/null --max-time 2 http://127.0.0.1:$API2/primary"
	leader
	;;
wait-replica)
	n=$1 limit=$2
	wait_for "$limit" "node$n is a replica" rest "$n" replica
	wait_for "$limit" "node$n is the sync standby" rest "$n" sync
	wait_for "$limit" "node$n streaming" streaming "$n"
	;;
switchover)
	l=$(leader)
	[ -n "$l" ] || die "no leader"
	patronictl_ switchover --leader "node$l" --candidate "node$((3 - l))" --force >>"$W/log/switchover.log" 2>&1
	;;
etcd-stop) kill -STOP "$(cat "$W/etcd.pid")" ;;
etcd-cont) kill -CONT "$(cat "$W/etcd.pid")" ;;
set) patronictl_ edit-config --force --set "$1" >>"$W/log/edit-config.log" 2>&1 ;;
backrest) "${AS[@]}" pgbackrest --config="$W/pgbackrest.conf" --stanza=kperf "$@" ;;
psql) "$PSQL" -qAtX "host=127.0.0.1 port=$(pgport "$1") user=postgres dbname=postgres" -c "$2" ;;
pitr)
	target=$1 port=$2 D=$W/pitr/data
	mkdir -p "$D"
	echo "$port" >"$W/pitr/port"
	[ "$(id -u)" = 0 ] && chown -R postgres:postgres "$W/pitr"
	chmod 700 "$W/pitr" "$D"
	"${AS[@]}" pgbackrest --config="$W/pgbackrest.conf" --stanza=kperf --pg1-path="$D" \
		--type=time "--target=$target" --target-action=promote --archive-mode=off restore
	# the restored copy is a cluster of its own: no standby to wait for, its own
	# port and socket, Patroni's pg_hba.conf from the backup
	"${AS[@]}" "$PGBIN/pg_ctl" -D "$D" -l "$W/log/pitr.log" -w -t 120 -o "-p $port \
		-c listen_addresses=127.0.0.1 -c unix_socket_directories=$W/pitr \
		-c hba_file=$D/pg_hba.conf -c ident_file=$D/pg_ident.conf \
		-c synchronous_standby_names='' -c archive_mode=off -c cluster_name=pitr" start >/dev/null
	wait_for 120 "the restored copy promoted" sh -c "$PSQL -qAtX 'host=127.0.0.1 port=$port \
		user=postgres dbname=postgres' -c 'SELECT pg_is_in_recovery()' | grep -qx f"
	;;
rebuild)
	D=$W/pitr/data
	postmaster pitr >/dev/null || die "no restored copy running in $D"
	# the copy archives again once it is the cluster's (restore set archive_mode=off)
	"$PSQL" -qAtX "host=127.0.0.1 port=$(cat "$W/pitr/port") user=postgres \
		dbname=postgres" -c "ALTER SYSTEM RESET archive_mode" >/dev/null
	"${AS[@]}" "$PGBIN/pg_ctl" -D "$D" -m fast -w -t 120 stop >/dev/null
	for n in 1 2; do # Patroni stops its PostgreSQL and gives the leader key back
		[ -f "$W/node$n.pid" ] && kill -TERM "$(cat "$W/node$n.pid")" 2>/dev/null || true
	done
	for n in 1 2; do
		[ -f "$W/node$n.pid" ] || continue
		p=$(cat "$W/node$n.pid")
		wait_for 60 "node$n's Patroni to stop" sh -c "! kill -0 $p"
		rm -f "$W/node$n.pid"
	done
	printf 'kperf\nYes I am aware\n' | patronictl_ remove kperf >>"$W/log/remove.log" 2>&1
	t0=$(now)
	rm -rf "$W/node1/data" "$W/node2/data"
	mv "$D" "$W/node1/data"
	start_node 1
	wait_for 120 "node1 leads on the restored data" rest 1 primary
	start_node 2
	wait_for 120 "node2 is a replica" rest 2 replica
	[ "${SYNC:-true}" = true ] && wait_for 120 "node2 is the sync standby" rest 2 sync
	wait_for 120 "node2 streaming" streaming 2
	echo "cluster.sh: rebuilt on the restored copy in $(elapsed "$t0") s" >&2
	;;
list) patronictl_ list ;;
*) die "unknown verb $cmd" ;;
esac
