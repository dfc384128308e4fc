#!/bin/bash
# lore.sh - a local public-inbox "lore" (linux-mm) for kperf robot tests.
#
# Recipe: /work/shared/specs/public-inbox.md (public-inbox 1.9 + b4 0.12).
# Everything lives under a work directory W; HOME=W/home and PI_CONFIG=W/pi/config
# for every command (the servers included), so nothing is written outside W.
#
# Usage:
#   lore.sh init   W PORT                      inbox + httpd on 127.0.0.1:PORT, writes W/env
#   lore.sh tree   W                           W/linux with tag v6.1; prints the base sha
#   lore.sh series W VERSION SLOW_PATCH [FIX]  3-patch series in W/out-vVERSION; prints cover msgid
#                                   (patch SLOW_PATCH writes $LORE_COST, default 400, to mm/lru_cost)
#   lore.sh inject W FILE...                   deliver message files into the inbox
#   lore.sh smtp   W PORT                      SMTP server on 127.0.0.1:PORT -> inbox
#   lore.sh stop   W                           stop httpd and smtp
#   lore.sh freeport [N]                       print N (default 1) free TCP ports in 20000-30000
#
# Only the documented result goes to stdout; progress and errors go to stderr.
set -euo pipefail

LIST=linux-mm
LIST_ADDR=linux-mm@kvack.org
PY=/usr/bin/python3              # Debian's python (aiosmtpd); not the pyenv one on PATH
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
START_TIMEOUT=${LORE_START_TIMEOUT:-30}   # seconds for a server to come up
STOP_TIMEOUT=${LORE_STOP_TIMEOUT:-10}     # seconds for a server to exit after SIGTERM
SEARCH_TIMEOUT=${LORE_SEARCH_TIMEOUT:-35} # seconds for search to see an injected mail

die()  { echo "lore.sh: error: $*" >&2; exit 1; }
note() { echo "lore.sh: $*" >&2; }
usage() { sed -n '2,18s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2; exit 2; }

# now in milliseconds (for bounded waits)
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# setup_env W: absolute W, HOME and PI_CONFIG inside it, git identity, URL from W/env
setup_env() {
	[ -n "${1:-}" ] || usage
	W=$(realpath -m -- "$1")
	unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_CONFIG_COUNT
	export HOME=$W/home PI_CONFIG=$W/pi/config
	mkdir -p "$HOME" "$W/pi"
	if [ ! -f "$HOME/.gitconfig" ]; then
		git config --global user.name "Lab Dev"
		git config --global user.email dev@example.org
		git config --global init.defaultBranch master
	fi
	URL=
	if [ -f "$W/env" ]; then
		URL=$(sed -n "s/^export URL='\(.*\)'$/\1/p" "$W/env")
	fi
}
need_url() { [ -n "$URL" ] || die "$W/env has no URL: run 'lore.sh init $W PORT' first"; }

check_port() { # PORT: a number, and nothing listens on it yet
	case $1 in ''|*[!0-9]*) die "port '$1' is not a number";; esac
	if [ "$1" -lt 1 ] || [ "$1" -gt 65535 ]; then die "port $1 out of range"; fi
	if ! "$PY" - "$1" <<'EOF'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers do: TIME_WAIT is no conflict
try:
    s.bind(('127.0.0.1', int(sys.argv[1])))
except OSError:
    sys.exit(1)
EOF
	then die "port $1 on 127.0.0.1 is already in use"; fi
}

# alive PID [PATTERN]: process exists, is not a zombie, and its cmdline matches PATTERN
alive() {
	local pid=$1 pat=${2:-} st
	[ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
	st=$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1) || return 1
	[ "$st" != Z ] || return 1
	[ -z "$pat" ] || tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$pat"
}

http_code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@" || true; }

httpd_pid() { if [ -f "$W/httpd.pid" ]; then cat "$W/httpd.pid"; fi; }

