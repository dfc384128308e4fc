// compare.js - /compare?base=REF&target=REF[&target=..][&machine=&suite=&params=
// &variant=&metric=&significant=1][&filter=&sort=&dir=&operand=]: kernels side
// by side from /api/v1/compare. What differs besides the kernel comes first,
// then a bar chart of the KPIs' change with 95% CI whiskers, the sortable
// LKP-style table and the LKP and mmtests text for a mailing-list reply.
import {
  $, el, put, api, apiText, qs, params, setState, onState, ticket, status, showError, errorText, table, link,
  units, fmtNum, fmtPct, fmtSigned, fmtCI, fmtP, kernelName, shortSha, pairs, varyingKeys, machineTag,
  verdictTag, isKpi, preWithCopy, apiPost,
} from './kperf.js';
import { chartBox, ciBarChart } from './charts.js';

const form = $('#form');
const view = $('#view');
const API_KEYS = ['base', 'target', 'machine', 'suite', 'params', 'variant', 'metric', 'significant'];
let last = { key: null, data: null };

function readState() {
  const p = params();
  const st = {};
  for (const k of ['base', 'machine', 'suite', 'params', 'variant', 'metric', 'significant', 'filter', 'sort', 'dir', 'operand']) {
    st[k] = p.get(k) || '';
  }
  st.target = p.getAll('target').filter(Boolean);
  return st;
}

const apiQuery = (st) => qs(Object.fromEntries(API_KEYS.map((k) => [k, st[k]])));

// Suggestions for the ref inputs: releases, short shas with subjects, series.
async function fillRefs() {
  const list = $('#refs');
  if (!list || list.childElementCount) return;
  try {
    const [commits, series] = await Promise.all([api('/api/v1/commits?limit=1000'), api('/api/v1/series?limit=1000')]);
    const seen = new Set();
    const add = (value, label) => {
      if (!value || seen.has(value)) return;
      seen.add(value);
      list.appendChild(el('option', { value, label }));
    };
    for (const s of series.items) {
      add(s.name, `series, newest version (${s.patches} patches)`);
      for (const v of s.versions || []) add(`${s.name} v${v}`, 'series version: its last patch');
    }
    for (const c of commits.items) {
      if (c.release) add(c.release, c.subject || 'release');
      if (c.sha) add(shortSha(c.sha), c.subject || '');
    }
  } catch { /* autocomplete is a convenience */ }
}

function drawForm(st) {
  const targets = st.target.length ? st.target : [''];
  const go = (e) => {
    e.preventDefault();
    const f = new FormData(form);
    const now = readState(); // filter and sort change the URL without redrawing the form
    const next = { ...st, filter: now.filter, sort: now.sort, dir: now.dir };
    for (const k of ['base', 'machine', 'suite', 'params', 'variant', 'metric', 'operand']) next[k] = String(f.get(k) || '').trim();
    next.target = f.getAll('target').map((t) => String(t).trim()).filter(Boolean);
    next.significant = f.get('significant') ? '1' : '';
    setState(next);
    render();
  };
  const input = (label, name, value, attrs = {}) => el('label', {}, label,
    el('input', { type: 'text', name, value, autocomplete: 'off', ...attrs }));
  const targetBox = el('span', { class: 'targets' });
  const addTarget = (value) => targetBox.appendChild(input('target', 'target', value, { list: 'refs', class: 'wide', placeholder: '5.14.0-mglru' }));
  targets.forEach(addTarget);
  put(form,
    input('base', 'base', st.base, { list: 'refs', class: 'wide', placeholder: '5.14.0 or a sha or a series' }),
    targetBox,
    el('button', { type: 'button', title: 'compare up to 8 targets against the base',
      onclick: () => { if (targetBox.childElementCount < 8) addTarget(''); } }, '+ target'),
    el('details', { open: ['machine', 'suite', 'params', 'variant', 'metric', 'operand'].some((k) => st[k]) },
      el('summary', {}, 'filters'),
      el('div', { class: 'controls-row' },
        input('machine', 'machine', st.machine),
        input('suite', 'suite', st.suite),
        input('params (k=v,k=v)', 'params', st.params),
        input('variant (k=v,k=v)', 'variant', st.variant),
        input('metric glob', 'metric', st.metric, { placeholder: 'vm-scalability.*' }),
        input('mmtests operand', 'operand', st.operand, { placeholder: 'nr_threads' }))),
    el('label', { class: 'check' }, el('input', { type: 'checkbox', name: 'significant', value: '1', checked: st.significant === '1' }),
      'significant only'),
    el('button', { type: 'submit', class: 'primary' }, 'Compare'));
  form.onsubmit = go;
  fillRefs();
}

