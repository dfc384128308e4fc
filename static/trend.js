// trend.js - /trend?machine=&suite=&params=&variant=&metric=: one metric of
// one test on one machine over commits, from /api/v1/trend. Each variant is a
// line (mean, ±stddev band, samples as dots); change points are dashed lines,
// decisions triangles. Clicking a mean opens the commit's compare against its
// parent with the trend's filters; clicking a triangle opens the decision.
import {
  $, el, put, api, qs, params, setState, onState, ticket, status, showError, table, link, units,
  fmtNum, fmtPct, fmtDate, kernelName, shortSha, pairs, machineTag, verdictTag, isKpi, metricRoles, headline,
  VERDICT_COLOR, EMPTY_RUNS,
} from './kperf.js';
import { chartBox, makeChart, alpha, color, zoomOptions } from './charts.js';

const form = $('#form');
const view = $('#view');
const cache = { machines: null, runs: new Map(), docs: new Map() };
const enc = encodeURIComponent;

async function machines() {
  if (!cache.machines) cache.machines = (await api('/api/v1/machines?limit=1000')).items;
  return cache.machines;
}

async function runsOf(machine) {
  if (!cache.runs.has(machine)) {
    cache.runs.set(machine, (await api(`/api/v1/runs?machine=${enc(machine)}&limit=1000`)).items);
  }
  return cache.runs.get(machine);
}

async function doc(runId) {
  if (!cache.docs.has(runId)) cache.docs.set(runId, await api(`/api/v1/runs/${enc(runId)}`));
  return cache.docs.get(runId);
}

// Distinct tests (suite + params) of a machine's runs, newest first.
function testsOf(runs) {
  const tests = new Map();
  for (const r of runs) {
    const key = `${r.suite}|${pairs(r.params)}`;
    if (!tests.has(key)) tests.set(key, { key, suite: r.suite, params: pairs(r.params), variants: new Set(), run: r.run_id });
    tests.get(key).variants.add(pairs(r.variant));
  }
  return tests;
}

// The metric a reader most likely wants: the suite's headline KPI.
async function pickMetric(names, suite) {
  const h = headline(names, await metricRoles(suite));
  if (h) return h;
  const kpis = names.filter((n) => isKpi(n, suite));
  return kpis.find((n) => /throughput|ops|tps|per_sec|\/s$/.test(n)) || kpis[0] || names[0];
}

// With no state in the URL: the newest regression's trend, else the first machine.
async function defaults(ms) {
  try {
    const d = await api('/api/v1/regressions?verdict=regression&limit=20');
    const it = d.items.find((x) => x.kpi && /throughput|ops|tps|per_sec|\/s$/.test(x.metric))
      || d.items.find((x) => x.kpi) || d.items[0];
    if (it) return { machine: it.machine, suite: it.suite, params: pairs(it.params), variant: pairs(it.variant), metric: it.metric };
  } catch { /* fall back below */ }
  return { machine: ms[0].name };
}

function select(label, name, options, value, onchange) {
  return el('label', {}, label, el('select', { name, onchange: (e) => onchange(e.target.value) },
    options.map(([v, text]) => el('option', { value: v, selected: v === value }, text))));
}

function drawForm(st, ms, tests, metricNames) {
  const go = (changes) => { setState({ ...st, ...changes }); render(); };
  const suiteTests = [...tests.values()];
  const test = tests.get(`${st.suite}|${st.params}`);
  const variants = test ? [...test.variants].sort() : [];
  const metricInput = el('input', { type: 'text', name: 'metric', class: 'wide', list: 'metric-list', value: st.metric,
    autocomplete: 'off', 'aria-label': 'metric' });
  put(form,
    select('machine', 'machine', ms.map((m) => [m.name, m.name.startsWith('demo-') ? `${m.name} (demo)` : m.name]), st.machine,
      (v) => go({ machine: v, suite: '', params: '', variant: '', metric: '' })),
    select('test (suite and params)', 'test', suiteTests.map((t) => [t.key, t.params ? `${t.suite}: ${t.params}` : t.suite]),
      test ? test.key : '', (v) => { const t = tests.get(v); go({ suite: t.suite, params: t.params, variant: '', metric: '' }); }),
    select('variant', 'variant', [['', variants.length > 1 ? 'all variants (one line each)' : 'all'],
      ...variants.filter((v) => v).map((v) => [v, v])], st.variant || '', (v) => go({ variant: v })),
    el('label', {}, 'metric', metricInput),
    el('datalist', { id: 'metric-list' }, metricNames.map((n) => el('option', { value: n }))),
    el('button', { type: 'submit', class: 'primary' }, 'Show'));
  form.onsubmit = (e) => { e.preventDefault(); go({ metric: metricInput.value.trim() }); };
}

