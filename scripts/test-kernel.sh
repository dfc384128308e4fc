#!/bin/bash
# test-kernel.sh - `make test-kernel`: the lab on a real kernel (tests/kernel).
# Debian's linux-source-6.1 as the tree, built with Kbuild and ccache by
# kperf-collect agent --kernel-build, booted in QEMU (--vm), measured in the
# guest. The unpacked tree, the build directory and ccache stay in
# $KPERF_KERNEL_CACHE (default var/kernel-cache): the first run builds from an
# empty cache (10-13 min a kernel on 2 cores), later ones in seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
jobs=$(nproc 2>/dev/null || echo 2)
make -s -j"$jobs" build/kperfd build/kperf-collect build/tests/kernel-tests

cache=${KPERF_KERNEL_CACHE:-$PWD/var/kernel-cache}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
read -r base slow broken < <(tests/kernel/tree.sh "$cache")
# the guest's benchmark: readtwice, static (the guest has no libc)
gcc -static -O2 -std=c11 -D_GNU_SOURCE -I. -o "$cache/readtwice-static" collectors/workloads/readtwice.c

# the lab's setup as an operator checks it: the real tree, compiler, QEMU, busybox
printf '[readtwice]\nsuite = readtwice\ncommand = %s/readtwice-static\n' "$cache" >"$cache/check.catalogue"
if check=$(build/kperf-collect agent --catalogue "$cache/check.catalogue" --check --tree "$cache/linux" \
	--kernel-build "$cache/build" --vm --vm-accel tcg --vm-icount --vm-memory 512 2>&1) &&
	echo "$check" | grep -q '^kernel: tree .*: Linux 6\.1, HEAD ' &&
	echo "$check" | grep -q '^vm: QEMU emulator version ' &&
	echo "$check" | grep -q '^vm: busybox .*: static$'; then
	echo "$check" | sed -n 's/^/agent --check: /p' | grep -v '\[readtwice\]'
else
	echo "agent --check failed on the lab's real setup:" >&2
	echo "$check" >&2
	exit 1
fi

tmp=$(mktemp -d /tmp/kperf-kernel.XXXXXX)
chmod 755 "$tmp"
pgport=$((55000 + $$ % 1000))
cleanup() {
	pkill -f -- "--port-file $tmp/" 2>/dev/null || true
	scripts/pg.sh stop "$tmp/pg" || true
	rm -rf "$tmp"
}
trap cleanup EXIT
KPERF_PG_OPTIONS="-c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
	scripts/pg.sh start "$tmp/pg" "$pgport"
export KPERF_TEST_PG="host=$tmp/pg/sock port=$pgport user=kperf"
export KPERF_TEST_TMP="$tmp"
export KPERF_BIN=build/kperfd KPERF_COLLECT_BIN=$PWD/build/kperf-collect
export KPERF_KERNEL_CACHE="$cache" KPERF_KERNEL_BASE=$base KPERF_KERNEL_SLOW=$slow \
	KPERF_KERNEL_BROKEN=$broken
export CCACHE_DIR="$cache/ccache"
status=0
build/tests/kernel-tests --jobs 1 --verbose "$@" 2>&1 | tee "$tmp/kernel.out" || status=1
[ "${PIPESTATUS[0]}" = 0 ] || status=1
# a bare-metal lab's switch, up to the kexec: the last image built, installed
# into a scratch /boot by packaging/kernel/kperf-kexec (KPERF_KEXEC=no)
# (its release read from the image: a failed build after it leaves another
# in include/config/kernel.release)
rel=$(strings -n 8 "$cache/build/arch/x86/boot/bzImage" 2>/dev/null |
	grep -m1 -oE '^[0-9]+\.[0-9]+\.[0-9]+-g[0-9a-f]{12}' || true)
if [ -n "$rel" ] && out=$(KPERF_KERNEL_IMAGE="$cache/build/arch/x86/boot/bzImage" \
	KPERF_KERNEL_RELEASE="$rel" KPERF_KERNEL_BUILD="$cache/build" KPERF_KERNEL_TREE="$cache/linux" \
	KPERF_BOOT_DIR="$tmp/boot" KPERF_KEXEC=no packaging/kernel/kperf-kexec "$slow" "" 2>&1) &&
	cmp -s "$cache/build/arch/x86/boot/bzImage" "$tmp/boot/vmlinuz-$rel" &&
	cmp -s "$cache/build/.config" "$tmp/boot/config-$rel" &&
	[ -s "$tmp/boot/System.map-$rel" ] &&
	echo "$out" | grep -q "not loaded (KPERF_KEXEC=no): kexec -l $tmp/boot/vmlinuz-$rel --reuse-cmdline"; then
	echo "kperf-kexec: installed $rel into a scratch /boot: ok"
else
	echo "kperf-kexec: the install of '$rel' failed: $out" >&2
	status=1
fi
grep -h -E '^vm_lab: ' "$tmp/kernel.out" || true
for f in "$tmp"/*/agent-*.log "$tmp"/*/lab/agent.log; do
	[ -f "$f" ] && { echo "== $f (end)"; tail -n 30 "$f"; }
done
echo "make test-kernel: $(($(date +%s) - start)) s, $([ $status = 0 ] && echo PASS || echo FAIL)"
exit $status
