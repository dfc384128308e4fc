// lru-lock.js - /lru-lock?machine=&suite=&params=[&variant=&series=&throughput=
// &base=&target=]: LRU lock contention per commit of a series or a history
// (perf-profile rows on folio_lruvec_lock / lruvec_lock / lock_page_lruvec,
// lock_stat contentions of &lruvec->lru_lock and &pgdat->lru_lock, and the
// perf-lock rows of the LRU lock's callers from `kperf-collect run
// --lock-contention`, from /api/v1/trend) on one axis, the throughput it costs
// on the other, and the top lock call chains and callers of the target against
// the base (from the run documents).
import {
  $, el, put, api, qs, params, setState, onState, ticket, status, showError, table, link, units, fmtNum, fmtSigned,
  fmtPct, kernelName, shortSha, pairs, machineTag, isKpi, metricRoles, headline, EMPTY_RUNS,
} from './kperf.js';
import { chartBox, makeChart, color } from './charts.js';

const form = $('#form');
const view = $('#view');
const enc = encodeURIComponent;
const PERF_LOCK = /^perf-profile\..*(folio_lruvec_lock|lruvec_lock|lock_page_lruvec)/;
const STAT_LOCK = /^lock_stat\.&(lruvec|pgdat)->lru_lock\./;
const CHAIN_LOCK = /spin_lock|lruvec_lock|lru_lock|lock_page_lruvec/;

// The LRU lock's callers: the kernel functions that take lruvec->lru_lock
// (pgdat->lru_lock before 5.11), as `perf lock contention` names a caller and
// kperf-collect writes it into perf-lock.<caller>.* (compiler suffixes such as
// .part.0 dropped). The one list of them; a trailing * matches any ending.
const LRU_CALLERS = [
  'folio_batch_move_lru', 'pagevec_lru_move_fn', // mm/swap.c: lru_add, activate, deactivate, rotate batches
  'folio_lruvec_lock*', 'folio_lruvec_relock*', 'lock_page_lruvec*', 'relock_page_lruvec*', // mm/memcontrol.c
  'lru_add*', '__pagevec_lru_add*', 'lru_note_cost*', 'lru_lazyfree*', 'lru_deactivate*', 'lru_move_tail*',
  '__page_cache_release', 'release_pages', 'folios_put_refs', 'folio_activate', // freeing and activating
  'shrink_active_list', 'shrink_inactive_list', 'shrink_folio_list', 'shrink_page_list', 'shrink_lruvec', // reclaim
  'isolate_lru_folios', 'isolate_lru_pages', 'folio_isolate_lru', 'isolate_lru_page', 'move_folios_to_lru',
  'move_pages_to_lru', 'putback_lru_page', 'check_move_unevictable_folios', 'check_move_unevictable_pages',
  'isolate_migratepages_block', // compaction
  'mlock_folio_batch', 'mlock_pagevec', '__mlock_folio', '__munlock_folio', '__munlock_page', // mlock
  'evict_folios', 'inc_max_seq', 'lru_gen_*', // MGLRU
  '__split_huge_page', '__folio_split', // THP split
];
const globRe = (g) => g.replace(/[.+?^$()|[\]\\{}]/g, '\\$&').replace(/\*/g, '.*');
const LRU_CALLER = new RegExp(`^(?:${LRU_CALLERS.map(globRe).join('|')})$`);
const PLOCK = /^perf-lock\.(.+)\.(contended|wait_total_us|wait_max_us|wait_avg_us)$/;
// The LRU caller a perf-lock metric is about, or null (other callers, per-type and total rows).
function lruCaller(metric) {
  const m = PLOCK.exec(metric);
  return m && !m[1].startsWith('type.') && m[1] !== 'total' && LRU_CALLER.test(m[1]) ? m[1] : null;
}
const cache = { contexts: null, docs: new Map(), metrics: new Map(), series: null };

async function doc(runId) {
  if (!cache.docs.has(runId)) cache.docs.set(runId, api(`/api/v1/runs/${enc(runId)}`));
  return cache.docs.get(runId);
}

