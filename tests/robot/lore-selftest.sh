#!/bin/bash
# lore-selftest.sh - end-to-end check of lore.sh (local public-inbox + SMTP bridge + b4).
# Usage: lore-selftest.sh [WORKDIR]    (default: a new mktemp dir under /tmp; kept on failure)
# Prints PASS/FAIL/TIME lines; exits non-zero when any check fails.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LORE=$HERE/lore.sh
if [ $# -ge 1 ]; then
	W=$(realpath -m -- "$1")
	[ ! -e "$W" ] || { echo "lore-selftest: $W exists; give a new directory" >&2; exit 2; }
	mkdir -p "$W"
else
	W=$(mktemp -d /tmp/lore-selftest.XXXXXX)
fi

pass=0; fail=0
ok()  { echo "PASS: $*"; pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
check() { local what=$1; shift; if "$@" >/dev/null 2>&1; then ok "$what"; else bad "$what"; fi; }
ms() { echo $(( $(date +%s%N) / 1000000 )); }
t0=0; tick() { t0=$(ms); }; tock() { echo "TIME $1: $(( $(ms) - t0 )) ms"; }
# run STEP CMD...: a lore.sh step that must succeed; stop here when it does not
run() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what (exit $?)"; finish; fi; }

stopped=0
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() { if [ "$stopped" = 0 ]; then stopped=1; "$LORE" stop "$W" 2>>"$W/selftest.err" || true; fi; }
finish() {
	if [ "$stopped" = 0 ]; then stopped=1; "$LORE" stop "$W" 2>>"$W/selftest.err" || bad "lore.sh stop"; fi
	echo "$pass passed, $fail failed (work dir $W)"
	if [ "$fail" = 0 ]; then rm -rf "$W"; exit 0; fi
	exit 1
}
trap cleanup EXIT      # an unexpected error (set -e) still stops the servers
trap 'echo "FAIL: interrupted"; fail=$((fail + 1)); finish' INT TERM
START=$(ms)

PORTS=$("$LORE" freeport 2) || { echo "FAIL: no free ports" ; exit 1; }
HPORT=${PORTS%%$'\n'*} SPORT=${PORTS##*$'\n'}
echo "work dir $W, httpd port $HPORT, smtp port $SPORT"
URL=http://127.0.0.1:$HPORT
IN=$URL/linux-mm

tick; run "init: inbox + httpd" "$LORE" init "$W" "$HPORT"; tock "init (httpd up)"
HPID=$(cat "$W/httpd.pid")
check "W/env is sourceable and names URL" sh -c ". '$W/env' && [ \"\$URL\" = '$URL' ] && [ \"\$HOME\" = '$W/home' ] && [ \"\$PI_CONFIG\" = '$W/pi/config' ]"

tick; BASE=$("$LORE" tree "$W") || { bad "tree"; finish; }; tock "tree"
check "tree prints the deterministic base sha" test "$BASE" = bb22bebfc2e892bb9073861fc3aae857169aae47
check "v6.1 is the base" test "$(git -C "$W/linux" rev-parse 'v6.1^{commit}')" = "$BASE"

tick; COVER2=$("$LORE" series "$W" 2 2) || { bad "series v2"; finish; }; tock "series v2"
check "series v2 prints the cover Message-ID" test "$COVER2" = "$(sed -n 's/^Message-Id: <\(.*\)>$/\1/p' "$W"/out-v2/v2-0000-cover-letter.patch)"
check "v2 cover subject filled in" grep -q '^Subject: \[PATCH v2 0/3\] mm: per-memcg lru_lock$' "$W"/out-v2/v2-0000-cover-letter.patch
check "v2 patch 2 sets mm/lru_cost to 400" grep -q '^+400$' "$W"/out-v2/v2-0002-*.patch
P2=$(sed -n 's/^Message-Id: <\(.*\)>$/\1/p' "$W"/out-v2/v2-0002-*.patch)

tick; run "inject v2 (4 mails)" "$LORE" inject "$W" "$W"/out-v2/*.patch; tock "inject v2 (4 mails, HUP, search sees the last)"
curl -s "$IN/new.atom" >"$W/new.atom" || true
check "new.atom lists the v2 cover" grep -q "<title>\[PATCH v2 0/3\] mm: per-memcg lru_lock</title>" "$W/new.atom"
check "new.atom links the v2 cover by Message-ID" grep -q "href=\"$IN/$COVER2/\"" "$W/new.atom"
N=$(curl -s "$IN/$COVER2/t.mbox.gz" | gunzip | grep -c '^From mboxrd@z' || true)
check "t.mbox.gz of the cover holds 4 messages (got $N)" test "$N" = 4
check "search sees patch 2 right after inject" test "$(curl -s -o /dev/null -w '%{http_code}' -G "$IN/" --data-urlencode "q=mid:$P2" -d x=A)" = 200

# --- SMTP bridge -----------------------------------------------------------------
tick; run "smtp bridge" "$LORE" smtp "$W" "$SPORT"; tock "smtp start"
SPID=$(cat "$W/smtp.pid")
cat >"$W/reply.eml" <<EOF
From: Lab Bot <lab@example.org>
To: linux-mm@kvack.org
Subject: Re: [PATCH v2 2/3] mm/vmscan: use lruvec->lru_lock in shrink_lruvec
Date: $(date -R)
Message-ID: <lab-selftest-reply.$$@example.org>
In-Reply-To: <$P2>
References: <$COVER2> <$P2>

Patch 2 makes lru_cost 400.
EOF
tick
check "curl sends the reply over SMTP (250)" curl -sS --max-time 60 --url "smtp://127.0.0.1:$SPORT" \
	--mail-from a@b.org --mail-rcpt linux-mm@kvack.org --upload-file "$W/reply.eml"
tock "smtp send (mda + HUP before 250)"
check "reply shows in /<patch2>/T/" sh -c "curl -s '$IN/$P2/T/' | grep -q 'lab-selftest-reply.$$@example.org'"
check "reply kept as W/smtp/1.eml" grep -q "^Message-ID: <lab-selftest-reply.$$@example.org>$" "$W/smtp/1.eml"
check "no W/smtp/2.eml" test ! -e "$W/smtp/2.eml"
N=$(curl -s "$IN/$COVER2/t.mbox.gz" | gunzip | grep -c '^From mboxrd@z' || true)
check "thread now holds 5 messages (got $N)" test "$N" = 5
check "emergency Maildir is empty" test -z "$(find "$W/home/.public-inbox/emergency" -type f 2>/dev/null)"

# --- b4 from the local inbox -------------------------------------------------------
export HOME=$W/home
export GIT_CONFIG_COUNT=5 \
	GIT_CONFIG_KEY_0=b4.midmask GIT_CONFIG_VALUE_0="$IN/%s" \
	GIT_CONFIG_KEY_1=b4.linkmask GIT_CONFIG_VALUE_1="$IN/%s/" \
	GIT_CONFIG_KEY_2=b4.searchmask GIT_CONFIG_VALUE_2="$IN/?x=m&t=1&q=%s" \
	GIT_CONFIG_KEY_3=b4.attestation-policy GIT_CONFIG_VALUE_3=off \
	GIT_CONFIG_KEY_4=b4.cache-expire GIT_CONFIG_VALUE_4=0
git clone -q --single-branch -b master "$W/linux" "$W/lab"
mkdir -p "$W/am"
cd "$W/lab"
tick
if b4 -n am -C -T -v 2 -P 1-2 -o "$W/am" "$COVER2" >"$W/b4am.log" 2>&1; then ok "b4 am -v 2 -P 1-2"; else bad "b4 am (see $W/b4am.log)"; fi
tock "b4 am"
MBX=$(find "$W/am" -name "*.mbx" | head -n 1)
check "b4 wrote an .mbx" test -n "$MBX"
check "b4 used the base-commit" grep -q "base-commit $BASE" "$W/b4am.log"
git checkout -q -b lab v6.1
if [ -n "$MBX" ] && GIT_COMMITTER_NAME="Lab Bot" GIT_COMMITTER_EMAIL=lab@example.org \
	git am -q --committer-date-is-author-date "$MBX" >"$W/gitam.log" 2>&1; then ok "git am on v6.1"; else bad "git am (see $W/gitam.log)"; git am --abort 2>/dev/null || true; fi
check "2 commits on v6.1" test "$(git rev-list --count v6.1..HEAD)" = 2
check "mm/lru_cost is 400" test "$(cat mm/lru_cost)" = 400
check "patch 3 not applied (pgdat lock still there)" grep -q '^	spinlock_t lru_lock;$' include/linux/mmzone.h
unset GIT_CONFIG_COUNT GIT_CONFIG_KEY_0 GIT_CONFIG_VALUE_0 GIT_CONFIG_KEY_1 GIT_CONFIG_VALUE_1 \
	GIT_CONFIG_KEY_2 GIT_CONFIG_VALUE_2 GIT_CONFIG_KEY_3 GIT_CONFIG_VALUE_3 GIT_CONFIG_KEY_4 GIT_CONFIG_VALUE_4
cd "$W"

# --- v3 (not slow): different shas, linked to v2 ---------------------------------
tick; COVER3=$("$LORE" series "$W" 3 0 "comment the lock in shrink_lruvec") || { bad "series v3"; finish; }; tock "series v3"
check "v3 cover differs from v2" test "$COVER3" != "$COVER2"
check "v3 cover says Changes in v3" grep -q '^Changes in v3:$' "$W"/out-v3/v3-0000-cover-letter.patch
check "v3 cover links v2" grep -qF -- "- Link to v2: $IN/$COVER2/" "$W"/out-v3/v3-0000-cover-letter.patch
check "v3 patches touch no mm/lru_cost" sh -c "! grep -q lru_cost '$W'/out-v3/v3-000[123]-*.patch"
check "v2 and v3 patch 2 shas differ" test "$(git -C "$W/linux" rev-parse memcg-lru-lock-v2~1)" != "$(git -C "$W/linux" rev-parse memcg-lru-lock-v3~1)"
tick; run "inject v3" "$LORE" inject "$W" "$W"/out-v3/*.patch; tock "inject v3 (4 mails)"
check "new.atom lists the v3 cover" sh -c "curl -s '$IN/new.atom' | grep -q 'href=\"$IN/$COVER3/\"'"
check "reinjecting a mail fails loudly" sh -c "! '$LORE' inject '$W' '$W/reply.eml'"
rm -rf "$W/home/.public-inbox/emergency"

# --- stop --------------------------------------------------------------------------
tick; stopped=1
if "$LORE" stop "$W" 2>>"$W/selftest.err"; then ok "stop"; else bad "stop"; fi
tock "stop"
# gone = no /proc entry, or a zombie waiting for pid 1 to reap it (orphans of lore.sh)
# shellcheck disable=SC2317  # used through check
gone() { [ ! -e "/proc/$1" ] || [ "$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" = Z ]; }
check "httpd $HPID gone" gone "$HPID"
check "smtp $SPID gone" gone "$SPID"
check "nothing listens on $HPORT or $SPORT" sh -c "! ss -Htln | grep -Eq ':($HPORT|$SPORT) '"
echo "TIME total: $(( $(ms) - START )) ms"
finish
