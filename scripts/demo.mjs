#!/usr/bin/env node
// demo.mjs - loads the demo data set through kperf's HTTP API when the server
// has no runs yet: the seeds' MGLRU YCSB raw data, an LKP-like vm-scalability
// history with its -11.5% step, the memtier lru_lock comparison, the per-memcg
// lru_lock series (sysbench, readtwice) and an lru_gen on/off history.
// Machines are named demo-*; everything is deterministic (seeded PRNG).
//
//   node scripts/demo.mjs [BASE_URL [COLLECTOR_TOKEN]]   (or KPERF_URL, KPERF_TOKEN)
// KPERF_DEMO=0 skips it; it waits up to 20 s for kperfd to answer.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));
const baseUrl = (process.argv[2] || process.env.KPERF_URL || 'http://127.0.0.1:8080').replace(/\/+$/, '');
const token = process.argv[3] || process.env.KPERF_TOKEN || '';

// --- deterministic numbers -------------------------------------------------
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = mulberry32(20200616);
function normal() {
  const u = 1 - rand(), v = rand();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}
function sha() {
  let s = '';
  for (let i = 0; i < 5; i++) s += Math.floor(rand() * 4294967296).toString(16).padStart(8, '0');
  return s;
}
const round = (v, d) => Number(v.toFixed(d));
// One value per run around mean with a relative stddev (pct).
const noisy = (mean, pct, d = 2) => round(mean * (1 + (pct / 100) * normal()), d);
// n values around mean (relative stddev pct) whose mean, at d decimals, is
// exactly mean: the number the seed prints.
function exactMean(n, mean, pct, d = 2) {
  const u = 10 ** d;
  const v = Array.from({ length: n - 1 }, () => round(mean * (1 + (pct / 100) * normal()), d));
  const rest = Math.round(n * mean * u) - v.reduce((a, b) => a + Math.round(b * u), 0);
  return [...v, round(rest / u, d)];
}
// n samples whose sample mean and stddev are exactly mean and sd, none below min.
function exactSamples(n, mean, sd, min = -Infinity, d = 2) {
  for (;;) {
    const z = Array.from({ length: n }, normal);
    const m = z.reduce((a, b) => a + b, 0) / n;
    const s = Math.sqrt(z.reduce((a, b) => a + (b - m) ** 2, 0) / (n - 1));
    const v = z.map((x) => round(mean + (sd * (x - m)) / s, d));
    if (v.every((x) => x >= min)) return v;
  }
}
const iso = (day, minutes = 0) =>
  new Date(Date.UTC(2020, 0, 1) + day * 86400000 + minutes * 60000).toISOString().replace('.000Z', 'Z');
const DEMO_AUTHOR = 'kperf demo <demo@kperf.invalid>';

// --- the data sets -----------------------------------------------------------
const commits = [];
const runs = [];

// Seed 002: YCSB on MongoDB, 5.14 vs 5.14 + MGLRU, 10 runs per configuration,
// with synthetic reclaim counters alongside the seed's throughput.
function mglruYcsb() {
  const fx = JSON.parse(readFileSync(join(here, '../tests/fixtures/mglru-ycsb.json'), 'utf8'));
  const machine = { name: 'demo-mongo', nr_cpus: 32, memory_mb: 65536, numa_nodes: 1,
    info: { storage: '1 TB NVMe SSD', os: 'RHEL 8.4', source: 'seed 002' } };
  const config = { baseline: { CONFIG_MEMCG: 'y', CONFIG_SWAP: 'y' },
    patched: { CONFIG_MEMCG: 'y', CONFIG_SWAP: 'y', CONFIG_LRU_GEN: 'y', CONFIG_LRU_GEN_ENABLED: 'y' } };
  // reclaim per run (pages): [pgscan, pgsteal, refault_file, refault_anon, pswpin, pswpout]
  const reclaim = { '50g': [3.1e6, 2.9e6, 4.1e5, 0, 0, 0], '60g': [4.8e7, 3.9e7, 6.2e6, 1.9e6, 2.1e6, 2.6e6] };
  const mglruShare = [0.42, 0.61, 0.55, 0.48, 0.58, 0.64];
  let n = 0;
  for (const [kernel, byMem] of Object.entries(fx.samples)) {
    for (const [mem, byDist] of Object.entries(byMem)) {
      for (const [dist, values] of Object.entries(byDist)) {
        values.forEach((v, i) => {
          const r = reclaim[mem].map((x, k) => (kernel === 'patched' ? x * mglruShare[k] : x));
          const metrics = { [fx.metric]: v };
          const names = ['proc-vmstat.pgscan_kswapd', 'proc-vmstat.pgsteal_kswapd',
            'proc-vmstat.workingset_refault_file', 'proc-vmstat.workingset_refault_anon',
            'proc-vmstat.pswpin', 'proc-vmstat.pswpout'];
          names.forEach((name, k) => { metrics[name] = Math.max(0, Math.round(noisy(r[k], 6, 0))); });
          runs.push({
            run_id: `demo-mongo-${kernel}-${mem}-${dist}-${i + 1}`,
            machine,
            kernel: { release: fx.kernels[kernel].release, config: config[kernel],
              cmdline: 'systemd.unified_cgroup_hierarchy=1' },
            test: { suite: 'ycsb', params: { ...fx.params[mem], ...fx.test_params,
              distribution: fx.distributions[dist] } },
            started_at: iso(310 + n / 40, n * 17),
            duration_s: noisy(900, 3, 1),
            environment: { 'sysctl.vm.overcommit_memory': '1', thp: 'never' },
            metrics,
            units: { [fx.metric]: 'ops/s', ...Object.fromEntries(names.map((m) => [m, 'pages'])) },
            directions: { [fx.metric]: 'higher' },
          });
          n++;
        });
      }
    }
  }
  return `demo-mongo: YCSB ${n} runs, 5.14.0 vs 5.14.0-mglru (seed 002)`;
}