// (machine, suite, params) with the runs of each kernel, newest first.
async function contexts() {
  if (cache.contexts) return cache.contexts;
  const runs = (await api('/api/v1/runs?limit=1000')).items;
  const map = new Map();
  for (const r of runs) {
    const key = `${r.machine}|${r.suite}|${pairs(r.params)}`;
    if (!map.has(key)) map.set(key, { key, machine: r.machine, suite: r.suite, params: pairs(r.params), kernels: new Map() });
    const kernel = r.commit || r.release;
    const c = map.get(key);
    if (!c.kernels.has(kernel)) c.kernels.set(kernel, []);
    c.kernels.get(kernel).push(r.run_id);
  }
  cache.contexts = map;
  return map;
}

// Metric names of a context: one run of up to 10 kernels spread over its history.
async function metricsOf(ctx, spread = 10) {
  if (cache.metrics.has(ctx.key)) return cache.metrics.get(ctx.key);
  const ks = [...ctx.kernels.values()];
  const step = Math.max(1, Math.ceil(ks.length / spread));
  // a kernel's runs may be split (the benchmark's, an imported perf report's): up to 3 each
  const picks = ks.filter((_, i) => i % step === 0 || i === ks.length - 1).flatMap((ids) => ids.slice(0, 3));
  const docs = await Promise.all(picks.map((id) => doc(id).catch(() => null)));
  const names = new Set();
  for (const d of docs) if (d) Object.keys(d.metrics || {}).forEach((n) => names.add(n));
  const all = [...names].sort();
  const out = {
    all,
    perf: all.filter((n) => PERF_LOCK.test(n)),
    stat: all.filter((n) => STAT_LOCK.test(n) && n.endsWith('.contentions')),
    plock: all.filter((n) => lruCaller(n) && n.endsWith('.wait_total_us')),
  };
  cache.metrics.set(ctx.key, out);
  return out;
}

async function pickThroughput(names, suite) {
  const h = headline(names, await metricRoles(suite));
  if (h) return h;
  const kpis = names.filter((n) => isKpi(n, suite));
  return kpis.find((n) => n === `${suite}.throughput`) || kpis.find((n) => /throughput|ops_per_sec|ops\/s|tps|per_sec/.test(n)) || kpis[0] || '';
}

async function seriesList() {
  if (!cache.series) cache.series = api('/api/v1/series?limit=1000').then((s) => s.items).catch(() => []);
  return cache.series;
}

// With nothing in the URL: the context with lock metrics and the most kernels.
async function defaultContext(ctxs) {
  const list = [...ctxs.values()].slice(0, 40);
  const found = [];
  await Promise.all(list.map(async (c) => {
    const ds = await Promise.all(c.kernels.values().next().value.slice(0, 3).map((id) => doc(id).catch(() => null)));
    if (ds.some((d) => d && Object.keys(d.metrics || {}).some((n) => PERF_LOCK.test(n) || STAT_LOCK.test(n) || lruCaller(n)))) found.push(c);
  }));
  found.sort((a, b) => b.kernels.size - a.kernels.size || a.key.localeCompare(b.key));
  return found[0] || null;
}

function drawForm(st, ctxs, series, axis) {
  const go = (changes) => { setState({ ...st, ...changes }); render(); };
  const sel = (label, name, options, value, onchange) => el('label', {}, label, el('select', { name, onchange: (e) => onchange(e.target.value) },
    options.map(([v, text]) => el('option', { value: v, selected: v === value }, text))));
  const key = `${st.machine}|${st.suite}|${st.params}`;
  put(form,
    sel('machine and test', 'context', [...ctxs.values()].map((c) => [c.key, `${c.machine} · ${c.suite}${c.params ? ` ${c.params}` : ''}`]), key,
      (v) => { const c = ctxs.get(v); go({ machine: c.machine, suite: c.suite, params: c.params, series: '', base: '', target: '', throughput: '' }); }),
    sel('commits', 'series', [['', 'all commits (history)'], ...series.flatMap((s) => (s.versions || []).map((v) => [`${s.name} v${v}`, `${s.name} v${v}`]))],
      st.series, (v) => go({ series: v, base: '', target: '' })),
    axis.length > 1 ? sel('call chains: base', 'base', axis.map((k) => [k.ref, k.label]), st.base || axis[0].ref, (v) => go({ base: v })) : null,
    axis.length > 1 ? sel('target', 'target', axis.map((k) => [k.ref, k.label]), st.target || axis[axis.length - 1].ref, (v) => go({ target: v })) : null);
  form.onsubmit = (e) => e.preventDefault();
}

