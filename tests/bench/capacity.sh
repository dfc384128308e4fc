#!/bin/bash
# capacity.sh - the capacity plan's numbers (issue 21, point 6), measured on
# this machine: bytes per stored sample and the cost of kperfd's reads as the
# database grows. For each step of CAPACITY_STEPS (stored samples, default
# "50000000 500000000") it builds the history to that size and prints
#   size:  the samples' heap and indexes (pg_table_size and pg_indexes_size
#          summed over `sample`'s partitions, pg_total_relation_size), bytes
#          per sample, and the load's time;
#   reads: p50/p99 (1 client) of computed 2,000-point trends (200 metrics of
#          one key group, then one metric of each of up to 100 key groups:
#          every request a different key, load -k, as bench.sh) and of
#          computed compares of 2 kernels x 5,000 metrics (3 runs x 5
#          iterations a side; 50 pairs, one request each, then bench.sh's one
#          pair x 100), each first as the first read with cold buffers
#          (PostgreSQL and kperfd restarted, the database's files dropped from
#          the page cache) and then computed again warm, with PostgreSQL's and
#          kperfd's CPU per request; all of it twice (the machine is shared:
#          the two rounds show its noise).
# Then (CAPACITY_ARCHIVE, 6) the oldest months go through `kperfd archive`:
# its time, the summaries' bytes against the samples', the trends and the
# compares of archived pairs read from summaries, and one month restored.
# The history (tests/bench/sql/capacity-*.sql): a window of CAPACITY_MONTHS
# (24) whole months before the current one; lab key groups of 2,000 runs
# each (one per commit of a 2,000-commit chain spread over the window, so a
# trend's runs span every month), 1,000 metrics x 1 iteration a run (2 M
# samples a group), as many groups as the step's size takes; and
# CAPACITY_PAIRS (50) + 1 review pairs (base, base patched) of 3 runs x 5,000
# metrics x 5 iterations each, spread over the window (7.65 M samples). The
# first step also posts 2,000 runs of 1,000 values through kperfd into the
# current month (20 key groups interleaved, as a lab's runs arrive), to show
# what kperfd's own writes cost per sample: an index grown by inserts in the
# middle is less dense than one built by sort.
# Each history month is built the fast way (capacity-attach.sql): a plain table with
# the month's bound as a CHECK, COPY FREEZE of rows made by generate_series
# (capacity-month.sql, a second psql), its two indexes built, ATTACH; a later
# step rebuilds every month with the new groups added and swaps it in.
# DISK: before each step the bytes it needs are estimated from the bytes per
# sample measured so far (200 before the first step); free space on the
# cluster's file system is never let below CAPACITY_FLOOR_GB (15 GiB): a step
# that does not fit is lowered to the largest multiple of 50 M samples (to a
# key group) that does, and says so; a load that finds less free space than it still needs
# (other work shares the disk) stops. The cluster is removed on exit.
# PostgreSQL: fsync, full_page_writes and synchronous_commit off, wal_level
# minimal (the load writes next to no WAL), shared_buffers 1GB,
# maintenance_work_mem 1GB, one parallel worker per index build.
# BUILD names the build directory.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD:-build}
make -s BUILD="$build" "$build/kperfd" "$build/bench/load" >/dev/null

steps=${CAPACITY_STEPS:-50000000 500000000}
months=${CAPACITY_MONTHS:-24}
pairs=${CAPACITY_PAIRS:-50}
floor=$(( ${CAPACITY_FLOOR_GB:-15} * 1073741824 ))
gib=1073741824
per_group=2000000                       # 2,000 runs x 1,000 metrics x 1 iteration
fixed=$(( (pairs + 1) * 2 * 3 * 25000 ))  # the review pairs' runs
ingest_runs=2000                        # posted through kperfd in the first step
ingest_n=$(( ingest_runs * 1000 ))