// Seed 003: vm-scalability lru-file-mmap-read on lkp-bdw-ex2, a chain of 30
// commits, 4 runs each, the -11.5% step at 1431d4d11a.
const LKP_SUBJECTS = [
  'mm: fix LRU balancing effect of new transparent huge pages',
  'mm: keep separate anon and file statistics on page reclaim activity',
  'mm: allow swappiness that prefers reclaiming anon over the file workingset',
  'mm: fold and remove lru_cache_add_anon() and lru_cache_add_file()',
  'mm: workingset: let cache workingset challenge anon',
  'mm: remove use-once cache bias from LRU balancing',
];
const LKP_AFTER = [
  'mm: deactivations shouldn\'t bias the LRU balance',
  'mm: only count actual rotations as LRU reclaim cost',
  'mm: balance LRU lists based on relative thrashing',
  'mm: vmscan: determine anon/file pressure balance at the reclaim root',
  'mm: vmscan: reclaim writepage is IO cost',
  'mm: vmscan: limit the range of LRU type balancing',
];
// name: [base, target, base %stddev, target %stddev, unit]
const LKP_ROWS = {
  'vm-scalability.free_time': [0.23, 0.26, 2, 1, 's'],
  'vm-scalability.median': [103991, 91935, 0.4, 0.4, 'KB/s'],
  'vm-scalability.throughput': [20717269, 18336098, 0.3, 0.3, 'KB/s'],
  'vm-scalability.time.elapsed_time': [376.47, 407.78, 0.3, 0.3, 's'],
  'vm-scalability.time.involuntary_context_switches': [392226, 420612, 0.8, 0.8, ''],
  'vm-scalability.time.percent_of_cpu_this_job_got': [11731, 12247, 0.3, 0.3, '%'],
  'vm-scalability.time.system_time': [41005, 46936, 0.4, 0.4, 's'],
  'vm-scalability.time.user_time': [3156, 3005, 0.6, 0.6, 's'],
  'meminfo.DirectMap2M': [52662860, 45266760, 5, 5, 'KB'],
  'mpstat.cpu.all.usr%': [4.43, 3.90, 1, 2, '%'],
  'vmstat.cpu.id': [37.5, 34.75, 2, 1, '%'],
  'vmstat.cpu.sy': [57.25, 60.25, 0.8, 0.8, '%'],
  'numa-meminfo.node1.AnonPages': [116516, 13709, 48, 26, 'KB'],
  'sched_debug.cfs_rq:/.load_avg.avg': [21.43, 38.44, 15, 54, ''],
  'proc-vmstat.nr_mapped': [72985192, 76275208, 0.5, 0.5, 'pages'],
  'proc-vmstat.pgactivate': [55272, 57288, 0.6, 0.6, 'pages'],
  'proc-vmstat.pgscan_direct': [1.603e9, 1.56e9, 0.5, 0.5, 'pages'],
  'proc-vmstat.pgscan_kswapd': [2.935e8, 3.32e8, 3, 2, 'pages'],
  'proc-vmstat.pageoutrun': [1597, 1457, 5, 6, ''],
};
function lkpHistory() {
  const machine = { name: 'demo-lkp-bdw-ex2', cpu_model: 'Intel(R) Xeon(R) CPU E7-8890 v4 @ 2.20GHz',
    nr_cpus: 160, sockets: 4, memory_mb: 262144, numa_nodes: 4, info: { ucode: '0xb000038', source: 'seed 003' } };
  const chain = [];
  let parent = sha();
  commits.push({ sha: parent, subject: 'Merge tag \'mm-demo-base\' (demo history start)', author: DEMO_AUTHOR,
    date: iso(140), branch: 'demo/linux-next' });
  const stepAt = 17;
  for (let i = 0; i < 30; i++) {
    let c, subject;
    if (i === stepAt - 1) {
      c = 'a4fe1631f313f75c9d8f4b5e0e9cba1c1bd1d68e';
      subject = 'mm: vmscan: drop unnecessary div0 avoidance rounding in get_scan_count()';
    } else if (i === stepAt) {
      c = '1431d4d11abb265e79cd44bed2f5ea93f1bcc57b';
      subject = 'mm: base LRU balancing on an explicit cost model';
    } else {
      c = sha();
      const before = i < stepAt - 1;
      const list = before ? LKP_SUBJECTS : LKP_AFTER;
      const k = before ? i - (stepAt - 1 - LKP_SUBJECTS.length) : i - stepAt - 1;
      subject = k >= 0 && k < list.length ? list[k] : `mm: demo history commit ${String(i + 1).padStart(2, '0')}`;
    }
    commits.push({ sha: c, parent, subject, author: DEMO_AUTHOR, date: iso(141 + i * 0.6),
      branch: 'demo/linux-next', files: ['mm/vmscan.c', 'mm/swap.c'] });
    chain.push({ sha: c, parent, after: i >= stepAt, day: 160 + i * 0.5 });
    parent = c;
  }
  chain.forEach((c, i) => {
    // the two commits of the seed's report average to its numbers exactly
    const exact = i === stepAt - 1 || i === stepAt;
    const values = {};
    for (const [name, [b, t, sb, st]] of Object.entries(LKP_ROWS)) {
      const d = Math.abs(b) < 1000 ? 2 : 0;
      const [mean, pct] = c.after ? [t, st] : [b, sb];
      values[name] = exact ? exactMean(4, mean, pct, d) : Array.from({ length: 4 }, () => noisy(mean, pct, d));
    }
    for (let r = 0; r < 4; r++) {
      const metrics = {}, units = {};
      for (const [name, [, , , , unit]] of Object.entries(LKP_ROWS)) {
        metrics[name] = values[name][r];
        if (unit) units[name] = unit;
      }
      runs.push({
        run_id: `demo-lkp-${c.sha.slice(0, 12)}-${r}`,
        machine,
        kernel: { commit: c.sha, parent: c.parent, release: `5.7.0-rc7-${String(i + 1).padStart(5, '0')}-g${c.sha.slice(0, 12)}`,
          cmdline: 'ip=::::lkp-bdw-ex2::dhcp root=/dev/ram0 rw', config: { CONFIG_MEMCG: 'y', CONFIG_TRANSPARENT_HUGEPAGE: 'y' } },
        variant: { cpufreq_governor: 'performance' },
        test: { suite: 'vm-scalability', params: { test: 'lru-file-mmap-read', runtime: '300s' } },
        started_at: iso(c.day, r * 23),
        duration_s: metrics['vm-scalability.time.elapsed_time'],
        command: './case-lru-file-mmap-read',
        exit_status: 0,
        output_tail: `${Math.round(metrics['vm-scalability.median'] * 46)} bytes / ${Math.round(metrics['vm-scalability.time.elapsed_time'] * 1e6)} usecs = ${Math.round(metrics['vm-scalability.median'])} KB/s\n` +
          `${Math.round(metrics['vm-scalability.free_time'] * 1e6)} usecs to free memory\n`,
        metrics,
        units,
        directions: { 'vm-scalability.free_time': 'lower' },
      });
    }
  });
  return `demo-lkp-bdw-ex2: vm-scalability, 30 commits x 4 runs, -11.5% at 1431d4d11a (seed 003)`;
}

