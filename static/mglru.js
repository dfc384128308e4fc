// mglru.js - /mglru?base=REF&target=REF&machine=&suite=[&metric=&memory=]:
// lru_gen on against off (REF:lru_gen=off / REF:lru_gen=on) or a base kernel
// against an MGLRU kernel, per workload and memory setting, from
// /api/v1/compare: a table like Table 1 of the MGLRU YCSB report (means and
// the 95% CI of the change in %), a bar chart with CI whiskers, and the
// reclaim counters (pgscan, pgsteal, workingset_refault, pswpin/out) alongside.
import {
  $, el, put, api, qs, params, setState, onState, ticket, status, showError, table, link, fmtNum, fmtPct, fmtCI, fmtCompact,
  kernelName, varyingKeys, machineTag, isKpi, EMPTY_RUNS,
} from './kperf.js';
import { chartBox, ciBarChart } from './charts.js';

const form = $('#form');
const view = $('#view');
const RECLAIM = /^proc-vmstat\.(pgscan_|pgsteal_|workingset_refault|pgactivate$|pgdeactivate$|pswpin$|pswpout$)/;
const MGLRU_NAME = /[-+_.]?(mglru|lru[-_]?gen|multi[-_]?gen)\b.*$/i;
let presetsCache = null;

// Comparisons the data supports: lru_gen off/on of one kernel, a release
// and its "-mglru" build, an MGLRU series against its base.
async function presets() {
  if (presetsCache) return presetsCache;
  const runs = (await api('/api/v1/runs?limit=1000')).items;
  const out = [];
  const seen = new Set();
  const add = (p) => { const k = `${p.base}|${p.target}|${p.machine}|${p.suite}`; if (!seen.has(k)) { seen.add(k); out.push(p); } };
  const releases = new Set(runs.map((r) => `${r.machine}|${r.suite}|${r.release}`));
  for (const r of runs) {
    if (r.release && MGLRU_NAME.test(r.release)) {
      const base = r.release.replace(MGLRU_NAME, '');
      if (base && releases.has(`${r.machine}|${r.suite}|${base}`)) {
        add({ label: `${r.machine} ${r.suite}: ${base} against ${r.release}`, base, target: r.release, machine: r.machine, suite: r.suite });
      }
    }
  }
  const gens = new Map();
  for (const r of runs) {
    const gen = r.variant && r.variant.lru_gen;
    if (!gen) continue;
    const key = `${r.machine}|${r.suite}`;
    const kernel = r.commit || r.release;
    if (!gens.has(key)) gens.set(key, { kernel, machine: r.machine, suite: r.suite, values: new Set() });
    const g = gens.get(key);
    if (g.kernel === kernel) g.values.add(gen);
  }
  for (const g of gens.values()) {
    if (g.values.has('off') && g.values.has('on')) {
      add({ label: `${g.machine} ${g.suite}: lru_gen off against on at ${kernelName(g.kernel)}`,
        base: `${g.kernel}:lru_gen=off`, target: `${g.kernel}:lru_gen=on`, machine: g.machine, suite: g.suite });
    }
  }
  try {
    const series = (await api('/api/v1/series?limit=1000')).items.filter((s) => MGLRU_NAME.test(` ${s.name}`));
    for (const s of series.slice(0, 5)) {
      const d = await api(`/api/v1/series/${encodeURIComponent(s.name)}`);
      const v = d.versions[d.versions.length - 1];
      if (v && v.base) add({ label: `${v.series} against its base`, base: v.base.commit, target: v.series, machine: '', suite: '' });
    }
  } catch { /* series are optional here */ }
  presetsCache = out;
  return out;
}

function drawForm(st, list) {
  const current = list.findIndex((p) => p.base === st.base && p.target === st.target && (p.machine || '') === st.machine && (p.suite || '') === st.suite);
  const input = (label, name, value, attrs = {}) => el('label', {}, label, el('input', { type: 'text', name, value, autocomplete: 'off', ...attrs }));
  put(form,
    el('label', {}, 'comparison', el('select', { name: 'preset', onchange: (e) => {
      const p = list[Number(e.target.value)];
      if (p) { setState({ base: p.base, target: p.target, machine: p.machine, suite: p.suite }); render(); }
    } }, current < 0 ? el('option', { value: '', selected: true }, 'custom') : null,
    list.map((p, i) => el('option', { value: String(i), selected: i === current }, p.label)))),
    el('details', { open: current < 0 }, el('summary', {}, 'refs and filters'),
      el('div', { class: 'controls-row' },
        input('base', 'base', st.base, { list: 'refs', placeholder: '5.14.0 or v6.1:lru_gen=off' }),
        input('target', 'target', st.target, { list: 'refs', placeholder: '5.14.0-mglru or v6.1:lru_gen=on' }),
        input('machine', 'machine', st.machine),
        input('suite', 'suite', st.suite),
        input('memory param', 'memory', st.memory, { placeholder: 'cacheSizeGB' }),
        el('button', { type: 'submit', class: 'primary' }, 'Show'))));
  form.onsubmit = (e) => {
    e.preventDefault();
    const f = new FormData(form);
    const next = { ...st };
    for (const k of ['base', 'target', 'machine', 'suite', 'memory']) next[k] = String(f.get(k) || '').trim();
    setState(next);
    render();
  };
}