tmp=$(mktemp -d /tmp/kperf-capacity.XXXXXX)
chmod 755 "$tmp"
pgport=$((58000 + $$ % 1000))
kpid=
cleanup() {
	[ -n "$kpid" ] && kill "$kpid" 2>/dev/null && wait "$kpid" 2>/dev/null || true
	scripts/pg.sh stop "$tmp/pg" >/dev/null 2>&1 || scripts/pg.sh kill "$tmp/pg" || true
	rm -rf "$tmp"
	echo "capacity: removed $tmp; /tmp has $(df -h --output=avail /tmp | tail -n 1 | tr -d ' ') free" >&2
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

pgopts="-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c wal_level=minimal"
pgopts="$pgopts -c max_wal_senders=0 -c max_wal_size=4GB -c checkpoint_timeout=30min"
pgopts="$pgopts -c shared_buffers=1GB -c maintenance_work_mem=1GB -c max_parallel_maintenance_workers=1"
pg_start() { KPERF_PG_OPTIONS="$pgopts" scripts/pg.sh start "$tmp/pg" "$pgport"; }
pg_start
scripts/pg.sh createdb "$tmp/pg" "$pgport" capacity
export PGTZ=UTC
export KPERF_DATABASE_URL="host=$tmp/pg/sock port=$pgport user=kperf dbname=capacity"
export KPERF_BOOTSTRAP_TOKEN=capacity_collector_token_01
export KPERF_CONFIG=/dev/null
psql_q() { psql -X -q -v ON_ERROR_STOP=1 "$KPERF_DATABASE_URL" "$@"; }
"$build/kperfd" migrate >>"$tmp/kperfd.log" 2>&1 || { cat "$tmp/kperfd.log" >&2; exit 1; }

# kperfd serves reads only (--worker 0: no decisions are made of the posted
# runs; the reads measured are what a node behind a balancer, or one reading
# a standby, does)
start_kperfd() {
	rm -f "$tmp/port"
	"$build/kperfd" --port 0 --port-file "$tmp/port" --worker 0 2>>"$tmp/kperfd.log" &
	kpid=$!
	for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
	[ -s "$tmp/port" ] || { echo "kperfd did not start" >&2; tail -n 20 "$tmp/kperfd.log" >&2; exit 1; }
	url=http://127.0.0.1:$(cat "$tmp/port")
}
stop_kperfd() {
	if [ -n "$kpid" ]; then kill "$kpid"; wait "$kpid" 2>/dev/null || true; kpid=; fi
}

free_b() { df -B1 --output=avail "$tmp" | tail -n 1 | tr -d ' '; }
gb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1073741824 }'; }
mega() { awk -v n="$1" 'BEGIN { printf "%.1f M", n / 1e6 }'; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }'; }

t_all=$(now)
echo "kperf capacity on $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM ($(date -u +%Y-%m-%dT%H:%MZ))"
echo "PostgreSQL: $pgopts"
echo "history: $months months; lab key groups of 2,000 runs x 1,000 metrics x 1 iteration;" \
	"$((pairs + 1)) review pairs of 3 runs x 5,000 metrics x 5 iterations a side"
echo "disk: $(gb "$(free_b)") GiB free on $(df --output=target "$tmp" | tail -n 1), kept above $(gb "$floor") GiB"

psql_q -c "CREATE EXTENSION pgstattuple"
psql_q -v months="$months" -v pairs="$pairs" -f tests/bench/sql/capacity-setup.sql
m0=$(psql_q -At -c "SELECT min(id) FROM metric WHERE name LIKE 'lab.m%'")
[ "$(psql_q -At -c "SELECT max(id) - min(id) FROM metric WHERE name LIKE 'lab.m%'")" = 4999 ] ||
	{ echo "capacity: the metric ids are not one range" >&2; exit 1; }
psql_q -At -F ' ' -c "SELECT 'sample_' || to_char(m, 'YYYYMM'), to_char(m, 'YYYY-MM-DD\"T00:00:00+00\"'),
		to_char(m + interval '1 month', 'YYYY-MM-DD\"T00:00:00+00\"')
	FROM cap_window w, generate_series(w.first, w.last - interval '1 month', interval '1 month') m" \
	> "$tmp/months"
dboid=$(psql_q -At -c "SELECT oid FROM pg_database WHERE datname = current_database()")