async function trend(st, metric) {
  try {
    const t = await api(`/api/v1/trend${qs({ machine: st.machine, suite: st.suite, params: st.params, variant: st.variant, metric })}`);
    return t.series[0] || null;
  } catch {
    return null;
  }
}

// The commits along the x axis: a series version's base and patches, or the
// throughput trend's history.
async function commitAxis(st, thr) {
  if (st.series) {
    const name = st.series.replace(/ v\d+$/, '');
    try {
      const s = await api(`/api/v1/series/${enc(name)}`);
      const v = s.versions.find((x) => x.series === st.series);
      if (v) {
        return [...(v.base ? [{ ref: v.base.commit, label: `base ${shortSha(v.base.commit).slice(0, 7)}`, subject: v.base.subject }] : []),
          ...v.patches.map((p) => ({ ref: p.commit, label: `${p.position} ${shortSha(p.commit).slice(0, 7)}`, subject: p.subject }))];
      }
    } catch { /* fall back to the history */ }
  }
  return (thr ? thr.points : []).map((p) => ({ ref: p.commit || p.release, label: kernelName(p.commit, p.release).slice(0, 12), subject: p.subject }));
}

function lockChart(title, axis, lockSeries, thrSeries, thrName, leftTitle, unitOf) {
  const box = chartBox(title);
  const value = (s, ref) => { const p = s && s.points.find((x) => (x.commit || x.release) === ref); return p ? p.mean : null; };
  const datasets = lockSeries.map(({ name, s }, i) => ({
    label: name.replace(/^perf-profile\.calltrace\.cycles-pp\./, 'calltrace ').replace(/^perf-profile\.self\.cycles-pp\./, 'self ')
      .replace(/^perf-lock\.(.+)\.wait_total_us$/, '$1'),
    data: axis.map((k) => value(s, k.ref)), yAxisID: 'y', borderColor: color(i + 1), backgroundColor: color(i + 1),
    pointRadius: 4, spanGaps: false, tension: 0,
  }));
  if (thrSeries) {
    datasets.push({ label: `${thrName} (right axis)`, data: axis.map((k) => value(thrSeries, k.ref)), yAxisID: 'y1',
      borderColor: '#000', backgroundColor: '#000', borderDash: [6, 4], pointStyle: 'rectRot', pointRadius: 5, tension: 0 });
  }
  const draw = () => makeChart(box.canvas, {
    type: 'line',
    data: { labels: axis.map((k) => k.label), datasets },
    options: {
      interaction: { mode: 'index', intersect: false },
      scales: {
        x: { offset: true },
        y: { position: 'left', beginAtZero: true, title: { display: true, text: leftTitle } },
        y1: { position: 'right', grid: { drawOnChartArea: false }, title: { display: !!thrSeries, text: `${thrName}${unitOf(thrName) ? ` (${unitOf(thrName)})` : ''}` } },
      },
      plugins: {
        legend: { labels: { usePointStyle: true, font: { size: 11 } } },
        tooltip: { callbacks: {
          title: (items) => { const k = axis[items[0].dataIndex]; return `${k.label} ${k.subject || ''}`; },
          label: (c) => `${c.dataset.label}: ${fmtNum(c.parsed.y)}`,
        } },
      },
    },
  });
  return { box, draw };
}