// Commits of all variants in one order: a commit missing so far goes right
// after the previous commit of its own line.
function commitOrder(series) {
  const order = [];
  const where = () => new Map(order.map((p, i) => [p.commit || p.release, i]));
  for (const s of series) {
    let prev = -1;
    for (const p of s.points) {
      const key = p.commit || p.release;
      const at = where();
      if (at.has(key)) { prev = at.get(key); continue; }
      order.splice(prev + 1, 0, p);
      prev += 1;
    }
  }
  return order;
}

function compareHref(t, variant, p, prev) {
  const base = p.parent || (prev ? prev.commit || prev.release : null);
  if (!base) return null;
  return `/compare${qs({ base, target: p.commit || p.release, machine: t.machine, suite: t.suite,
    params: pairs(t.params), variant: pairs(variant) })}`;
}

function drawChart(box, t, order, unit) {
  const index = new Map(order.map((p, i) => [p.commit || p.release, i]));
  const datasets = [];
  t.series.forEach((s, si) => {
    const c = color(si);
    const name = pairs(s.variant) || 'default';
    const xy = (p, y) => ({ x: index.get(p.commit || p.release), y });
    datasets.push({ kind: 'band', label: `${name} +σ`, data: s.points.map((p) => xy(p, p.mean + p.stddev)),
      borderWidth: 0, pointRadius: 0, fill: false, type: 'line', order: 4 });
    datasets.push({ kind: 'band', label: `${name} −σ`, data: s.points.map((p) => xy(p, p.mean - p.stddev)),
      borderWidth: 0, pointRadius: 0, fill: '-1', backgroundColor: alpha(c, 0.15), type: 'line', order: 3 });
    datasets.push({ kind: 'samples', label: `${name} samples`, type: 'scatter',
      data: s.points.flatMap((p) => p.samples.map((v, k) => ({ x: index.get(p.commit || p.release) + ((k * 0.618) % 1 - 0.5) * 0.3, y: v }))),
      pointRadius: 2.5, backgroundColor: alpha(c, 0.5), borderWidth: 0, order: 2 });
    datasets.push({ kind: 'mean', label: t.series.length > 1 ? `mean, ${name}` : 'mean', type: 'line', series: s, points: s.points,
      data: s.points.map((p) => xy(p, p.mean)), borderColor: c, backgroundColor: c, pointRadius: 4, pointHoverRadius: 7,
      borderWidth: 2, tension: 0, order: 1 });
    const byCommit = new Map(s.points.map((p) => [p.commit || p.release, p]));
    const ds = s.decisions.filter((d) => byCommit.has(d.commit));
    if (ds.length) {
      datasets.push({ kind: 'decision', label: `decisions${t.series.length > 1 ? `, ${name}` : ''}`, type: 'scatter', decisions: ds,
        data: ds.map((d) => xy(byCommit.get(d.commit), byCommit.get(d.commit).mean)),
        pointStyle: 'triangle', pointRadius: 9, pointHoverRadius: 11,
        rotation: ds.map((d) => (d.change_pct < 0 ? 180 : 0)),
        backgroundColor: ds.map((d) => VERDICT_COLOR[d.verdict] || '#000'), borderColor: '#000', borderWidth: 1, order: 0 });
    }
  });
  const lines = t.series.flatMap((s) => s.change_points.filter((cp) => index.has(cp.commit)).map((cp) => ({
    x: index.get(cp.commit) - 0.5, color: '#000', label: `change point ${fmtPct(cp.shift_pct, 1)}` })));
  const tick = (v) => (Number.isInteger(v) && order[v] ? kernelName(order[v].commit, order[v].release).slice(0, 12) : '');
  const chart = makeChart(box.canvas, {
    type: 'line',
    data: { datasets },
    options: {
      parsing: true,
      interaction: { mode: 'nearest', intersect: true },
      scales: {
        x: { type: 'linear', min: -0.5, max: order.length - 0.5, ticks: { callback: tick, maxRotation: 60, autoSkip: true },
          // one tick per commit, at the integers (the axis itself starts at -0.5)
          afterBuildTicks: (axis) => {
            axis.ticks = order.map((_, i) => ({ value: i })).filter((k) => k.value >= axis.min && k.value <= axis.max);
          },
          title: { display: true, text: 'commit (oldest to newest)' } },
        y: { title: { display: true, text: `${t.metric.startsWith(`${t.suite}.`) ? t.metric.slice(t.suite.length + 1) : t.metric}${unit ? ` (${unit})` : ''}` },
          grace: '5%' },
      },
      plugins: {
        legend: { labels: { filter: (l, d) => ['mean', 'decision'].includes(d.datasets[l.datasetIndex].kind) } },
        tooltip: {
          filter: (i) => i.dataset.kind !== 'band',
          callbacks: {
            title: (items) => {
              const i = items[0];
              const p = order[Math.round(i.parsed.x)];
              return p ? `${kernelName(p.commit, p.release)}  ${p.subject || ''}` : '';
            },
            label: (i) => {
              const ds = i.dataset;
              if (ds.kind === 'mean') {
                const p = ds.points[i.dataIndex];
                return [`${ds.label}: ${fmtNum(p.mean)}${unit ? ` ${unit}` : ''} ± ${fmtNum(p.stddev)}`,
                  `n=${p.n}, min ${fmtNum(p.min)}, max ${fmtNum(p.max)}`, `date ${fmtDate(p.date)}`,
                  ...(p.archived_runs ? [`${p.archived_runs} run(s) archived: summaries, no samples`] : []), 'click: compare with parent'];
              }
              if (ds.kind === 'decision') {
                const d = ds.decisions[i.dataIndex];
                return `${d.verdict} ${fmtPct(d.change_pct)} (${d.state}); click: open decision`;
              }
              return `sample ${fmtNum(i.parsed.y)}`;
            },
          },
        },
        zoom: zoomOptions(),
        kperfMarkers: { lines },
      },
      onHover: (e, els) => { e.native.target.style.cursor = els.some((x) => ['mean', 'decision'].includes(datasets[x.datasetIndex].kind)) ? 'pointer' : 'default'; },
      onClick: (e, els) => {
        const hit = els.find((x) => ['mean', 'decision'].includes(datasets[x.datasetIndex].kind));
        if (!hit) return;
        const ds = datasets[hit.datasetIndex];
        if (ds.kind === 'decision') { location.href = `/regressions/${ds.decisions[hit.index].id}`; return; }
        const p = ds.points[hit.index];
        const href = compareHref(t, ds.series.variant, p, ds.points[hit.index - 1]);
        if (href) location.href = href;
      },
    },
  });
  return chart;
}