# ---- one month: rows made by one psql, COPY FREEZE into a new table by another
load_month() { # table lo hi
	psql_q -v lo="$2" -v hi="$3" -v m0="$m0" -f tests/bench/sql/capacity-month.sql </dev/null |
		psql -X -v ON_ERROR_STOP=1 "$KPERF_DATABASE_URL" -v tbl="$1" -v lo="$2" -v hi="$3" \
			-v pk="$1_pkey" -v kg="$1_key_group_id_metric_id_run_id_iteration_idx" \
			-f tests/bench/sql/capacity-attach.sql > "$tmp/attach.out"
	awk '$1 == "COPY" { print $2 }' "$tmp/attach.out"
}

# ---- the first step's posted runs: 20 key groups x 100 runs of 1,000 values,
# 100 requests of 20 runs (one of each group), as a lab's runs arrive
post_ingest() {
	local t0 code
	for b in $(seq 0 99); do
		awk -v b="$b" 'BEGIN {
			srand(b + 1)
			printf "{\"runs\":["
			for (g = 0; g < 20; g++) {
				printf "%s{\"run_id\":\"cap-ing-%d-%d\",\"machine\":{\"name\":\"ing-%d\"},", g ? "," : "", g, b, g
				printf "\"kernel\":{\"commit\":\"fd%038d\"},", b
				printf "\"test\":{\"suite\":\"will-it-scale\",\"params\":{\"nr_task\":\"1\"}},\"metrics\":{"
				for (k = 0; k < 1000; k++)
					printf "%s\"lab.m%04d\":[%.4f]", k ? "," : "", k, (1000 + 10 * (k % 500)) * (1 + (rand() - 0.5) * 0.02)
				printf "}}"
			}
			printf "]}"
		}' > "$tmp/ingest-$b.json"
	done
	lsn0=$(psql_q -At -c "SELECT pg_current_wal_lsn()")
	t0=$(now)
	for b in $(seq 0 99); do
		code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $KPERF_BOOTSTRAP_TOKEN" \
			-H 'Content-Type: application/json' --data-binary @"$tmp/ingest-$b.json" "$url/api/v1/runs")
		[ "$code" = 201 ] || { echo "capacity: posting ingest batch $b: HTTP $code" >&2; exit 1; }
	done
	echo "posted $ingest_runs runs ($(mega $ingest_n) samples) through kperfd in $(since "$t0") s (1 client);" \
		"WAL written: $(psql_q -At -c "SELECT round(pg_wal_lsn_diff(pg_current_wal_lsn(), '$lsn0') / $ingest_n, 1)")" \
		"B a sample (no full-page images here: full_page_writes=off)"
	rm -f "$tmp"/ingest-*.json
}