// Seed 004: memtier (redis), v6.4-rc4 vs the pagevec-size patch; lru_lock
// contention in perf-profile 13.11 -> 1.79.
const MEMTIER_ROWS = {
  'memtier.ops_per_sec': [31724, 32648, 0.8, 'ops/s'],
  'memtier.total_totals_ops/s': [31724, 32648, 0.8, 'ops/s'],
  'memtier.avg_totals_p50_latency_ms': [83.51, 81.6, 0.8, 'ms'],
  'memtier.avg_totals_p99_latency_ms': [127.32, 120.3, 1.5, 'ms'],
  'memtier.time.system_time': [4.01, 3.81, 1.5, 's'],
  'memtier.time.minor_page_faults': [61696, 72289, 1, ''],
  'memtier.time.voluntary_context_switches': [70, 185, 6, ''],
};
// absolute rows (percent of cycles): [base, target, abs noise]
const MEMTIER_PROFILE = {
  'perf-profile.calltrace.cycles-pp._raw_spin_lock_irqsave.folio_lruvec_lock_irqsave': [13.11, 1.79, 0.15],
  'perf-profile.calltrace.cycles-pp._raw_spin_lock_irqsave.folio_lruvec_lock_irqsave.folio_batch_move_lru.folio_add_lru_vma.do_anonymous_page': [13.11, 1.79, 0.15],
  'perf-profile.calltrace.cycles-pp.native_queued_spin_lock_slowpath._raw_spin_lock_irqsave.folio_lruvec_lock_irqsave.folio_batch_move_lru.folio_add_lru_vma': [12.96, 1.62, 0.15],
  'perf-profile.calltrace.cycles-pp.folio_lruvec_lock_irqsave.folio_batch_move_lru.lru_add_drain_cpu.lru_add_drain.free_pages_and_swap_cache': [1.21, 0.93, 0.08],
  'perf-profile.calltrace.cycles-pp._raw_spin_lock_irqsave.folio_lruvec_lock_irqsave.release_pages.tlb_batch_pages_flush.tlb_finish_mmu': [0.84, 0.71, 0.06],
  'perf-profile.self.cycles-pp.native_queued_spin_lock_slowpath': [14.27, 2.91, 0.2],
  'perf-profile.calltrace.cycles-pp.do_anonymous_page.__handle_mm_fault.handle_mm_fault.do_user_addr_fault.exc_page_fault': [18.52, 7.24, 0.25],
  'perf-profile.calltrace.cycles-pp.clear_page_erms.clear_huge_page.__do_huge_pmd_anonymous_page': [3.12, 3.29, 0.1],
};
function memtier() {
  const machine = { name: 'demo-lkp-icl-2sp2', cpu_model: 'Intel(R) Xeon(R) Platinum 8358 CPU @ 2.60GHz',
    nr_cpus: 128, sockets: 2, memory_mb: 262144, numa_nodes: 2, info: { source: 'seed 004' } };
  const base = sha();
  const target = 'f1989218504dfe1ab4bdad3b8c0422f57c7698db';
  commits.push({ sha: base, subject: 'Linux 6.4-rc4', author: DEMO_AUTHOR, date: iso(1243), release: '6.4.0-rc4',
    describe: 'v6.4-rc4', branch: 'demo/mainline' });
  commits.push({ sha: target, parent: base, subject: 'pagevec: Increase the size of LRU pagevecs',
    author: DEMO_AUTHOR, date: iso(1244), branch: 'demo/pagevec', files: ['include/linux/pagevec.h', 'mm/swap.c'] });
  for (const [k, c] of [[0, base], [1, target]]) {
    // both kernels are the seed's: their means are its numbers
    const values = {};
    for (const [name, [b, t, pct]] of Object.entries(MEMTIER_ROWS)) values[name] = exactMean(4, k ? t : b, pct, 2);
    for (const [name, [b, t, sd]] of Object.entries(MEMTIER_PROFILE)) values[name] = exactMean(4, k ? t : b, (100 * sd) / (k ? t : b), 2);
    for (let r = 0; r < 4; r++) {
      const metrics = {}, units = {};
      for (const [name, [, , , unit]] of Object.entries(MEMTIER_ROWS)) {
        metrics[name] = values[name][r];
        if (unit) units[name] = unit;
      }
      for (const name of Object.keys(MEMTIER_PROFILE)) {
        metrics[name] = values[name][r];
        units[name] = '%';
      }
      metrics['lock_stat.&lruvec->lru_lock.contentions'] = Math.round(noisy(k ? 58200 : 412300, 4, 0));
      metrics['lock_stat.&lruvec->lru_lock.waittime-total'] = Math.round(noisy(k ? 1.9e6 : 2.41e7, 5, 0));
      units['lock_stat.&lruvec->lru_lock.waittime-total'] = 'us';
      runs.push({
        run_id: `demo-memtier-${c.slice(0, 12)}-${r}`,
        machine,
        kernel: { commit: c, parent: k ? base : undefined, release: k ? '6.4.0-rc4-00002-gf1989218504d' : '6.4.0-rc4',
          cmdline: 'console=ttyS0 transparent_hugepage=always', config: { CONFIG_LOCK_STAT: 'y', CONFIG_MEMCG: 'y' } },
        variant: { thp: 'always' },
        test: { suite: 'memtier', params: { protocol: 'redis', nr_threads: '128', test_time: '60s' } },
        started_at: iso(1250, k * 120 + r * 11),
        duration_s: noisy(68, 1, 1),
        exit_status: 0,
        metrics,
        units,
      });
    }
  }
  return 'demo-lkp-icl-2sp2: memtier, v6.4-rc4 vs f1989218504d, 4 runs each, lru_lock 13.11% -> 1.79% (seed 004)';
}