function pointsTable(t, unit) {
  const rows = t.series.flatMap((s) => s.points.map((p, i) => ({ s, p, prev: s.points[i - 1], i })));
  const multi = t.series.length > 1;
  return table([
    { key: 'i', label: '#', num: true, value: (r) => r.i, cell: (r) => String(r.i + 1) },
    multi ? { key: 'variant', label: 'variant', value: (r) => pairs(r.s.variant), cell: (r) => pairs(r.s.variant) || '–' } : null,
    { key: 'commit', label: 'kernel', cell: (r) => el('span', { class: 'mono' }, kernelName(r.p.commit, r.p.release)) },
    { key: 'subject', label: 'subject', cell: (r) => r.p.subject || r.p.release || '' },
    { key: 'n', label: 'n', num: true, cell: (r) => (r.p.archived_runs ? el('span', { title: `${r.p.archived_runs} run(s) of an archived month: from their summaries` }, `${r.p.n}*`) : String(r.p.n)) },
    { key: 'mean', label: 'mean', num: true, cell: (r) => el('span', {}, fmtNum(r.p.mean), unit ? el('span', { class: 'unit' }, unit) : null) },
    { key: 'sd', label: '±%', num: true, cell: (r) => (r.p.mean ? `${(100 * r.p.stddev / Math.abs(r.p.mean)).toFixed(2)}%` : '–') },
    { key: 'chg', label: 'vs previous', num: true, cell: (r) => (r.prev && r.prev.mean ? fmtPct(100 * (r.p.mean - r.prev.mean) / Math.abs(r.prev.mean)) : '–') },
    { key: 'go', label: 'compare', cell: (r) => { const h = compareHref(t, r.s.variant, r.p, r.prev); return h ? link(h, 'vs parent') : '–'; } },
    { key: 'runs', label: 'runs', cell: (r) => r.p.runs.slice(0, 4).map((id, k) => [k ? ' ' : '', link(`/runs/${enc(id)}`, `${k + 1}`, { title: id })]) },
  ].filter(Boolean), rows);
}

