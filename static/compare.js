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

// A row's place in its test's table: KPIs by rank (the headline's kind
// first), then event counters, then the benchmark's other rows.
const ROLE_ORDER = { kpi: 0, event: 1, info: 2, monitor: 3 };
const roleOf = (r) => r.role || (isKpi(r.metric, r.suite) ? 'kpi' : 'info');
const rowOrder = (a, b) => (ROLE_ORDER[roleOf(a)] - ROLE_ORDER[roleOf(b)])
  || ((a.kpi_rank ?? 99) - (b.kpi_rank ?? 99)) || a.metric.localeCompare(b.metric);
const PAGE_ROWS = 40;

// A Welch interval of a relative change below -100% (the normal
// approximation on few, spread samples): a positive quantity cannot fall by
// more than all of it. Marked, and said under the table.
const belowAll = (r) => !absolute(r) && r.welch && r.welch.ci95_pct && r.welch.ci95_pct[0] < -100;

function testGroups(rows) {
  const groups = new Map();
  for (const r of rows) {
    const key = JSON.stringify([r.machine, r.suite, pairs(r.params), pairs(r.variant)]);
    if (!groups.has(key)) groups.set(key, { machine: r.machine, suite: r.suite, params: r.params, variant: r.variant, rows: [] });
    groups.get(key).rows.push(r);
  }
  return [...groups.values()];
}

function rowsTable(data, st, unitOf, onSort) {
  const multiTarget = data.targets.length > 1;
  const prefix = st.filter.trim();
  const shown = (prefix ? data.rows.filter((r) => r.metric.startsWith(prefix)) : data.rows).slice().sort(rowOrder);
  const trendHref = (r) => `/trend${qs({ machine: r.machine, suite: r.suite, params: pairs(r.params), variant: pairs(r.variant), metric: r.metric })}`;
  const mean = (v, u) => el('span', {}, fmtNum(v), u ? el('span', { class: 'unit' }, u) : null);
  const sides = (r) => `${r.base.runs ?? '?'}/${r.target.runs ?? '?'}`;
  const cols = [
    multiTarget ? { key: 'key', label: 'target', value: (r) => r.target_ref, cell: (r) => r.target_ref } : null,
    { key: 'metric', label: 'metric', cls: 'metric', value: (r) => r.metric,
      cell: (r) => [link(trendHref(r), r.metric, { title: 'trend of this metric' }),
        r.role === 'kpi' && r.kpi_rank === 0 ? el('span', { class: 'tag kpi', title: 'the benchmark\'s headline figure' }, 'KPI') : null] },
    { key: 'base', label: 'base mean', num: true, value: (r) => r.base.mean, cell: (r) => mean(r.base.mean, unitOf(r)) },
    { key: 'bsd', label: '±%', num: true, narrow: false, title: 'base stddev in % of its mean', value: (r) => r.base.stddev_pct,
      cell: (r) => (r.base.stddev_pct == null ? '' : `${r.base.stddev_pct.toFixed(1)}%`) },
    { key: 'change', label: 'change', num: true, value: changeValue,
      cell: (r) => el('span', { class: `c-${r.verdict}` }, changeText(r)) },
    { key: 'target', label: 'target mean', num: true, value: (r) => r.target.mean, cell: (r) => mean(r.target.mean, unitOf(r)) },
    { key: 'tsd', label: '±%', num: true, narrow: false, title: 'target stddev in % of its mean', value: (r) => r.target.stddev_pct,
      cell: (r) => (r.target.stddev_pct == null ? '' : `${r.target.stddev_pct.toFixed(1)}%`) },
    { key: 'ci', label: '95% CI %', num: true, title: 'Welch 95% confidence interval of the change, in % of the base mean',
      value: (r) => (r.welch && r.welch.ci95_pct ? r.welch.ci95_pct[0] : null),
      cell: (r) => [fmtCI(r.welch && r.welch.ci95_pct), belowAll(r) ? el('sup', { title: 'below -100%: see the note under the table' }, '†') : null] },
    { key: 'verdict', label: 'verdict', value: (r) => VERDICT_RANK[r.verdict],
      cell: (r) => (r.judged === false ? el('span', { class: 'verdict v-none', title: r.not_judged }, 'not judged') : verdictTag(r.verdict)) },
    { key: 'p', label: 'p', num: true, narrow: false, title: 'Welch two-sided p-value', value: (r) => (r.welch ? r.welch.p_value : null),
      cell: (r) => fmtP(r.welch && r.welch.p_value) },
    { key: 'n', label: 'runs', num: true, narrow: false, title: 'runs of the base / of the target (their samples pooled: n of the API)', cell: sides },
    { key: 'lkp', label: 'LKP', narrow: false, title: 'LKP\'s changed-stat rule', value: (r) => (r.lkp_changed ? 1 : 0), cell: (r) => (r.lkp_changed ? '✓' : '') },
  ].filter(Boolean);
  const opts = { sort: st.sort, dir: st.dir || 'desc', onSort, rowClass: (r) => `r-${r.verdict}` };
  // a long table shows its first PAGE_ROWS rows and a button for the rest
  const paged = (list) => {
    if (list.length <= PAGE_ROWS) return table(cols, list, opts);
    const box = el('div', {});
    const more = el('button', { type: 'button', class: 'more-rows', onclick: () => put(box, table(cols, list, opts)) },
      `show all ${list.length} rows`);
    put(box, table(cols, list.slice(0, PAGE_ROWS), opts), el('p', {}, more));
    return box;
  };
  const groups = testGroups(shown);
  const notes = [];
  if (shown.some(belowAll)) notes.push(el('p', { class: 'hint' }, '† The interval reaches below -100%: Welch\'s interval is symmetric around the change and, with few or very spread samples, its lower end passes -100%, which a positive quantity cannot fall by. Read it as a large fall known poorly; more runs narrow it.'));
  return el('div', {},
    el('p', { class: 'muted small' }, `${shown.length} of ${data.rows.length} rows in ${groups.length} test${groups.length === 1 ? '' : 's'}`,
      prefix ? ` with metrics starting "${prefix}"` : '', st.significant === '1' ? ', significant only' : ''),
    groups.map((g) => {
      const zero = (r) => r.base.mean === 0 && r.target.mean === 0;
      const main = g.rows.filter((r) => roleOf(r) !== 'monitor' && !zero(r));
      const zeros = g.rows.filter((r) => roleOf(r) !== 'monitor' && zero(r));
      const monitors = g.rows.filter((r) => roleOf(r) === 'monitor');
      const why = g.rows.find((r) => r.judged === false);
      return el('section', { class: 'test-group' },
        el('h3', {}, machineTag(g.machine), ' · ', el('strong', {}, g.suite),
          Object.keys(g.params || {}).length ? [' · ', el('span', { class: 'mono' }, pairs(g.params))] : null,
          Object.keys(g.variant || {}).length ? [' · variant ', el('span', { class: 'mono' }, pairs(g.variant))] : null),
        why ? el('p', { class: 'status error' }, `Not judged as a kernel change: ${why.not_judged}.`) : null,
        main.length ? paged(main) : null,
        zeros.length ? el('details', { class: 'zeros' },
          el('summary', {}, `${zeros.length} row${zeros.length === 1 ? '' : 's'} zero on both sides`), paged(zeros)) : null,
        monitors.length ? el('details', { class: 'monitors' },
          el('summary', {}, `${monitors.length} machine monitor${monitors.length === 1 ? '' : 's'} (meminfo, nr_* gauges, memcg sizes, perf-profile)`),
          paged(monitors)) : null);
    }),
    notes);
}