// Seed 000: the per-memcg lru_lock series, v17 and v18 on 5.9-rc2: mmtests
// sysbench (12 iterations per thread count) and the readtwice microbenchmark.
const SYSBENCH = { // nr_threads: [base hmean, base stddev, base min, v18 hmean, v18 stddev, v18 min]
  1: [912.08, 219.21, 593.23, 904.24, 220.92, 583.37],
  4: [2057.11, 94.94, 1897.34, 2044.69, 84.34, 1871.77],
  7: [2817.59, 189.42, 2471.14, 2812.8, 167.58, 2449.77],
  12: [3201.05, 372.13, 2680.0, 3171.09, 199.4, 2853.25],
  18: [2529.1, 248.42, 2183.82, 2009.99, 574.66, 1191.43],
  20: [1742.29, 757.69, 924.96, 1127.77, 666.87, 526.66],
};
const SERIES = {
  17: [['mm/memcg: warning on !memcg after readahead page charged', 0],
    ['mm/thp: narrow lru locking', 1], ['mm/lru: replace pgdat lru_lock with lruvec lock', 2],
    ['mm/pgdat: remove pgdat lru_lock', 3]],
  18: [['mm/memcg: warning on !memcg after readahead page charged', 0],
    ['mm/thp: narrow lru locking', 1], ['mm/lru: replace pgdat lru_lock with lruvec lock', 2],
    ['mm/pgdat: remove pgdat lru_lock', 3], ['mm: Split release_pages work into 3 passes', 3]],
};
function lruLockSeries() {
  const machine = { name: 'demo-bdw-2s', cpu_model: 'Intel(R) Xeon(R) CPU E5-2630 v4 @ 2.20GHz',
    nr_cpus: 40, sockets: 2, memory_mb: 257024, numa_nodes: 2, info: { source: 'seed 000', thp: 'enabled' } };
  const base = sha();
  commits.push({ sha: base, subject: 'Linux 5.9-rc2', author: DEMO_AUTHOR, date: iso(235), release: '5.9-rc2',
    branch: 'demo/mainline' });
  // stage: 0 base, 1 narrowed locking, 2 lruvec lock, 3 pgdat lock gone
  const kernels = [{ sha: base, stage: 0, release: '5.9-rc2', version: 0 }];
  for (const version of [17, 18]) {
    let parent = base;
    SERIES[version].forEach(([subject, stage], i) => {
      const c = sha();
      const last = i === SERIES[version].length - 1;
      commits.push({ sha: c, parent, subject, author: 'Alex Shi <alex.shi@linux.alibaba.com>', date: iso(236 + version - 17 + i * 0.01),
        branch: `demo/lru-v${version}`, series: `per-memcg-lru_lock v${version}`,
        message_id: `<demo-${version}-${i + 1}@kperf.invalid>`, files: ['mm/swap.c', 'mm/vmscan.c', 'mm/memcontrol.c'] });
      kernels.push({ sha: c, parent, stage, version, release: last ? `5.9-rc2-lru-v${version}` : undefined, last });
      parent = c;
    });
  }
  let n = 0;
  for (const k of kernels) {
    const kernel = { commit: k.sha, parent: k.parent, release: k.release,
      cmdline: 'console=ttyS0 numa_balancing=disable', config: { CONFIG_MEMCG: 'y', CONFIG_LOCK_STAT: 'y' } };
    const late = k.stage >= 2;
    for (const [threads, [bm, bs, bmin, tm, ts, tmin]] of Object.entries(SYSBENCH)) {
      // the seed fixes the base and v18's last patch; the other kernels wobble
      const wobble = k.version === 0 || (k.version === 18 && k.last) ? 1 : 1 + 0.006 * normal();
      const v = late ? exactSamples(12, tm * wobble, ts, tmin) : exactSamples(12, bm * wobble, bs, bmin);
      runs.push({
        run_id: `demo-sysbench-${k.sha.slice(0, 12)}-t${threads}`, machine, kernel,
        test: { suite: 'sysbench', params: { workload: 'oltp-read-only', driver: 'postgres', nr_threads: threads } },
        started_at: iso(240 + n / 50, n * 7), exit_status: 0,
        environment: { numactl: '--cpunodebind=1 --membind=1' },
        metrics: { 'sysbench.tps': v }, units: { 'sysbench.tps': 'transactions/s' },
      });
      n++;
    }
    const mbps = [220.5, 231.2, 356.9, 356.9][k.stage];
    const sd = [3.3, 2.8, 0.5, 0.5][k.stage];
    const exact = k.version === 0 || (k.version === 18 && k.last);
    const rt = exactSamples(3, mbps * (exact ? 1 : 1 + 0.006 * normal()), sd, 0, 1);
    rt.forEach((value, r) => {
      const metrics = { 'readtwice.throughput': value };
      if (k.stage < 3) metrics['lock_stat.&pgdat->lru_lock.contentions'] = Math.round(noisy([8.61e6, 6.92e6, 2.1e5][k.stage], 3, 0));
      if (k.stage >= 2) {
        metrics['lock_stat.&lruvec->lru_lock.contentions'] = Math.round(noisy(k.stage === 2 ? 1.32e6 : 1.18e6, 3, 0));
        metrics['perf-profile.calltrace.cycles-pp._raw_spin_lock_irqsave.lock_page_lruvec_irqsave.pagevec_lru_move_fn'] = round(Math.max(0, (k.stage === 2 ? 6.8 : 6.1) + 0.2 * normal()), 2);
        metrics['perf-profile.calltrace.cycles-pp.native_queued_spin_lock_slowpath._raw_spin_lock_irq.lock_page_lruvec_irq.shrink_inactive_list'] = round(Math.max(0, 3.9 + 0.2 * normal()), 2);
      } else {
        metrics['perf-profile.calltrace.cycles-pp.native_queued_spin_lock_slowpath._raw_spin_lock_irqsave.pagevec_lru_move_fn.__lru_cache_add'] = round(Math.max(0, (k.stage ? 31.4 : 38.2) + 0.5 * normal()), 2);
      }
      const units = { 'readtwice.throughput': 'MB/s' };
      for (const name of Object.keys(metrics)) if (name.startsWith('perf-profile.')) units[name] = '%';
      runs.push({
        run_id: `demo-readtwice-${k.sha.slice(0, 12)}-${r}`, machine, kernel,
        test: { suite: 'readtwice', params: { containers: '40' } },
        started_at: iso(241 + n / 50, n * 7 + r), exit_status: 0,
        metrics, units,
      });
    });
  }
  return `demo-bdw-2s: per-memcg-lru_lock v17 (4 patches) and v18 (5 patches) on 5.9-rc2, sysbench x 6 thread counts + readtwice (seed 000)`;
}