async function suggestions(stale) {
  const box = el('div', {}, el('p', { class: 'status empty' },
    'Name a base and a target: a sha (7+ hex digits), a release (5.14.0) or a series (per-memcg-lru_lock v18), ',
    'optionally qualified by variant knobs or test params (v6.1:lru_gen=off). Or start from a recent decision:'));
  put(view, box);
  try {
    const d = await api('/api/v1/regressions?limit=100');
    if (stale()) return;
    const seen = new Set();
    const items = [];
    for (const it of d.items) {
      const key = `${it.base_commit}|${it.commit}|${it.machine}|${it.suite}`;
      if (seen.has(key) || items.length >= 8) continue;
      seen.add(key);
      items.push(el('li', {}, verdictTag(it.verdict), ' ',
        link(`/compare${qs({ base: it.base_commit, target: it.commit, machine: it.machine, suite: it.suite })}`,
          `${shortSha(it.commit)} ${it.subject || it.release || ''}`),
        ` vs its ${it.base_kind === 'series_base' ? 'series base' : 'parent'} on `, machineTag(it.machine), ` (${it.suite})`));
    }
    box.appendChild(items.length ? el('ul', { class: 'plain' }, items) : el('p', { class: 'muted' }, 'no decisions yet'));
  } catch (e) {
    box.appendChild(el('p', { class: 'status error' }, `loading decisions failed: ${errorText(e)}`));
  }
}

// An admin asks the labs for 3 more runs of both sides of each test compared
// (a job per commit and key group: machine, test and variant), at most 8 keys.
function moreRuns(data) {
  const keys = new Map();
  for (const r of data.rows) {
    const k = JSON.stringify([r.machine, r.suite, r.params, r.variant]);
    if (!keys.has(k)) keys.set(k, r);
  }
  if (!keys.size || keys.size > 8) return null;
  const out = el('span', { role: 'status' });
  const ask = async () => {
    const token = sessionStorage.getItem('kperf.adminToken') || '';
    if (!token) {
      put(out, 'this needs the admin token (enter it on a decision\'s page under Triage)');
      return;
    }
    put(out, 'asking…');
    try {
      for (const r of keys.values()) {
        for (const commit of [data.base.commit, ...data.targets.map((t) => t.commit)]) {
          await apiPost('/api/v1/jobs', { commit, machine: r.machine, suite: r.suite, params: r.params,
            variant: r.variant, runs: 3, reason: 'more runs asked from the compare page' }, token);
        }
      }
      put(out, `asked: 3 more runs of each side for ${keys.size} test${keys.size > 1 ? 's' : ''}, `, link('/jobs', 'see the jobs'));
    } catch (e) {
      put(out, `asking failed: ${errorText(e)}`);
    }
  };
  return el('p', {}, el('button', { type: 'button', id: 'more-runs', onclick: ask }, 'Ask the labs for 3 more runs of both sides'), ' ', out);
}

function side(kind, s) {
  return el('div', { class: `side ${kind}` },
    el('div', {}, `${kind}: `, el('span', { class: 'ref' }, String(s.ref).replace(/\b([0-9a-f]{12})[0-9a-f]{28}\b/g, '$1'))),
    el('div', { class: 'mono' }, kernelName(s.commit, null)),
    s.subject ? el('div', {}, s.subject) : null,
    Object.keys(s.qualifiers || {}).length ? el('div', { class: 'muted' }, `qualified by ${pairs(s.qualifiers)}`) : null,
    el('div', { class: 'muted' }, `${s.runs} runs`));
}

function envDiff(list) {
  if (!list.length) return el('p', { class: 'muted' }, 'Nothing differs between the two sides\' runs besides the kernel (config, cmdline, variant knobs, machine facts).');
  const show = (vals) => (vals && vals.length ? vals : [null])
    .map((v) => (v === null ? '(unset)' : typeof v === 'string' ? v : JSON.stringify(v))).join(', ');
  return table([
    { key: 'kind', label: 'kind' },
    { key: 'key', label: 'key', cls: 'metric' },
    { key: 'base', label: 'base', cell: (r) => show(r.base) },
    { key: 'target', label: 'target', cell: (r) => show(r.target) },
    list.some((r) => r.target_ref) && new Set(list.map((r) => r.target_ref)).size > 1 ? { key: 'target_ref', label: 'target ref' } : null,
  ].filter(Boolean), list);
}

const absolute = (r) => r.metric.startsWith('perf-profile.');
const changeValue = (r) => (absolute(r) ? r.change_abs : r.change_pct);
const changeText = (r) => (absolute(r) ? `${fmtSigned(r.change_abs)} pp` : fmtPct(r.change_pct));
const VERDICT_RANK = { regression: 3, improvement: 2, changed: 1, noise: 0 };