# ---- reads
trend_metric="/api/v1/trend?machine=lab-000&suite=will-it-scale&params=nr_task=1&metric=lab.m0{i}"
trend_group() { # keys: one trend (lab.m0500) of each of groups lab-000 .. keys - 1
	local last=$(( $1 > 1 ? $1 - 1 : 0 )) zeros
	zeros=$(printf '%*s' $((3 - ${#last})) '' | tr ' ' 0) # load -k pads {i} to the width of keys - 1
	echo "/api/v1/trend?machine=lab-$zeros{i}&suite=will-it-scale&params=nr_task=1&metric=lab.m0500"
}
sha() { printf '%s%038d' "$1" "$2"; }
compare_path() { echo "/api/v1/compare?base=$(sha fb "$1")&target=$(sha fc "$1")"; }
# p50 p99 of a file of latencies in seconds, as load.c takes them
pct() { sort -n "$1" | awk '{ t[NR - 1] = $1 * 1000 } END { i = int(NR * 0.99); if (i > NR - 1) i = NR - 1
	printf "%.1f %.1f", t[int((NR - 1) / 2)], t[i] }'; }
# p50 p99 of n GETs of a path with {i} in it, each a different key (load -k)
keyed_lat() { # n path
	"$build/bench/load" -n "$1" -k "$1" "$url$2" | awk '{ printf "%.1f %.1f", $3, $4 }'
}
# p50 p99 of the measured pairs' compares, one request each
compare_lat() { # suffix
	local code t
	: > "$tmp/lat"
	for j in $(seq 0 $((pairs - 1))); do
		read -r code t < <(curl -s -o /dev/null -w '%{http_code} %{time_total}\n' "$url$(compare_path "$j")$1")
		[ "$code" = 200 ] || { echo "capacity: compare pair $j: HTTP $code" >&2; exit 1; }
		echo "$t" >> "$tmp/lat"
	done
	pct "$tmp/lat"
}
# What serving kperfd's requests costs PostgreSQL: CPU ticks and bytes read
# from storage (/proc/PID/io read_bytes: the page cache's misses) of the
# backends of kperfd's connections, and kperfd's CPU ticks; autovacuum and
# the other background processes are left out.
pg_usage() { # "ticks bytes_read"
	local pm p
	pm=$(head -n 1 "$tmp/pg/data/postmaster.pid")
	for p in $(ps -o pid=,args= --ppid "$pm" | awk '/postgres: kperf capacity/ { print $1 }'); do
		{ awk '{ print "t", $14 + $15 }' "/proc/$p/stat"; awk '$1 == "read_bytes:" { print "b", $2 }' "/proc/$p/io"; } \
			2>/dev/null || true
	done | awk '{ s[$1] += $2 } END { printf "%d %d\n", s["t"], s["b"] }'
}
k_ticks() { awk '{ print $14 + $15 }' "/proc/$kpid/stat"; }
hz=$(getconf CLK_TCK)
mark() { read -r m_pg m_io < <(pg_usage); m_k=$(k_ticks); }
per() { # requests since mark: "pg_cpu_ms kperfd_cpu_ms KB_read" per request
	local pg io
	read -r pg io < <(pg_usage)
	awk -v p="$((pg - m_pg))" -v b="$((io - m_io))" -v k="$(( $(k_ticks) - m_k ))" -v n="$1" -v hz="$hz" \
		'BEGIN { printf "%.1f %.1f %.0f\n", p * 1000 / hz / n, k * 1000 / hz / n, b / 1024 / n }'
}
# Cold: kperfd and PostgreSQL stopped, the database's files written out and
# dropped from the page cache (posix_fadvise DONTNEED through dd), both
# started again; one read of a trend of the last group (never measured) and
# of the spare pair (the catalogue, kperfd's commit and metric caches, the
# indexes' upper levels: what a server that has been up any time has) before
# the measured ones.
cold_restart() {
	stop_kperfd
	scripts/pg.sh stop "$tmp/pg"
	find "$tmp/pg/data/base/$dboid" -type f -print0 | xargs -0 sync
	find "$tmp/pg/data/base/$dboid" -type f -exec dd if={} iflag=nocache count=0 status=none \;
	pg_start
	start_kperfd
	curl -sf -o /dev/null "$url/healthz"
	curl -sf -o /dev/null "$url/api/v1/trend?machine=lab-$(printf %03d $((groups - 1)))&suite=will-it-scale&params=nr_task=1&metric=lab.m0999"
	curl -sf -o /dev/null "$url$(compare_path "$pairs")"
}

printf '%s\n' "step samples GiB_total GiB_heap GiB_idx B/sample B_heap B_pk B_kg load_s" > "$tmp/sizes"
printf '%s\n' "step round trend_first KB/t trend_computed pg_ms/t k_ms/t group_first KB/t group_computed compare_first KB/c compare_computed pg_ms/c k_ms/c compare_1pair" > "$tmp/reads"
hist=0    # samples in the history months
groups=0  # lab key groups
bps=200   # bytes per history sample, until measured
step=0
fits() { # history samples: do they fit in $avail bytes?
	[ $(( ($1 - hist) * bps + ($1 + hist) * bps / months + 2 * gib )) -le "$avail" ]
}
for want in $steps; do
	step=$((step + 1))
	extra=0
	[ "$step" = 1 ] && extra=$ingest_n
	ng=$(( (want - fixed - extra + per_group / 2) / per_group ))
	[ "$ng" -ge 1 ] || ng=1
	echo
	echo "== step $step: $(mega "$want") samples wanted"
	# the disk this step needs: the new samples at the bytes per sample
	# measured so far, one month's old table kept while its new one is built
	# and sorted, 2 GiB for WAL, temporary files and the rest
	avail=$(( $(free_b) - floor ))
	h=$((fixed + ng * per_group))
	if ! fits "$h"; then
		need=$(( (h - hist) * bps + (h + hist) * bps / months + 2 * gib ))
		echo "DOES NOT FIT: $(mega "$want") samples need ~$(gb "$need") GiB more ($bps B a sample as measured," \
			"a month rebuilt, 2 GiB of WAL and temporary files); $(gb "$(free_b)") GiB are free and" \
			"$(gb "$floor") GiB must stay free, so $(gb "$avail") GiB can be used"
		while [ "$ng" -gt "$groups" ] && ! fits $((fixed + ng * per_group)); do ng=$((ng - 1)); done
		if [ "$ng" -le "$groups" ]; then
			echo "nothing larger than the last step fits: stopping"
			break
		fi
		# a round number: the largest multiple of 50 M (to a key group) that fits
		n50=$(( (fixed + ng * per_group + extra) / 50000000 * 50000000 ))
		ng50=$(( (n50 - fixed - extra + per_group / 2) / per_group ))
		[ "$ng50" -gt "$groups" ] && [ "$ng50" -le "$ng" ] && ng=$ng50
		want=$((fixed + ng * per_group + extra))
		echo "measuring $(mega "$want") samples instead"
	fi
	t0=$(now)
	psql_q -v ngroups="$ng" -f tests/bench/sql/capacity-groups.sql
	groups=$ng
	h=$((fixed + ng * per_group))
	loaded=0 mleft=$months
	while read -r tbl lo hi; do
		# what the rest still adds: its new rows less the old months it
		# replaces, and this month's new and old tables side by side
		left=$(( (h - loaded - hist * mleft / months) * bps + (h + hist) * bps / months + gib ))
		if [ $(( $(free_b) - floor )) -lt "$left" ]; then
			echo "capacity: STOPPED: $(gb "$(free_b)") GiB free, the rest of this step needs ~$(gb "$left")" \
				"GiB above the $(gb "$floor") GiB floor (other work took disk)" >&2
			exit 1
		fi
		n=$(load_month "$tbl" "$lo" "$hi")
		loaded=$((loaded + n)) mleft=$((mleft - 1))
	done < "$tmp/months"
	[ "$loaded" = "$h" ] || { echo "capacity: loaded $loaded history samples, expected $h" >&2; exit 1; }
	hist=$loaded
	t_hist=$(since "$t0")
	start_kperfd
	[ "$step" = 1 ] && post_ingest
	psql_q -f tests/bench/sql/capacity-settle.sql
	t_load=$(since "$t0")
	declare -A sz=()
	while read -r k v; do sz[$k]=$v; done < <(psql_q -At -F ' ' -f tests/bench/sql/capacity-size.sql)
	cur=${sz[rows_cur]:-0}
	total=$((hist + cur))
	hb=${sz[heap_hist]} pb=${sz[pk_hist]} kb=${sz[kg_hist]}
	bps=$(( (hb + pb + kb + hist - 1) / hist ))
	echo "stored: $total samples ($hist in $months history months, $cur in the months after), $((sz[runs])) runs," \
		"$groups lab key groups"
	echo "loaded in $t_load s (history $t_hist s: $(awk -v n="$hist" -v t="$t_hist" 'BEGIN { printf "%.0f", n / t }') samples/s)"
	awk -v tr="${sz[total_relation]}" -v n="$total" -v hb="$hb" -v pb="$pb" -v kb="$kb" -v h="$hist" \
		-v hc="${sz[heap_cur]:-0}" -v pc="${sz[pk_cur]:-0}" -v kc="${sz[kg_cur]:-0}" -v c="$cur" \
		-v ih="${sz[idx_hist]}" -v ic="${sz[idx_cur]:-0}" \
		-v dh="${sz[density_hist_x100]:-0}" -v dc="${sz[density_cur_x100]:-0}" \
		-v dcmp="${sz[doc_cmp_x100]:-0}" -v ding="${sz[doc_ingest_x100]:-0}" -v rt="${sz[run_table]}" 'BEGIN {
		g = 1073741824
		printf "sample: pg_total_relation_size %.2f GiB = heap (pg_table_size) %.2f GiB + indexes (pg_indexes_size) %.2f GiB: %.1f B a sample\n",
			tr / g, (hb + hc) / g, (ih + ic) / g, tr / n
		printf "  history (built by sort): %.1f B a sample = heap %.1f + primary key %.1f + key-group index %.1f (its leaves %.0f%% full)\n",
			(hb + pb + kb) / h, hb / h, pb / h, kb / h, dh / 100
		if (c > 0)
			printf "  written by kperfd (the current month, %d samples): %.1f B = heap %.1f + primary key %.1f + key-group index %.1f (leaves %.0f%% full)\n",
				c, (hc + pc + kc) / c, hc / c, pc / c, kc / c, dc / 100
		printf "  run documents (jsonb, lz4): %.2f B a value posted (1,000-value runs), %.2f B (25,000-value runs); run table %.2f GiB\n",
			ding / 100, dcmp / 100, rt / g
	}'
	printf '%s\n' "$step $total $(gb "${sz[total_relation]}") $(gb $((hb + ${sz[heap_cur]:-0}))) $(gb $((sz[idx_hist] + ${sz[idx_cur]:-0}))) $(( (sz[total_relation] + total / 2) / total )) $(( (hb + hist / 2) / hist )) $(( (pb + hist / 2) / hist )) $(( (kb + hist / 2) / hist )) $t_load" >> "$tmp/sizes"

	points=$(curl -s "$url${trend_metric/\{i\}/000}" | grep -o '"samples"' | wc -l)
	rows=$(curl -s "$url$(compare_path 0)" | grep -o '"verdict"' | wc -l)
	kg=$(( groups - 1 < 100 ? groups - 1 : 100 )) # the last group is the warm-up's
	echo "reads (1 client; ms p50 p99): trends of $points points (200 metrics of one key group, then one metric" \
		"of each of $kg key groups), compares of $rows rows ($pairs pairs, then one pair x 100)"
	for round in 1 2; do
		cold_restart
		mark
		tf=$(keyed_lat 200 "$trend_metric")
		read -r _ _ tfio < <(per 200)
		mark
		tc=$(keyed_lat 200 "$trend_metric&_=w$round")
		read -r tpg tk _ < <(per 200)
		gf=- gc=- gfio=-
		if [ "$kg" -ge 1 ]; then
			cold_restart
			mark
			gf=$(keyed_lat "$kg" "$(trend_group "$kg")")
			read -r _ _ gfio < <(per "$kg")
			gc=$(keyed_lat "$kg" "$(trend_group "$kg")&_=w$round")
		fi
		cold_restart
		mark
		cf=$(compare_lat "")
		read -r _ _ cfio < <(per "$pairs")
		mark
		cc=$(compare_lat "&_=w$round")
		read -r cpg ck _ < <(per "$pairs")
		c1=$(keyed_lat 100 "$(compare_path 0)&_=r$round{i}")
		echo "  round $round: trend, 200 metrics: first read $tf ($tfio KB read from storage a trend)," \
			"computed $tc (CPU a trend: PostgreSQL $tpg ms, kperfd $tk ms)"
		echo "           trend, $kg key groups: first read $gf ($gfio KB a trend), computed $gc"
		echo "           compare: first read $cf ($cfio KB a compare), computed $cc" \
			"(CPU a compare: PostgreSQL $cpg ms, kperfd $ck ms), one pair x 100 $c1"
		printf '%s\n' "$step $round ${tf/ //} $tfio ${tc/ //} $tpg $tk ${gf/ //} $gfio ${gc/ //} ${cf/ //} $cfio ${cc/ //} $cpg $ck ${c1/ //}" >> "$tmp/reads"
	done
	stop_kperfd
	echo "disk after step $step: $(gb "$(free_b)") GiB free"
done

# ---- archive: the oldest CAPACITY_ARCHIVE months (6) of the last step's
# history through `kperfd archive`, their size before and after, the reads
# over them (the trends span them; the pairs in them are compared from
# summaries), and one month restored.
narch=${CAPACITY_ARCHIVE:-6}
if [ "$narch" -gt 0 ]; then
	echo
	before=$(psql_q -At -c "SELECT to_char(first + $narch * interval '1 month', 'YYYY-MM') FROM cap_window")
	read -r a_samples a_bytes < <(psql_q -At -F ' ' -c "SELECT sum(reltuples)::bigint,
		sum(pg_total_relation_size(c.oid)) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'sample'::regclass AND c.relname ~ '^sample_[0-9]{6}$'
		AND to_date(substr(c.relname, 8), 'YYYYMM') < to_date('$before', 'YYYY-MM')")
	echo "== archive: the $narch months before $before ($(mega "$a_samples") samples, $(gb "$a_bytes") GiB with their indexes)"
	t0=$(now)
	"$build/kperfd" archive --before "$before" | sed 's/^/  /'
	t_arch=$(since "$t0")
	psql_q -c "VACUUM ANALYZE summary_month"
	read -r s_pairs s_bytes s_rows < <(psql_q -At -F ' ' -c "SELECT sum(cardinality(run_ids)),
		pg_total_relation_size('summary_month'), count(*) FROM summary_month")
	awk -v t="$t_arch" -v n="$a_samples" -v b="$a_bytes" -v p="$s_pairs" -v sb="$s_bytes" -v r="$s_rows" 'BEGIN {
		printf "archived in %.0f s (%.0f samples/s); summaries: %d (run, metric) in %d rows, %.2f GiB:", t, n / t, p, r, sb / 1073741824
		printf " %.1f B a summarised (run, metric), %.1f B a sample archived (the samples took %.1f B); with --dump the database is %.2f GiB smaller (into schema archive the tables stay on its disk)\n",
			sb / p, sb / n, b / n, (b - sb) / 1073741824 }'
	start_kperfd
	arch_pairs=$(psql_q -At -c "SELECT string_agg(DISTINCT substr(c.sha, 3)::int::text, ' ') FROM commits c
		JOIN run r ON r.commit_id = c.id WHERE c.sha LIKE 'fb%' AND r.received_at < to_date('$before', 'YYYY-MM')
		AND substr(c.sha, 3)::int < $pairs")
	curl -sf -o /dev/null "$url${trend_metric/\{i\}/000}"
	tc=$(keyed_lat 200 "$trend_metric&_=a")
	: > "$tmp/lat"
	for j in $arch_pairs; do
		for k in 1 2 3; do
			read -r code t < <(curl -s -o /dev/null -w '%{http_code} %{time_total}\n' "$url$(compare_path "$j")&_=a$k")
			[ "$code" = 200 ] || { echo "capacity: compare of archived pair $j: HTTP $code" >&2; exit 1; }
			echo "$t" >> "$tmp/lat"
		done
	done
	echo "reads after the archive (ms p50 p99, computed): trend of 2,000 points, $narch of its 24 months" \
		"from summaries: $tc; compare of a pair in an archived month (from summaries; $(echo "$arch_pairs" | wc -w)" \
		"pairs x 3): $(pct "$tmp/lat")"
	stop_kperfd
	t0=$(now)
	first=$(psql_q -At -c "SELECT to_char(first, 'YYYY-MM') FROM cap_window")
	"$build/kperfd" restore-archive "$first" | sed 's/^/  /'
	echo "restored $first in $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }') s"
fi

echo
echo "summary (sizes; B = bytes a sample):"
column -t "$tmp/sizes" 2>/dev/null || cat "$tmp/sizes"
echo "summary (reads, ms p50/p99, 1 client; first: cold buffers, with KB read from storage a trend (/t) or compare (/c);"
echo " computed: every request a read-cache miss, warm, with CPU ms of PostgreSQL and kperfd; group: one trend of each of up to"
echo " 100 key groups; compare first and computed over $pairs pairs, one request each, so p99 is the slowest; 1pair: bench.sh's"
echo " 100 on one pair):"
column -t "$tmp/reads" 2>/dev/null || cat "$tmp/reads"
echo "(capacity run: $(since "$t_all") s)"
