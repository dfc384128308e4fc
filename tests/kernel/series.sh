#!/bin/bash
# series.sh CACHE OUT - two three-patch mm series on the lab tests' Linux
# tree (tests/kernel/tree.sh), as mail for the robot's inbox:
#   OUT/slow:   patch 2 slows folio_mark_accessed() (every page-cache read's
#               path); patches 1 and 3 add comments
#   OUT/broken: patch 3 does not compile; patches 1 and 2 add comments
# Each is `git format-patch --cover-letter --base --thread` from Lab Dev to
# linux-mm. The commits are made with plumbing (no checkout of the tree, which
# the labs use) and fixed dates, so they are the same in every cache.
# Prints each cover letter's Message-ID: "SLOW_COVER BROKEN_COVER".
set -euo pipefail
cache=$1 out=$2
cd "$cache/linux"
export GIT_AUTHOR_NAME="Lab Dev" GIT_AUTHOR_EMAIL=dev@example.org
export GIT_COMMITTER_NAME="Lab Dev" GIT_COMMITTER_EMAIL=dev@example.org
export GIT_AUTHOR_DATE="2024-02-01T00:00:00Z" GIT_COMMITTER_DATE="2024-02-01T00:00:00Z"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# edit PARENT FILE SUBJECT AWK ADD: a commit on PARENT whose FILE is AWK's
# output (with the variable add = ADD) over PARENT's FILE; prints its sha
edit() {
	local parent=$1 file=$2 subject=$3 prog=$4 add=$5 blob tree
	git show "$parent:$file" | awk -v add="$add" "$prog" >"$scratch/new"
	git show "$parent:$file" | cmp -s - "$scratch/new" &&
		{ echo "series.sh: '$subject' changes nothing in $file" >&2; exit 1; }
	blob=$(git hash-object -w "$scratch/new")
	GIT_INDEX_FILE=$scratch/index git read-tree "$parent"
	GIT_INDEX_FILE=$scratch/index git update-index --cacheinfo "100644,$blob,$file"
	tree=$(GIT_INDEX_FILE=$scratch/index git write-tree)
	printf '%s\n\n%s\n\nSigned-off-by: Lab Dev <dev@example.org>\n' "$subject" \
		"A change for kperf's lab tests." | git commit-tree "$tree" -p "$parent"
}

# awk programs: add after folio_mark_accessed()'s opening brace; before a line
after_fma='/^void folio_mark_accessed\(struct folio \*folio\)$/ { f = 1 } { print } f && /^{$/ { print add; f = 0 }'
before() { echo "/$1/ { print add } { print }"; }

series() { # NAME COVER_SUBJECT TIP
	local name=$1 subject=$2 tip=$3 dir=$out/$1
	rm -rf "$dir"
	git format-patch -q --cover-letter --base=kperf-base --thread --to=linux-mm@kvack.org \
		--from="Lab Dev <dev@example.org>" -o "$dir" "kperf-base..$tip"
	sed -i "s/\*\*\* SUBJECT HERE \*\*\*/$subject/; s/\*\*\* BLURB HERE \*\*\*/$subject./" \
		"$dir"/0000-cover-letter.patch
	[ "$(ls "$dir"/*.patch | wc -l)" = 4 ] || { echo "series.sh: $name has no 4 files" >&2; exit 1; }
	sed -n 's/^Message-I[dD]: *<\(.*\)>$/\1/p' "$dir"/0000-cover-letter.patch | head -n 1
}

base=$(git rev-parse kperf-base^{commit})
p1=$(edit "$base" mm/swap.c "mm/swap: say which lru_lock folio_mark_accessed() may take" \
	"$(before '^void folio_mark_accessed\(struct folio \*folio\)$')" \
	'/* folio_mark_accessed() takes no lru_lock itself: the LRU add batch does. */')
p2=$(edit "$p1" mm/swap.c "mm/swap: recheck the lru_lock holder in folio_mark_accessed()" \
	"$after_fma" "$(printf '\t{\n\t\tvolatile int spin;\n\n\t\tfor (spin = 0; spin < 200; spin++)\n\t\t\t;\n\t}')")
p3=$(edit "$p2" mm/vmscan.c "mm/vmscan: say where shrink_lruvec() takes the lru_lock" \
	"$(before '^static void shrink_lruvec\(struct lruvec \*lruvec, struct scan_control \*sc\)$')" \
	'/* shrink_lruvec() takes the lruvec lru_lock in its isolate and putback steps. */')
b1=$(edit "$base" mm/vmscan.c "mm/vmscan: lru_lock notes for shrink_lruvec()" \
	"$(before '^static void shrink_lruvec\(struct lruvec \*lruvec, struct scan_control \*sc\)$')" \
	'/* shrink_lruvec(): the lru_lock is the lruvec one. */')
b2=$(edit "$b1" mm/swap.c "mm/swap: lru_lock notes for folio_mark_accessed()" \
	"$(before '^void folio_mark_accessed\(struct folio \*folio\)$')" \
	'/* folio_mark_accessed(): no lru_lock here. */')
b3=$(edit "$b2" mm/swap.c "mm/swap: count lru_lock-free activations" "$after_fma" \
	"$(printf '\tint kperf_broken = ;')")
slow=$(series slow "mm: lru_lock in the page-cache read path" "$p3")
sleep 1 # git names a cover letter by the second it was made
broken=$(series broken "mm: lru_lock notes for reclaim" "$b3")
echo "$slow $broken"