async function render() {
  const p = params();
  let st = { machine: p.get('machine') || '', suite: p.get('suite') || '', params: p.get('params'),
    variant: p.get('variant') || '', metric: p.get('metric') || '' };
  const stale = ticket();
  status(view, 'loading', 'loading the trend…');
  let ms;
  try { ms = (await machines()).filter((m) => m.runs > 0); } catch (e) { showError(view, e, 'loading machines'); return; }
  if (!ms.length) { put(form); status(view, 'empty', EMPTY_RUNS); return; }
  if (!st.machine) st = { ...st, ...(await defaults(ms)) };
  let tests;
  try { tests = testsOf(await runsOf(st.machine)); } catch (e) { showError(view, e, `loading the runs of ${st.machine}`); return; }
  if (!tests.size) { put(form); status(view, 'empty', `machine ${st.machine} has no runs. ${EMPTY_RUNS}`); return; }
  const all = [...tests.values()];
  let test = st.params != null ? tests.get(`${st.suite}|${st.params}`) : all.find((t) => t.suite === st.suite);
  if (!test) test = all.find((t) => t.suite === st.suite) || all[0];
  st.suite = test.suite;
  st.params = test.params;
  let names = [];
  try { names = Object.keys((await doc(test.run)).metrics || {}).sort(); } catch { names = []; }
  if (!st.metric) st.metric = (await pickMetric(names, st.suite)) || '';
  if (stale()) return;
  setState(st, { replace: true });
  drawForm(st, ms, tests, names);
  let t;
  try {
    t = await api(`/api/v1/trend${qs({ machine: st.machine, suite: st.suite, params: st.params, variant: st.variant, metric: st.metric })}`);
  } catch (e) { showError(view, e, 'loading the trend'); return; }
  const unit = (await units())[st.metric] || '';
  if (stale()) return;
  const order = commitOrder(t.series);
  if (!order.length) { status(view, 'empty', 'no points for this metric yet'); return; }
  const box = chartBox(`trend of ${st.metric} on ${st.machine}`);
  const decisions = t.series.flatMap((s) => s.decisions.map((d) => ({ ...d, variant: s.variant })));
  let chart = null;
  put(view,
    el('p', {}, machineTag(t.machine), ' · ', el('strong', {}, t.suite), ' ', el('span', { class: 'mono' }, pairs(t.params)),
      ' · ', el('span', { class: 'mono' }, t.metric), ` · ${order.length} kernels`),
    el('div', { class: 'chart-actions' },
      el('button', { type: 'button', onclick: () => chart && chart.zoom(1.5) }, 'zoom in'),
      el('button', { type: 'button', onclick: () => chart && chart.zoom(0.67) }, 'zoom out'),
      el('button', { type: 'button', onclick: () => chart && chart.resetZoom() }, 'reset zoom'),
      el('span', {}, 'Ctrl+scroll or pinch zooms, drag pans; band: ±1 stddev; dots: samples',
        t.series.some((s) => s.points.some((p) => p.archived_runs)) ? ' (none for runs of archived months: their summaries give the mean and band)' : '')),
    box.wrap,
    decisions.length ? el('section', {}, el('h2', {}, 'Decisions on this trend'),
      el('ul', { class: 'plain' }, decisions.map((d) => el('li', {}, verdictTag(d.verdict), ' ',
        link(`/regressions/${d.id}`, `${shortSha(d.commit)} ${fmtPct(d.change_pct)}`), ` ${pairs(d.variant)} · ${d.state}`)))) : null,
    el('details', {}, el('summary', {}, `Points (${order.length} kernels, keyboard-friendly)`), pointsTable(t, unit)));
  chart = drawChart(box, t, order, unit);
}

onState(render);