function rowLabel(r, vary, multiTarget) {
  return [
    vary.machine ? r.machine : null,
    vary.suite ? r.suite : null,
    ...vary.params.map((k) => `${k}=${(r.params || {})[k] ?? '–'}`),
    ...vary.variant.map((k) => `${k}=${(r.variant || {})[k] ?? '–'}`),
    multiTarget ? `→ ${r.target_ref}` : null,
  ].filter(Boolean).join(' ');
}

function rowsTable(data, st, unitOf, onSort) {
  const rows = data.rows;
  const vary = {
    machine: new Set(rows.map((r) => r.machine)).size > 1,
    suite: new Set(rows.map((r) => r.suite)).size > 1,
    params: varyingKeys(rows.map((r) => r.params)),
    variant: varyingKeys(rows.map((r) => r.variant)),
  };
  const multiTarget = data.targets.length > 1;
  const prefix = st.filter.trim();
  // LKP lists the benchmark's own KPIs first; the API's order otherwise
  const kpiFirst = [...rows].sort((a, b) => isKpi(b.metric, b.suite) - isKpi(a.metric, a.suite));
  const shown = prefix ? kpiFirst.filter((r) => r.metric.startsWith(prefix)) : kpiFirst;
  const trendHref = (r) => `/trend${qs({ machine: r.machine, suite: r.suite, params: pairs(r.params), variant: pairs(r.variant), metric: r.metric })}`;
  const mean = (v, u) => el('span', {}, fmtNum(v), u ? el('span', { class: 'unit' }, u) : null);
  const cols = [
    (vary.machine || vary.suite || vary.params.length || vary.variant.length || multiTarget)
      ? { key: 'key', label: 'test', value: (r) => rowLabel(r, vary, multiTarget), cell: (r) => rowLabel(r, vary, multiTarget) } : null,
    { key: 'metric', label: 'metric', cls: 'metric', value: (r) => r.metric,
      cell: (r) => link(trendHref(r), r.metric, { title: 'trend of this metric' }) },
    { key: 'base', label: 'base mean', num: true, value: (r) => r.base.mean, cell: (r) => mean(r.base.mean, unitOf(r)) },
    { key: 'bsd', label: '±%', num: true, narrow: false, title: 'base stddev in % of its mean', value: (r) => r.base.stddev_pct,
      cell: (r) => (r.base.stddev_pct == null ? '' : `${r.base.stddev_pct.toFixed(1)}%`) },
    { key: 'change', label: 'change', num: true, value: changeValue,
      cell: (r) => el('span', { class: `c-${r.verdict}` }, changeText(r)) },
    { key: 'target', label: 'target mean', num: true, value: (r) => r.target.mean, cell: (r) => mean(r.target.mean, unitOf(r)) },
    { key: 'tsd', label: '±%', num: true, narrow: false, title: 'target stddev in % of its mean', value: (r) => r.target.stddev_pct,
      cell: (r) => (r.target.stddev_pct == null ? '' : `${r.target.stddev_pct.toFixed(1)}%`) },
    { key: 'ci', label: '95% CI %', num: true, title: 'Welch 95% confidence interval of the change, in % of the base mean',
      value: (r) => (r.welch && r.welch.ci95_pct ? r.welch.ci95_pct[0] : null), cell: (r) => fmtCI(r.welch && r.welch.ci95_pct) },
    { key: 'verdict', label: 'verdict', value: (r) => VERDICT_RANK[r.verdict], cell: (r) => verdictTag(r.verdict) },
    { key: 'p', label: 'p', num: true, narrow: false, title: 'Welch two-sided p-value', value: (r) => (r.welch ? r.welch.p_value : null),
      cell: (r) => fmtP(r.welch && r.welch.p_value) },
    { key: 'n', label: 'n', num: true, narrow: false, title: 'samples: base / target', cell: (r) => `${r.base.n}/${r.target.n}` },
    { key: 'lkp', label: 'LKP', narrow: false, title: 'LKP\'s changed-stat rule', value: (r) => (r.lkp_changed ? 1 : 0), cell: (r) => (r.lkp_changed ? '✓' : '') },
  ].filter(Boolean);
  return el('div', {},
    el('p', { class: 'muted small' }, `${shown.length} of ${rows.length} rows`,
      prefix ? ` with metrics starting "${prefix}"` : '', st.significant === '1' ? ', significant only' : ''),
    table(cols, shown, { sort: st.sort, dir: st.dir || 'desc', onSort, rowClass: (r) => `r-${r.verdict}` }));
}

