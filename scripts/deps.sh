#!/bin/sh
# deps.sh - `make deps`: install what kperf needs from Debian 12 when it is
# missing (apt-get, as root), or print the exact command and stop.
# `deps.sh kernel` adds what `make test-kernel` needs (QEMU, a Linux tree).
# `deps.sh test` adds what `make test` needs: Chromium for the browser tests,
# a real SMTP server (python3-aiosmtpd), clang for the fuzzers, redis-server,
# a real public-inbox (the robot's tests serve a local lore with it), and
# Patroni, etcd and pgBackRest (make test-ha).
set -eu
pkgs="build-essential pkg-config libmicrohttpd-dev libpq-dev libjansson-dev
libcurl4-openssl-dev libgsl-dev libdouble-conversion-dev libxxhash-dev libcriterion-dev zlib1g-dev libxml2-dev postgresql
postgresql-client curl ca-certificates git procps"
command -v npm >/dev/null 2>&1 || pkgs="$pkgs npm"
[ "${1:-}" = test ] && pkgs="$pkgs chromium python3-aiosmtpd clang libclang-rt-14-dev valgrind"
# The benchmarks kperf-collect parses (tests/collect/test_parsers_live.c runs each for a
# second): pgbench comes with postgresql, memtier_benchmark is not packaged in Debian 12.
# redis-server only for the tests: its package starts a system-wide server.
# linux-perf: `kperf-collect run --profile / --lock-contention` drive perf (and the
# tests of tests/collect/test_perf.c record with it, as root).
pkgs="$pkgs sysbench stress-ng fio redis-tools rt-tests linux-perf"
# b4: `kperf-collect agent --tree` applies posted series with it.
pkgs="$pkgs b4"
[ "${1:-}" = test ] && pkgs="$pkgs redis-server public-inbox"
# `make test-kernel` and VM labs (kperf-collect agent --kernel-build --vm): a
# Linux tree, Kbuild's tools, ccache, QEMU and a static busybox for the guest.
[ "${1:-}" = kernel ] && pkgs="$pkgs linux-source-6.1 qemu-system-x86 busybox-static ccache flex
bison bc libelf-dev libssl-dev cpio"
# `make test-ha`: a Patroni cluster (etcd as its store) and pgBackRest backups.
[ "${1:-}" = test ] && pkgs="$pkgs patroni etcd-server pgbackrest bc"

missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "kperf needs these Debian packages:$missing" >&2
	echo "run: sudo apt-get install -y$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y --no-install-recommends $missing ||
	{ apt-get update && apt-get install -y --no-install-recommends $missing; }
# etcd-server's package enables a system-wide etcd on 2379/2380; the HA
# tests run their own on ports of their own.
case $missing in *etcd-server*)
	[ -d /run/systemd/system ] && { systemctl disable --now etcd >/dev/null 2>&1 || true; } ;;
esac
# front-end packages, pinned by package-lock.json
[ -d node_modules/chart.js ] && [ -d node_modules/playwright-core ] ||
	npm ci --no-audit --no-fund --loglevel=error