# msgid FILE: the Message-ID (without <>) of a message file (header may be folded)
msgid() {
	awk 'BEGIN{IGNORECASE=1}
	     /^$/ {exit}
	     /^[ \t]/ { if (inmid) mid = mid $0; next }
	     { inmid = 0 }
	     tolower($0) ~ /^message-id:/ { inmid = 1; mid = $0 }
	     END { if (match(mid, /<[^>]*>/)) print substr(mid, RSTART+1, RLENGTH-2) }' "$1"
}

# stop_pid NAME PIDFILE PATTERN: SIGTERM, wait (bounded), then SIGKILL
stop_pid() {
	local name=$1 pidfile=$2 pat=$3 pid t_end
	[ -f "$pidfile" ] || { note "$name: no $pidfile, not running"; return 0; }
	pid=$(cat "$pidfile")
	if ! alive "$pid" "$pat"; then
		note "$name: pid $pid is not running"; rm -f "$pidfile"; return 0
	fi
	kill -TERM "$pid" 2>/dev/null || true
	t_end=$(( $(now_ms) + STOP_TIMEOUT * 1000 ))
	while alive "$pid" "$pat"; do
		if [ "$(now_ms)" -ge "$t_end" ]; then
			note "$name: pid $pid still running ${STOP_TIMEOUT}s after SIGTERM, sending SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
			sleep 0.2
			rm -f "$pidfile"
			return 1
		fi
		sleep 0.05
	done
	rm -f "$pidfile"
	note "$name: pid $pid stopped"
}