const shortRef = (ref) => String(ref).replace(/\b([0-9a-f]{12})[0-9a-f]{28}\b/g, '$1');
const byNumber = (a, b) => (Number(a) - Number(b)) || String(a).localeCompare(String(b));

function table1(kpi, memKey, workKeys, metric, unit) {
  const value = (r, k) => (r.params || {})[k] ?? (r.variant || {})[k] ?? '–';
  const work = (r) => (workKeys.length === 1 ? value(r, workKeys[0]) : workKeys.map((k) => `${k}=${value(r, k)}`).join(' ')) || 'all';
  const mems = memKey ? [...new Set(kpi.map((r) => r.params[memKey]))].sort(byNumber) : [''];
  const works = [...new Set(kpi.map(work))].sort();
  const find = (w, m) => kpi.find((r) => work(r) === w && (!memKey || r.params[memKey] === m));
  const cell = (r) => (r ? el('td', { class: 'num' },
    el('span', { class: 'cell-means' }, `${fmtNum(r.base.mean)} / ${fmtNum(r.target.mean)}${unit ? ` ${unit}` : ''}`),
    el('span', { class: `c-${r.verdict}` }, `${fmtCI(r.welch && r.welch.ci95_pct)}%`),
    el('span', { class: 'cell-ci' }, `mean ${fmtPct(r.change_pct)}, ${r.verdict}`)) : el('td', { class: 'num muted' }, '–'));
  return el('div', {}, el('p', { class: 'small' }, el('strong', {}, metric), ': base / target means, 95% CI of the change in %'),
    el('div', { class: 'table-wrap' }, el('table', { id: 'table1' },
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, workKeys.join(', ') || 'workload'),
      mems.map((m) => el('th', { scope: 'col', class: 'num' }, memKey ? `${memKey}=${m}` : 'all')))),
    el('tbody', {}, works.map((w) => el('tr', {}, el('th', { scope: 'row' }, w), mems.map((m) => cell(find(w, m)))))))));
}

function counters(rows, label) {
  const names = [...new Set(rows.map((r) => r.metric))].sort();
  const configs = [...new Set(rows.map(label))].sort();
  if (!names.length) return el('p', { class: 'muted' }, 'No reclaim counters in these runs (collect /proc/vmstat: kperf-collect does by default).');
  return el('div', { class: 'table-wrap matrix' }, el('table', {},
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'counter'), configs.map((c) => el('th', { scope: 'col', class: 'num' }, c)))),
    el('tbody', {}, names.map((n) => el('tr', {}, el('th', { scope: 'row', class: 'mono' }, n.replace('proc-vmstat.', '')),
      configs.map((c) => {
        const r = rows.find((x) => x.metric === n && label(x) === c);
        return r ? el('td', { class: 'num', title: `${fmtNum(r.base.mean)} → ${fmtNum(r.target.mean)}, CI ${fmtCI(r.welch && r.welch.ci95_pct)}%` },
          el('span', { class: `c-${r.verdict}` }, fmtPct(r.change_pct, 1)),
          el('span', { class: 'cell-ci' }, `${fmtCompact(r.base.mean)} → ${fmtCompact(r.target.mean)}`)) : el('td', { class: 'num muted' }, '–');
      }))))));
}