// An lru_gen on/off history (synthetic, shaped like seed 002's 60 GB case):
// the trend page's "several variants as separate lines".
function lruGenHistory() {
  const machine = { name: 'demo-mongo-v6', nr_cpus: 32, memory_mb: 65536, numa_nodes: 1,
    info: { storage: '1 TB NVMe SSD', note: 'synthetic lru_gen on/off history' } };
  let parent = sha();
  commits.push({ sha: parent, subject: 'Linux 6.1', author: DEMO_AUTHOR, date: iso(1060), release: '6.1.0', branch: 'demo/mm-stable' });
  let n = 0;
  for (let i = 0; i < 8; i++) {
    const c = sha();
    commits.push({ sha: c, parent, subject: `mm-stable: demo snapshot ${i + 1} (lru_gen on/off history)`, author: DEMO_AUTHOR,
      date: iso(1062 + i * 3), branch: 'demo/mm-stable' });
    for (const gen of ['off', 'on']) {
      const mean = gen === 'on' ? 68380 * (i >= 5 ? 1.035 : 1) : 55990;
      for (let r = 0; r < 3; r++) {
        runs.push({
          run_id: `demo-lrugen-${c.slice(0, 12)}-${gen}-${r}`, machine,
          kernel: { commit: c, parent, cmdline: 'systemd.unified_cgroup_hierarchy=1', config: { CONFIG_LRU_GEN: 'y' } },
          variant: { lru_gen: gen },
          test: { suite: 'ycsb', params: { cacheSizeGB: '60', db: 'mongodb', distribution: 'uniform', threads: '64' } },
          started_at: iso(1070 + i * 3, n * 13), exit_status: 0,
          metrics: {
            'ycsb.total_throughput_ops/s': noisy(mean, 0.25, 2),
            'proc-vmstat.pgscan_kswapd': Math.round(noisy(gen === 'on' ? 2.1e7 : 4.8e7, 5, 0)),
            'proc-vmstat.pgsteal_kswapd': Math.round(noisy(gen === 'on' ? 1.9e7 : 3.9e7, 5, 0)),
            'proc-vmstat.workingset_refault_file': Math.round(noisy(gen === 'on' ? 3.1e6 : 6.2e6, 6, 0)),
            'proc-vmstat.pswpin': Math.round(noisy(gen === 'on' ? 1.2e6 : 2.1e6, 6, 0)),
            'proc-vmstat.pswpout': Math.round(noisy(gen === 'on' ? 1.6e6 : 2.6e6, 6, 0)),
          },
          units: { 'ycsb.total_throughput_ops/s': 'ops/s' },
        });
        n++;
      }
    }
    parent = c;
  }
  return 'demo-mongo-v6: ycsb with lru_gen=off and lru_gen=on, 8 commits x 3 runs each';
}