// Mean of each metric over the runs of one kernel in the context.
async function sideMeans(ctx, ref) {
  const ids = (ctx.kernels.get(ref) || []).slice(0, 10);
  const docs = (await Promise.all(ids.map((id) => doc(id).catch(() => null)))).filter(Boolean);
  const acc = new Map();
  for (const d of docs) {
    for (const [n, v] of Object.entries(d.metrics || {})) {
      const vals = Array.isArray(v) ? v : [v];
      const m = vals.reduce((a, b) => a + b, 0) / vals.length;
      if (!acc.has(n)) acc.set(n, []);
      acc.get(n).push(m);
    }
  }
  return { runs: docs.length, mean: new Map([...acc].map(([n, xs]) => [n, xs.reduce((a, b) => a + b, 0) / xs.length])) };
}

async function chains(ctx, axis, st) {
  const baseRef = st.base || axis[0].ref;
  const targetRef = st.target || axis[axis.length - 1].ref;
  const [b, t] = await Promise.all([sideMeans(ctx, baseRef), sideMeans(ctx, targetRef)]);
  const names = new Set([...b.mean.keys(), ...t.mean.keys()]);
  const rows = [...names].filter((n) => n.startsWith('perf-profile.') && CHAIN_LOCK.test(n))
    .map((n) => ({ n, b: b.mean.get(n), t: t.mean.get(n) }))
    .sort((x, y) => Math.max(y.b || 0, y.t || 0) - Math.max(x.b || 0, x.t || 0)).slice(0, 12);
  const stats = [...names].filter((n) => STAT_LOCK.test(n)).sort().map((n) => ({ n, b: b.mean.get(n), t: t.mean.get(n) }));
  const callers = [...new Set([...names].map(lruCaller).filter(Boolean))].sort().map((c) => {
    const v = (side, f) => side.mean.get(`perf-lock.${c}.${f}`);
    return { c, bn: v(b, 'contended'), tn: v(t, 'contended'), bw: v(b, 'wait_total_us'), tw: v(t, 'wait_total_us'),
      bmax: v(b, 'wait_max_us'), tmax: v(t, 'wait_max_us') };
  });
  // a side that ran perf lock and saw no contention of a caller has none; one
  // that did not run it has nothing recorded
  const recorded = (side) => [...side.mean.keys()].some((n) => n.startsWith('perf-lock.'));
  const orNone = (side) => (v) => (v != null ? (Number.isInteger(v) ? v.toLocaleString('en-US') : fmtNum(v))
    : el('span', { class: 'muted' }, recorded(side) ? 'none' : 'not recorded'));
  const ob = orNone(b), ot = orNone(t);
  const pctChange = (x, y) => (x && y != null ? fmtPct(100 * (y - x) / x) : '–');
  // calltrace rows are chains (caller → callee); self and children rows
  // are one function's own cycles and its cycles with its callees'
  const chain = (n) => {
    const m = /^perf-profile\.(calltrace|self|children)\.cycles-pp\.(.*)$/.exec(n);
    if (!m) return el('span', { class: 'chain' }, n);
    if (m[1] !== 'calltrace') return el('span', { class: 'chain' }, `${m[1] === 'self' ? 'self' : 'with children'}: ${m[2]}`);
    return el('span', { class: 'chain' }, m[2].split('.').join(' → '));
  };
  const pp = (v) => (v == null ? el('span', { class: 'muted' }, 'absent') : `${v.toFixed(2)}%`);
  const href = `/compare${qs({ base: baseRef, target: targetRef, machine: ctx.machine, suite: ctx.suite, params: ctx.params })}`;
  return el('section', {},
    el('h2', {}, 'Top lock call chains: target against base'),
    el('p', {}, `base ${kernelName(baseRef)} (${b.runs} runs) against target ${kernelName(targetRef)} (${t.runs} runs) · `, link(href, 'full comparison')),
    rows.length ? table([
      { key: 'n', label: 'call chain (perf-profile, % of cycles)', cell: (r) => chain(r.n) },
      { key: 'b', label: 'base', num: true, cell: (r) => pp(r.b) },
      { key: 't', label: 'target', num: true, cell: (r) => pp(r.t) },
      { key: 'c', label: 'change', num: true, cell: (r) => (r.b != null && r.t != null
        ? el('span', { class: r.t < r.b - 1 ? 'c-improvement' : r.t > r.b + 1 ? 'c-regression' : 'c-noise' }, `${fmtSigned(r.t - r.b)} pp`) : '–') },
    ], rows) : el('p', { class: 'muted' }, 'No perf-profile lock call chains in these runs.'),
    stats.length ? table([
      { key: 'n', label: 'lock_stat', cls: 'metric', cell: (r) => r.n },
      { key: 'b', label: 'base', num: true, cell: (r) => (r.b == null ? 'absent' : fmtNum(r.b)) },
      { key: 't', label: 'target', num: true, cell: (r) => (r.t == null ? 'absent' : fmtNum(r.t)) },
      { key: 'c', label: 'change', num: true, cell: (r) => (r.b && r.t != null ? fmtPct(100 * (r.t - r.b) / r.b) : '–') },
    ], stats) : null,
    callers.length ? table([
      { key: 'c', label: 'LRU lock caller (perf lock contention)', cls: 'metric', cell: (r) => r.c },
      { key: 'bn', label: 'contended, base', num: true, cell: (r) => ob(r.bn) },
      { key: 'tn', label: 'target', num: true, cell: (r) => ot(r.tn) },
      { key: 'bw', label: 'total wait µs, base', num: true, cell: (r) => ob(r.bw) },
      { key: 'tw', label: 'target', num: true, cell: (r) => ot(r.tw) },
      { key: 'cw', label: 'change', num: true, cell: (r) => pctChange(r.bw, r.tw) },
      { key: 'mx', label: 'max wait µs, base → target', num: true, narrow: false, cell: (r) => `${fmtNum(r.bmax)} → ${fmtNum(r.tmax)}` },
    ], callers, { caption: 'Callers of the LRU lock: contentions and time waited per run (perf-lock rows, mean of the runs)' }) : null);
}