// The KPI chart's axis: the changes and intervals of most rows, not the one
// latency row that moved +1,500%; bars past it are clamped and marked.
function chartLimit(rows) {
  const ends = rows.flatMap((r) => [Math.abs(r.welch.ci95_pct[0]), Math.abs(r.welch.ci95_pct[1]), Math.abs(r.change_pct)])
    .filter(Number.isFinite).sort((a, b) => a - b);
  if (!ends.length) return 100;
  const p90 = ends[Math.min(ends.length - 1, Math.floor(ends.length * 0.9))];
  return Math.max(5, Math.min(100, Math.ceil(p90 * 1.2)));
}

function kpiChart(data) {
  const rows = data.rows.filter((r) => roleOf(r) === 'kpi' && r.welch && r.welch.ci95_pct);
  if (!rows.length) return null;
  const vary = {
    machine: new Set(rows.map((r) => r.machine)).size > 1,
    suite: new Set(rows.map((r) => r.suite)).size > 1,
    params: varyingKeys(rows.map((r) => r.params)),
    variant: varyingKeys(rows.map((r) => r.variant)),
  };
  const multiMetric = new Set(rows.map((r) => r.metric)).size > 1;
  const top = rows.length > 40 ? [...rows].sort((a, b) => Math.abs(b.change_pct) - Math.abs(a.change_pct)).slice(0, 40) : rows;
  const lim = chartLimit(top);
  const clamp = (v) => Math.max(-lim, Math.min(lim, v));
  const items = top.map((r) => {
    const clamped = Math.abs(r.change_pct) > lim || Math.abs(r.welch.ci95_pct[0]) > lim || Math.abs(r.welch.ci95_pct[1]) > lim;
    const label = [multiMetric ? r.metric : null, rowLabel(r, vary, data.targets.length > 1)].filter(Boolean).join(' · ') || r.metric;
    return { label: clamped ? `${label} (clamped)` : label, value: clamp(r.change_pct),
      ci: [clamp(r.welch.ci95_pct[0]), clamp(r.welch.ci95_pct[1])], verdict: r.judged === false ? 'noise' : r.verdict,
      real: { value: r.change_pct, ci: r.welch.ci95_pct } };
  });
  const clampedN = items.filter((i) => i.label.endsWith('(clamped)')).length;
  const box = chartBox('change of the benchmark KPIs in % with 95% confidence intervals');
  const section = el('section', {}, el('h2', {}, 'KPIs: change with 95% CI'),
    rows.length > top.length ? el('p', { class: 'muted small' }, `the ${top.length} largest of ${rows.length} KPI rows`) : null,
    clampedN ? el('p', { class: 'muted small', id: 'chart-clamped' }, `axis at ±${lim}%: ${clampedN} bar${clampedN === 1 ? '' : 's'} reaching past it are clamped and marked "(clamped)"; the table has their figures`) : null,
    box.wrap);
  return { section, draw: () => ciBarChart(box, items, { title: 'change of the mean, % of base (95% CI)', limit: lim }) };
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