// --- posting -----------------------------------------------------------------
async function call(method, path, body) {
  const res = await fetch(baseUrl + path, {
    method,
    headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* text answer */ }
  if (!res.ok) {
    const why = json && json.message ? `${json.error}: ${json.message}${json.field ? ` (${json.field})` : ''}` : text.slice(0, 300);
    throw new Error(`${method} ${path}: HTTP ${res.status} ${why}`);
  }
  return json;
}

async function main() {
  if (process.env.KPERF_DEMO === '0') {
    console.log('demo: KPERF_DEMO=0, nothing loaded');
    return;
  }
  // kperfd may still be starting (make run starts both at once): wait up to 20 s
  let have;
  for (let i = 0; !have; i++) {
    try {
      have = await call('GET', '/api/v1/runs?limit=1');
    } catch (e) {
      if (i >= 100) {
        console.error(`demo: cannot reach kperfd at ${baseUrl}: ${e.cause ? e.cause.message || e.cause : e.message}`);
        process.exit(1);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  if (have.total > 0) {
    console.log(`demo: ${baseUrl} already has ${have.total} runs; nothing loaded`);
    return;
  }
  if (!token) {
    console.error('demo: a collector token is needed (second argument or KPERF_TOKEN)');
    process.exit(2);
  }
  const said = [mglruYcsb(), lkpHistory(), memtier(), lruLockSeries(), lruGenHistory()];
  // a run's kernel block carries what the collector knows from git
  const bySha = new Map(commits.map((c) => [c.sha, c]));
  for (const r of runs) {
    const c = bySha.get(r.kernel.commit);
    for (const k of ['subject', 'author', 'date', 'branch', 'series']) if (c && c[k] && !r.kernel[k]) r.kernel[k] = c[k];
  }
  const t0 = Date.now();
  await call('POST', '/api/v1/commits', commits);
  for (let i = 0; i < runs.length; i += 100) await call('POST', '/api/v1/runs', { runs: runs.slice(i, i + 100) });
  for (const line of said) console.log(`demo: ${line}`);
  console.log(`demo: loaded ${commits.length} commits and ${runs.length} runs into ${baseUrl} in ${Date.now() - t0} ms`);
}

main().catch((e) => { console.error(`demo: ${e.message}`); process.exit(1); });
