#!/bin/bash
# tree.sh CACHE - the lab tests' Linux tree: Debian's linux-source-6.1
# unpacked into CACHE/linux and committed as one git commit (tag kperf-base),
# with two commits on it, each on a branch of its own: kperf-slow (a busy loop
# in folio_mark_accessed(), every page-cache read's path) and kperf-broken
# (mm/swap.c does not compile). Made once, with fixed dates, so the commits
# are the same in every cache; later runs find them. Prints
# "BASE SLOW BROKEN".
set -euo pipefail
cache=$1
tar=$(ls /usr/src/linux-source-6.1.tar.xz 2>/dev/null || true)
[ -n "$tar" ] || { echo "tree.sh: /usr/src/linux-source-6.1.tar.xz missing (apt-get install linux-source-6.1)" >&2; exit 1; }
mkdir -p "$cache"
if ! git -C "$cache/linux" rev-parse -q --verify refs/tags/kperf-base >/dev/null 2>&1; then
	rm -rf "$cache/linux" "$cache/linux.tmp"
	mkdir -p "$cache/linux.tmp"
	tar -xJf "$tar" -C "$cache/linux.tmp"
	mv "$cache/linux.tmp"/linux-source-6.1 "$cache/linux"
	rmdir "$cache/linux.tmp"
	cd "$cache/linux"
	# Debian's tarball ends its .gitignore with a block that ignores the whole
	# top level ("/*", "!/debian/"): it goes before the first commit
	sed -i '/^# Debian packaging/,/^!\/debian\/$/d' .gitignore
	git init -q -b master
	git config user.name "kperf lab"
	git config user.email "lab@kperf.test"
	git add -A
	git add -f .gitignore .mailmap .cocciconfig .clang-format .get_maintainer.ignore .gitattributes \
		2>/dev/null || true
	GIT_AUTHOR_DATE="2024-01-01T00:00:00Z" GIT_COMMITTER_DATE="2024-01-01T00:00:00Z" \
		git commit -q -m "Linux 6.1 (Debian linux-source-6.1)"
	n=$(git ls-files | wc -l)
	[ "$n" -gt 60000 ] || { echo "tree.sh: only $n files committed: does a .gitignore hide the tree?" >&2; exit 1; }
	git tag kperf-base
fi
cd "$cache/linux"
# one commit on the base: BRANCH, SUBJECT, then the C lines put after the
# opening brace of folio_mark_accessed()
commit_on_base() {
	git rev-parse -q --verify "refs/heads/$1" >/dev/null && return 0
	git checkout -q -B "$1" kperf-base
	awk -v add="$3" '{ print } /^void folio_mark_accessed\(struct folio \*folio\)$/ { f = 1; next }
		f && /^{$/ { print add; f = 0 }' mm/swap.c >mm/swap.c.new
	mv mm/swap.c.new mm/swap.c
	git diff --quiet && { echo "tree.sh: folio_mark_accessed() not found in mm/swap.c" >&2; exit 1; }
	GIT_AUTHOR_DATE="2024-01-02T00:00:00Z" GIT_COMMITTER_DATE="2024-01-02T00:00:00Z" \
		git commit -q -am "$2"
}
commit_on_base kperf-slow "mm/swap: spin in folio_mark_accessed()" \
	"$(printf '\t{\n\t\tvolatile int spin;\n\n\t\tfor (spin = 0; spin < 200; spin++)\n\t\t\t;\n\t}')"
commit_on_base kperf-broken "mm/swap: a statement that does not compile" \
	"$(printf '\tint kperf_broken = ;')"
git checkout -q --detach kperf-base
echo "$(git rev-parse kperf-base^{commit}) $(git rev-parse kperf-slow) $(git rev-parse kperf-broken)"
