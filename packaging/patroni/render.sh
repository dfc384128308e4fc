#!/bin/bash
# render.sh - fill in a template of this folder from the environment:
#   render.sh patroni|etcd|pgbackrest > FILE
# Each @NAME@ of the template is the variable NAME; unset ones with a default
# below take it, others are an error naming them. The defaults are for real
# hosts (scram-sha-256 over the network, peer on the socket, synchronous
# replication, the watchdog required); tests/ha/cluster.sh overrides what a
# loopback test cluster without /dev/watchdog needs.
set -euo pipefail
shopt -u patsub_replacement 2>/dev/null || true
HERE=$(cd "$(dirname "$0")" && pwd)
case ${1:-} in
patroni) tmpl=$HERE/patroni.yml.in ;;
etcd) tmpl=$HERE/etcd.yml.in ;;
pgbackrest) tmpl=$HERE/pgbackrest.conf.in ;;
*) echo "usage: render.sh patroni|etcd|pgbackrest > FILE (settings in the environment)" >&2; exit 2 ;;
esac

: "${SCOPE:=kperf}" "${TTL:=10}" "${RETRY_TIMEOUT:=4}" "${SYNC:=true}" "${FAILSAFE:=true}"
: "${WATCHDOG:=required}" "${AUTH:=scram-sha-256}" "${LOCAL_AUTH:=peer}"
: "${REPLICATION_USER:=replicator}" "${PGBACKREST_CONF:=/etc/pgbackrest.conf}"
: "${ARCHIVE_COMMAND:=pgbackrest --config=$PGBACKREST_CONF --stanza=$SCOPE archive-push %p}"
: "${ETCD_NAME:=$SCOPE-etcd1}" "${ETCD_CLIENT_PORT:=2379}" "${ETCD_PEER_PORT:=2380}"
: "${LOG_PATH:=/var/log/pgbackrest}" "${LOCK_PATH:=/tmp/pgbackrest}"

text=$(<"$tmpl")
missing=
for name in $(grep -o '@[A-Z0-9_]*@' "$tmpl" | tr -d @ | sort -u); do
	if [ -z "${!name+set}" ]; then
		missing="$missing $name"
		continue
	fi
	text=${text//@$name@/${!name}}
done
[ -z "$missing" ] || { echo "render.sh $1: set$missing" >&2; exit 1; }
printf '%s\n' "$text"