async function render() {
  const p = params();
  let st = Object.fromEntries(['machine', 'suite', 'params', 'variant', 'series', 'throughput', 'base', 'target'].map((k) => [k, p.get(k) || '']));
  const stale = ticket();
  status(view, 'loading', 'looking for LRU lock metrics…');
  let ctxs;
  try { ctxs = await contexts(); } catch (e) { showError(view, e, 'loading runs'); return; }
  if (!ctxs.size) { put(form); status(view, 'empty', EMPTY_RUNS); return; }
  let ctx = ctxs.get(`${st.machine}|${st.suite}|${st.params}`);
  if (!ctx && st.machine && st.suite) ctx = [...ctxs.values()].find((c) => c.machine === st.machine && c.suite === st.suite);
  if (!ctx && st.series) {
    // a series alone: the context whose kernels include the series' last patch
    try {
      const sv = (await api(`/api/v1/series/${enc(st.series.replace(/ v\d+$/, ''))}`)).versions.find((v) => v.series === st.series);
      const last = sv && sv.patches[sv.patches.length - 1];
      const hits = last ? [...ctxs.values()].filter((c) => c.kernels.has(last.commit)) : [];
      for (const c of hits) {
        const cm = await metricsOf(c);
        if (!ctx && cm.stat.length + cm.perf.length + cm.plock.length) ctx = c;
      }
    } catch { /* fall through to the default */ }
  }
  if (!ctx) ctx = await defaultContext(ctxs);
  if (!ctx) {
    put(form);
    status(view, 'empty', 'No LRU lock metrics yet: collect them with your benchmark runs: kperf-collect run --lock-contention (perf lock, any kernel since 5.19) ',
      'and --profile (perf record -g), or lock_stat (a kernel with CONFIG_LOCK_STAT=y; kperf-collect reads /proc/lock_stat).');
    return;
  }
  st = { ...st, machine: ctx.machine, suite: ctx.suite, params: ctx.params };
  const [m, series] = await Promise.all([metricsOf(ctx), seriesList()]);
  if (!st.series && !p.has('series')) {
    const inCtx = series.flatMap((s) => (s.versions || []).map((v) => `${s.name} v${v}`));
    for (const name of inCtx.reverse()) {
      const sv = await api(`/api/v1/series/${enc(name.replace(/ v\d+$/, ''))}`).catch(() => null);
      const v = sv && sv.versions.find((x) => x.series === name);
      if (v && v.patches.some((pt) => ctx.kernels.has(pt.commit))) { st.series = name; break; }
    }
  }
  st.throughput = st.throughput || (await pickThroughput(m.all, st.suite));
  if (stale()) return;
  setState(st, { replace: true });
  const perf = m.perf.sort((a, b) => a.length - b.length).slice(0, 4);
  const plock = m.plock.slice(0, 6);
  const [thr, ...lockTrends] = await Promise.all([st.throughput ? trend(st, st.throughput) : null,
    ...perf.map((n) => trend(st, n)), ...m.stat.map((n) => trend(st, n)), ...plock.map((n) => trend(st, n))]);
  // the commits of the throughput's history, else of the first lock metric's
  const axis = await commitAxis(st, thr || lockTrends.find(Boolean));
  drawForm(st, ctxs, series, axis);
  if (!m.perf.length && !m.stat.length && !m.plock.length) {
    status(view, 'empty', `${ctx.machine} · ${ctx.suite} has no LRU lock metrics (perf-profile rows on lruvec locks, lock_stat lru_lock contentions, perf-lock rows of its callers). Pick another machine and test.`);
    return;
  }
  if (!axis.length) { status(view, 'empty', 'No commits with runs in this range.'); return; }
  const unitMap = await units();
  if (stale()) return;
  const unitOf = (n) => unitMap[n] || '';
  const perfSeries = perf.map((n, i) => ({ name: n, s: lockTrends[i] })).filter((x) => x.s);
  const statSeries = m.stat.map((n, i) => ({ name: n, s: lockTrends[perf.length + i] })).filter((x) => x.s);
  const plockSeries = plock.map((n, i) => ({ name: n, s: lockTrends[perf.length + m.stat.length + i] })).filter((x) => x.s);
  const charts = [];
  if (perfSeries.length) {
    charts.push({ h: 'perf-profile: LRU lock share of cycles',
      ...lockChart('perf-profile share of cycles on the LRU lock per commit, with throughput', axis, perfSeries, thr, st.throughput, 'perf-profile, % of cycles', unitOf) });
  }
  if (statSeries.length) {
    charts.push({ h: 'lock_stat: LRU lock contentions',
      ...lockChart('lock_stat contentions on the LRU lock per commit, with throughput', axis, statSeries, thr, st.throughput, 'lock_stat contentions', unitOf) });
  }
  if (plockSeries.length) {
    charts.push({ h: 'perf lock: time waited on the LRU lock by its callers',
      ...lockChart('total wait on the LRU lock per caller and commit (perf lock contention), with throughput', axis, plockSeries, thr, st.throughput, 'total wait, µs', unitOf) });
  }
  const chainBox = el('div', {}, el('p', { class: 'status loading' }, 'reading the call chains…'));
  put(view,
    el('p', {}, machineTag(ctx.machine), ` · ${ctx.suite} `, el('span', { class: 'mono' }, ctx.params),
      ` · ${axis.length} kernels`, st.series ? [' of ', link(`/series/${enc(st.series)}`, st.series)] : ' (history)',
      st.throughput ? [' · throughput ', el('span', { class: 'mono' }, st.throughput)] : ''),
    charts.map((c) => el('section', {}, el('h2', {}, c.h), c.box.wrap)),
    chainBox);
  charts.forEach((c) => c.draw());
  try { put(chainBox, await chains(ctx, axis, st)); } catch (e) { showError(chainBox, e, 'reading the call chains'); }
}

onState(render);