# ---------------------------------------------------------------------------
cmd_init() { # W PORT
	[ $# -eq 2 ] || usage
	setup_env "$1"; local port=$2
	check_port "$port"
	[ ! -e "$W/inboxes/$LIST" ] || die "$W/inboxes/$LIST already exists (use a fresh W)"
	if alive "$(httpd_pid)" public-inbox-httpd; then die "an httpd already runs for $W (pid $(httpd_pid))"; fi
	URL=http://127.0.0.1:$port
	public-inbox-init -V2 -L full "$LIST" "$W/inboxes/$LIST" "$URL/$LIST/" "$LIST_ADDR" \
		|| die "public-inbox-init failed"
	git config -f "$PI_CONFIG" publicinboxmda.spamcheck none
	{
		printf "export W='%s'\n" "$W"
		printf "export HOME='%s'\n" "$HOME"
		printf "export PI_CONFIG='%s'\n" "$PI_CONFIG"
		printf "export URL='%s'\n" "$URL"
		printf "export INBOX_URL='%s'\n" "$URL/$LIST/"
	} >"$W/env"
	rm -f "$W/httpd.pid"
	setsid public-inbox-httpd -W 0 -l "$URL" --pid-file="$W/httpd.pid" \
		>"$W/httpd.out" 2>"$W/httpd.err" </dev/null &
	local spid=$! t_end code=
	t_end=$(( $(now_ms) + START_TIMEOUT * 1000 ))
	while :; do
		if ! alive "$spid"; then
			die "public-inbox-httpd exited before serving; $W/httpd.err says: $(tail -n 5 "$W/httpd.err")"
		fi
		# An empty inbox answers 404 "No feed found" on new.atom (tested), so readiness is
		# the inbox's help page answering 200: the inbox is configured and served.
		code=$(http_code "$URL/$LIST/_/text/help/")
		[ "$code" = 200 ] && [ -s "$W/httpd.pid" ] && break
		if [ "$(now_ms)" -ge "$t_end" ]; then
			kill "$spid" 2>/dev/null || true
			die "httpd did not answer 200 on $URL/$LIST/_/text/help/ within ${START_TIMEOUT}s (last: $code); see $W/httpd.err"
		fi
		sleep 0.05
	done
	[ "$(cat "$W/httpd.pid")" = "$spid" ] || note "warning: httpd.pid $(cat "$W/httpd.pid") != started pid $spid"
	note "httpd pid $(cat "$W/httpd.pid") serving $URL/$LIST/"
}

cmd_tree() { # W
	[ $# -eq 1 ] || usage
	setup_env "$1"
	[ ! -e "$W/linux" ] || die "$W/linux already exists"
	git init -q -b master "$W/linux"
	cd "$W/linux"
	mkdir -p mm include/linux
	printf '%s\n' '// SPDX-License-Identifier: GPL-2.0' '#include <linux/mm.h>' '' \
	 'static unsigned long shrink_lruvec(struct lruvec *lruvec)' '{' \
	 '	unsigned long nr_reclaimed = 0;' '' \
	 '	spin_lock_irq(&pgdat->lru_lock);' \
	 '	nr_reclaimed += isolate_lru_pages(lruvec);' \
	 '	spin_unlock_irq(&pgdat->lru_lock);' '' '	return nr_reclaimed;' '}' > mm/vmscan.c
	printf '%s\n' '#ifndef _LINUX_MMZONE_H' '#define _LINUX_MMZONE_H' '' \
	 'struct pglist_data {' '	spinlock_t lru_lock;' '};' '' \
	 'struct lruvec {' '	struct list_head lists[5];' '};' '' '#endif' > include/linux/mmzone.h
	echo 0 > mm/lru_cost
	git add -A
	# fixed identity and dates: the base sha is the same in every run
	GIT_AUTHOR_NAME="Lab Dev" GIT_AUTHOR_EMAIL=dev@example.org \
	GIT_COMMITTER_NAME="Lab Dev" GIT_COMMITTER_EMAIL=dev@example.org \
	GIT_AUTHOR_DATE="2022-12-11T12:00:00Z" GIT_COMMITTER_DATE="2022-12-11T12:00:00Z" \
		git commit -q -m "Linux 6.1"
	GIT_COMMITTER_NAME="Lab Dev" GIT_COMMITTER_EMAIL=dev@example.org \
	GIT_COMMITTER_DATE="2022-12-11T12:00:00Z" \
		git tag -a v6.1 -m "Linux 6.1"
	git rev-parse 'v6.1^{commit}'
}

# commit_patch N SUBJECT BODY SLOW: commit the work tree; patch N sets lru_cost when N == SLOW
commit_patch() {
	local n=$1 subj=$2 body=$3 slow=$4
	if [ "$n" = "$slow" ]; then echo "${LORE_COST:-400}" > mm/lru_cost; fi
	git diff --quiet && die "patch $n ($subj) changes nothing"
	git commit -qam "$subj" -m "$body" -m "Signed-off-by: Lab Dev <dev@example.org>"
}

cmd_series() { # W VERSION SLOW_PATCH [FIX]
	[ $# -eq 3 ] || [ $# -eq 4 ] || usage
	setup_env "$1"; local v=$2 slow=$3 fix=${4:-}
	case $v in ''|*[!0-9]*|0) die "VERSION '$v' must be a number >= 1";; esac
	case $slow in 0|1|2|3) ;; *) die "SLOW_PATCH '$slow' must be 0 (none), 1, 2 or 3";; esac
	case $fix in *$'\n'*) die "FIX must be one line";; esac
	[ -d "$W/linux/.git" ] || die "$W/linux missing: run 'lore.sh tree $W' first"
	local br=memcg-lru-lock-v$v out=$W/out-v$v
	[ ! -e "$out" ] || die "$out already exists (series v$v was made already)"
	cd "$W/linux"
	git rev-parse -q --verify "refs/heads/$br" >/dev/null && die "branch $br already exists in $W/linux"
	[ -z "$(git status --porcelain)" ] || die "$W/linux has uncommitted changes"
	# LORE_DATE (optional, any git date) fixes author+committer dates, hence the commit shas
	if [ -n "${LORE_DATE:-}" ]; then export GIT_AUTHOR_DATE=$LORE_DATE GIT_COMMITTER_DATE=$LORE_DATE; fi
	export GIT_AUTHOR_NAME="Lab Dev" GIT_AUTHOR_EMAIL=dev@example.org
	export GIT_COMMITTER_NAME="Lab Dev" GIT_COMMITTER_EMAIL=dev@example.org
	git checkout -q -b "$br" v6.1

	sed -i 's/^\tstruct list_head lists\[5\];$/&\n\tspinlock_t lru_lock;/' include/linux/mmzone.h
	commit_patch 1 "mm: add lru_lock to struct lruvec" "Add a per-lruvec spinlock." "$slow"

	sed -i 's/&pgdat->lru_lock/\&lruvec->lru_lock/' mm/vmscan.c
	if [ -n "$fix" ]; then
		FIX=$fix perl -pi -e 's|^\tspin_lock_irq\(&lruvec->lru_lock\);$|\t/* $ENV{FIX} */\n$&|' mm/vmscan.c
	fi
	commit_patch 2 "mm/vmscan: use lruvec->lru_lock in shrink_lruvec" "Use the per-lruvec lock in reclaim." "$slow"

	sed -i '0,/^\tspinlock_t lru_lock;$/s//\tint node_id;/' include/linux/mmzone.h
	commit_patch 3 "mm: remove pgdat->lru_lock" "No users are left." "$slow"
	git checkout -q master

	# blurb; link to the previous version when it exists
	local prev=$((v - 1)) prevcover='' blurb
	blurb="Per-lruvec lru_lock: reclaim takes the lock of the lruvec it works on"$'\n'"instead of the node-wide pgdat->lru_lock."
	if [ -f "$W/out-v$prev/v$prev-0000-cover-letter.patch" ]; then
		prevcover=$(msgid "$W/out-v$prev/v$prev-0000-cover-letter.patch")
	fi
	local changes=
	if [ "$v" -ge 2 ]; then
		[ -z "$fix" ] || changes+=$'\n'"- $fix"
		[ "$slow" != 0 ] || changes+=$'\n'"- mm/lru_cost is left alone"
		if [ -n "$prevcover" ]; then
			need_url
			changes+=$'\n'"- Link to v$prev: $URL/$LIST/$prevcover/"
		fi
	fi
	[ -z "$changes" ] || blurb+=$'\n\n'"Changes in v$v:$changes"

	# git's Message-IDs are <sha|cover>.<unix time>.git.<from>: two versions made in the
	# same second (or same patch sha) would collide, so retry in the next second.
	local others tries=0 c ids
	others=$(for d in "$W"/out-v*; do [ -d "$d" ] || continue; for f in "$d"/*.patch; do [ -f "$f" ] && msgid "$f"; done; done | sort -u)
	while :; do
		rm -rf "$out"
		git format-patch -q --cover-letter --base=v6.1 -v"$v" --thread \
			--to="$LIST_ADDR" --from="Lab Dev <dev@example.org>" -o "$out" "v6.1..$br"
		ids=$(for f in "$out"/*.patch; do msgid "$f"; done | sort)
		if [ -z "$others" ] || [ -z "$(comm -12 <(echo "$ids") <(echo "$others"))" ]; then break; fi
		tries=$((tries + 1))
		[ "$tries" -le 3 ] || die "format-patch keeps producing Message-IDs of an earlier version"
		sleep 1
	done
	c=$out/v$v-0000-cover-letter.patch
	[ "$(find "$out" -name '*.patch' | wc -l)" = 4 ] || die "format-patch did not write 4 files into $out"
	sed -i 's/\*\*\* SUBJECT HERE \*\*\*/mm: per-memcg lru_lock/' "$c"
	BLURB=$blurb perl -0pi -e 's/\*\*\* BLURB HERE \*\*\*/$ENV{BLURB}/' "$c"
	msgid "$c"
}