function kpiChart(data) {
  const rows = data.rows.filter((r) => isKpi(r.metric, r.suite) && r.welch && r.welch.ci95_pct);
  if (!rows.length) return null;
  const vary = {
    machine: new Set(rows.map((r) => r.machine)).size > 1,
    suite: new Set(rows.map((r) => r.suite)).size > 1,
    params: varyingKeys(rows.map((r) => r.params)),
    variant: varyingKeys(rows.map((r) => r.variant)),
  };
  const multiMetric = new Set(rows.map((r) => r.metric)).size > 1;
  const top = rows.length > 40 ? [...rows].sort((a, b) => Math.abs(b.change_pct) - Math.abs(a.change_pct)).slice(0, 40) : rows;
  const items = top.map((r) => ({
    label: [multiMetric ? r.metric : null, rowLabel(r, vary, data.targets.length > 1)].filter(Boolean).join(' · ') || r.metric,
    value: r.change_pct, ci: r.welch.ci95_pct, verdict: r.verdict,
  }));
  const box = chartBox('change of the benchmark KPIs in % with 95% confidence intervals');
  const section = el('section', {}, el('h2', {}, 'KPIs: change with 95% CI'),
    rows.length > top.length ? el('p', { class: 'muted small' }, `the ${top.length} largest of ${rows.length} KPI rows`) : null,
    box.wrap);
  return { section, draw: () => ciBarChart(box, items, { title: 'change of the mean, % of base (95% CI)' }) };
}

async function textBlocks(st, node) {
  const q = apiQuery(st);
  const one = async (fmt, title, extra = '') => {
    try {
      const text = await apiText(`/api/v1/compare${q}&format=${fmt}${extra}`);
      return preWithCopy(title, text.trim() ? text : `(no rows for ${fmt})`, `text-${fmt}`);
    } catch (e) {
      return el('div', { class: 'pre-block' }, el('h3', {}, title), el('p', { class: 'status error' }, `${fmt} text failed: ${errorText(e)}`));
    }
  };
  const [lkp, mm] = await Promise.all([one('lkp', 'LKP'), one('mmtests', 'mmtests', st.operand ? `&operand=${encodeURIComponent(st.operand)}` : '')]);
  put(node, lkp, mm);
}

async function render() {
  const st = readState();
  const stale = ticket();
  drawForm(st);
  if (!st.base || !st.target.length) { await suggestions(stale); return; }
  const key = apiQuery(st);
  let data = last.key === key ? last.data : null;
  if (!data) {
    status(view, 'loading', 'comparing…');
    try { data = await api(`/api/v1/compare${key}`); } catch (e) { showError(view, e, 'the comparison'); return; }
    last = { key, data };
  }
  const unitMap = await units();
  if (stale()) return;
  const unitOf = (r) => (absolute(r) ? '%' : unitMap[r.metric] || '');
  const tableBox = el('div', {});
  const drawTable = () => put(tableBox, rowsTable(data, readState(), unitOf, (sort, dir) => {
    setState({ ...readState(), sort, dir }, { replace: true });
    drawTable();
  }));
  const filter = el('input', { type: 'search', value: st.filter, placeholder: 'vm-scalability.', 'aria-label': 'metric prefix filter',
    oninput: () => { setState({ ...readState(), filter: filter.value }, { replace: true }); drawTable(); } });
  const chart = kpiChart(data);
  const texts = el('div', {}, el('p', { class: 'status loading' }, 'loading the text renderings…'));
  const counts = {};
  for (const r of data.rows) counts[r.verdict] = (counts[r.verdict] || 0) + 1;
  put(view,
    el('div', { class: 'sides' }, side('base', data.base), data.targets.map((t) => side('target', t))),
    el('p', {}, `${data.rows.length} rows: `, ['regression', 'improvement', 'changed', 'noise'].filter((v) => counts[v])
      .map((v, i) => [i ? ', ' : '', `${counts[v]} `, verdictTag(v)])),
    moreRuns(data),
    el('section', {}, el('h2', {}, 'What differs besides the kernel'), envDiff(data.environment_diff || [])),
    chart ? chart.section : null,
    el('section', {}, el('h2', {}, 'All rows'),
      el('div', { class: 'controls' }, el('label', {}, 'metric prefix ', filter)),
      data.rows.length ? tableBox : el('p', { class: 'status empty' },
        'No rows: the two sides share no (machine, test, variant, metric). Check the refs, or qualify them (REF:key=value) to pair different variants or params.')),
    el('section', {}, el('h2', {}, 'Text for a mailing-list reply'), texts));
  drawTable();
  if (chart) chart.draw();
  textBlocks(st, texts);
}

onState(render);