async function render() {
  const p = params();
  let st = Object.fromEntries(['base', 'target', 'machine', 'suite', 'metric', 'memory'].map((k) => [k, p.get(k) || '']));
  const stale = ticket();
  status(view, 'loading', 'finding MGLRU comparisons…');
  let list;
  try { list = await presets(); } catch (e) { showError(view, e, 'finding MGLRU runs'); return; }
  if (!st.base || !st.target) {
    if (!list.length) {
      put(form);
      status(view, 'empty', 'No MGLRU runs yet: post runs with variant lru_gen=off and lru_gen=on (kperf-collect run --variant lru_gen=on ...), ',
        'or of a kernel whose release or series names MGLRU (5.14.0 and 5.14.0-mglru). ', EMPTY_RUNS);
      return;
    }
    st = { ...st, ...list[0] };
    delete st.label;
    setState(st, { replace: true });
  }
  drawForm(st, list);
  status(view, 'loading', 'comparing…');
  let data;
  try {
    data = await api(`/api/v1/compare${qs({ base: st.base, target: st.target, machine: st.machine, suite: st.suite })}`);
  } catch (e) { showError(view, e, 'the comparison'); return; }
  if (stale()) return;
  const kpis = data.rows.filter((r) => (r.role ? r.role === 'kpi' : isKpi(r.metric, r.suite)));
  const metric = st.metric || (kpis.find((r) => r.direction === 'higher') || kpis[0] || {}).metric;
  if (!metric) {
    status(view, 'empty', 'These two sides share no benchmark KPI rows. Pick another comparison, or qualify the refs (REF:lru_gen=off).');
    return;
  }
  const kpi = data.rows.filter((r) => r.metric === metric);
  const varying = varyingKeys(kpi.map((r) => r.params));
  const memKey = st.memory || varying.find((k) => /mem|cache|size|gb/i.test(k)) || '';
  const workKeys = [...varying.filter((k) => k !== memKey), ...varyingKeys(kpi.map((r) => r.variant))];
  const label = (r) => [...workKeys.map((k) => (r.params || {})[k] ?? (r.variant || {})[k]), memKey ? `${memKey}=${r.params[memKey]}` : null]
    .filter((x) => x != null).join(' · ') || 'all';
  const unit = metric.endsWith('/s') ? 'ops/s' : '';
  const box = chartBox(`${metric}: change in % with 95% confidence intervals per workload and memory setting`);
  const reclaim = data.rows.filter((r) => RECLAIM.test(r.metric));
  const otherKpis = [...new Set(kpis.map((r) => r.metric))].filter((m) => m !== metric);
  put(view,
    el('div', { class: 'sides' },
      el('div', { class: 'side base' }, 'base: ', el('strong', {}, shortRef(data.base.ref)), ` · ${data.base.runs} runs`, data.base.subject ? el('div', {}, data.base.subject) : null),
      data.targets.map((t) => el('div', { class: 'side target' }, 'target: ', el('strong', {}, shortRef(t.ref)), ` · ${t.runs} runs`, t.subject ? el('div', {}, t.subject) : null))),
    el('p', {}, st.machine ? machineTag(st.machine) : null, st.suite ? ` · ${st.suite}` : '', ` · metric `, el('span', { class: 'mono' }, metric),
      otherKpis.length ? [' · other KPIs: ', otherKpis.map((m, i) => [i ? ', ' : '', link(`/mglru${qs({ ...st, metric: m })}`, m)])] : null,
      ' · ', link(`/compare${qs({ base: st.base, target: st.target, machine: st.machine, suite: st.suite })}`, 'all rows in compare')),
    el('section', {}, el('h2', {}, 'Throughput per workload and memory setting'), table1(kpi, memKey, workKeys, metric, unit),
      el('p', { class: 'muted small' }, 'Welch two-sample t-test: the 95% CI of mean(target) − mean(base) in % of the base mean, as the report\'s R script prints it.')),
    el('section', {}, el('h2', {}, 'Change with 95% CI'), box.wrap),
    el('section', {}, el('h2', {}, 'Reclaim counters alongside'), counters(reclaim, label)),
    data.environment_diff && data.environment_diff.length ? el('section', {}, el('h2', {}, 'What differs besides the kernel'),
      table([{ key: 'kind', label: 'kind' }, { key: 'key', label: 'key', cls: 'metric' },
        { key: 'b', label: 'base', cell: (r) => (r.base || []).map(String).join(', ') || '(unset)' },
        { key: 't', label: 'target', cell: (r) => (r.target || []).map(String).join(', ') || '(unset)' }], data.environment_diff)) : null);
  ciBarChart(box, kpi.filter((r) => r.welch && r.welch.ci95_pct).sort((a, b) => label(a).localeCompare(label(b), undefined, { numeric: true }))
    .map((r) => ({ label: label(r) === 'all' ? metric : label(r), value: r.change_pct, ci: r.welch.ci95_pct, verdict: r.verdict })), { title: `${metric}: change, % of base (95% CI)` });
  fillRefs();
}

async function fillRefs() {
  const dl = $('#refs');
  if (dl.childElementCount) return;
  try {
    const c = await api('/api/v1/commits?limit=1000');
    const seen = new Set();
    for (const x of c.items) {
      const v = x.release || (x.sha && x.sha.slice(0, 12));
      if (v && !seen.has(v)) { seen.add(v); dl.appendChild(el('option', { value: v, label: x.subject || '' })); }
    }
  } catch { /* autocomplete only */ }
}

onState(render);