cmd_inject() { # W FILE...
	[ $# -ge 2 ] || usage
	setup_env "$1"; shift
	local f em=$HOME/.public-inbox/emergency last='' rc
	for f in "$@"; do
		[ -f "$f" ] || die "inject: no such file: $f"
		rc=0
		{ printf 'Received: from lab-bridge by localhost with local; %s\n' "$(date -R)"
		  sed '1{/^From /d}' "$f"; } |   # an mbox From_ line ("From sha ..."/"From mboxrd@z ...")
			ORIGINAL_RECIPIENT=$LIST_ADDR public-inbox-mda || rc=$?
		[ "$rc" = 0 ] || die "public-inbox-mda exited $rc for $f"
		if [ -n "$(find "$em" -type f 2>/dev/null)" ]; then
			die "after $f the emergency Maildir $em is not empty (not delivered: no To/Cc $LIST_ADDR, or a duplicate Message-ID?): $(find "$em" -type f | tr '\n' ' ')"
		fi
		last=$(msgid "$f")
	done
	local pid; pid=$(httpd_pid)
	if alive "$pid" public-inbox-httpd; then
		kill -HUP "$pid"   # drop the stale Xapian reader (search lag pitfall)
		if [ -n "$last" ] && [ -n "$URL" ]; then
			local t_end=$(( $(now_ms) + SEARCH_TIMEOUT * 1000 ))
			until [ "$(http_code -G "$URL/$LIST/" --data-urlencode "q=mid:$last" -d x=A)" = 200 ]; do
				[ "$(now_ms)" -lt "$t_end" ] || die "search does not find <$last> ${SEARCH_TIMEOUT}s after injecting it"
				sleep 0.1
			done
		fi
	else
		note "no httpd running for $W: not sent HUP"
	fi
}

cmd_smtp() { # W PORT
	[ $# -eq 2 ] || usage
	setup_env "$1"; local port=$2
	need_url
	check_port "$port"
	if alive "$(cat "$W/smtp.pid" 2>/dev/null || true)" smtp_to_inbox.py; then
		die "an smtp bridge already runs for $W (pid $(cat "$W/smtp.pid"))"
	fi
	[ -f "$HERE/smtp_to_inbox.py" ] || die "missing $HERE/smtp_to_inbox.py"
	mkdir -p "$W/smtp"
	rm -f "$W/smtp.ready"
	LORE_W=$W LORE_URL=$URL/$LIST/ LORE_ADDR=$LIST_ADDR \
		setsid "$PY" "$HERE/smtp_to_inbox.py" 127.0.0.1 "$port" \
		>"$W/smtp.out" 2>"$W/smtp.err" </dev/null &
	local spid=$! t_end
	echo "$spid" >"$W/smtp.pid"
	t_end=$(( $(now_ms) + START_TIMEOUT * 1000 ))
	while :; do
		alive "$spid" || die "smtp bridge exited at start; $W/smtp.err says: $(tail -n 5 "$W/smtp.err")"
		if [ -f "$W/smtp.ready" ] && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
		if [ "$(now_ms)" -ge "$t_end" ]; then
			kill "$spid" 2>/dev/null || true
			die "smtp bridge not accepting on 127.0.0.1:$port within ${START_TIMEOUT}s; see $W/smtp.err"
		fi
		sleep 0.05
	done
	note "smtp bridge pid $spid on 127.0.0.1:$port"
}

cmd_stop() { # W
	[ $# -eq 1 ] || usage
	[ -d "$1" ] || die "no work dir $1"
	setup_env "$1"
	local rc=0
	stop_pid smtp "$W/smtp.pid" smtp_to_inbox.py || rc=1
	stop_pid httpd "$W/httpd.pid" public-inbox-httpd || rc=1
	rm -f "$W/smtp.ready"
	return $rc
}

cmd_freeport() { # [N]
	local n=${1:-1}
	case $n in ''|*[!0-9]*) die "N must be a number";; esac
	"$PY" - "$n" <<'EOF'
import random, socket, sys
n, got = int(sys.argv[1]), []
ports = list(range(20000, 30001))
random.shuffle(ports)
for p in ports:
    if len(got) == n:
        break
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(('127.0.0.1', p))
    except OSError:
        continue
    finally:
        s.close()
    got.append(p)
if len(got) < n:
    sys.exit('lore.sh: error: not enough free ports in 20000-30000')
print('\n'.join(map(str, got)))
EOF
}

[ $# -ge 1 ] || usage
cmd=$1; shift
case $cmd in
	init|tree|series|inject|smtp|stop|freeport) "cmd_$cmd" "$@";;
	-h|--help|help) usage;;
	*) echo "lore.sh: unknown subcommand '$cmd'" >&2; usage;;
esac
