// run.js - /runs/RUN_ID: one run as posted (GET /api/v1/runs/{run_id}):
// machine, kernel (commit, cmdline, config), variant, test params, every
// metric with its samples and statistics, and the kept output tail.
import {
  $, el, put, api, qs, status, showError, table, link, fmtNum, fmtDate, kernelName, shortSha, pairs,
  machineTag, isKpi, invalidateButton, metricRoles,
} from './kperf.js';

const view = $('#view');
const runId = decodeURIComponent(location.pathname.replace(/^\/runs\//, ''));

const kv = (rows) => el('table', { class: 'kv' }, el('tbody', {}, rows.filter((r) => r && r[1] !== undefined && r[1] !== null && r[1] !== '')
  .map(([k, v]) => el('tr', {}, el('th', { scope: 'row' }, k), el('td', {}, v)))));

const show = (v) => (typeof v === 'string' ? v : JSON.stringify(v));
const mapTable = (obj, label) => (obj && Object.keys(obj).length
  ? el('details', {}, el('summary', {}, `${label} (${Object.keys(obj).length})`),
    table([{ key: 'k', label: 'key', cls: 'metric' }, { key: 'v', label: 'value', cls: 'metric' }],
      Object.keys(obj).sort().map((k) => ({ k, v: show(obj[k]) }))))
  : null);

function stats(values) {
  const n = values.length;
  const mean = values.reduce((a, b) => a + b, 0) / n;
  const sd = n > 1 ? Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1)) : 0;
  return { n, mean, sd, min: Math.min(...values), max: Math.max(...values) };
}

function metricsTable(run, roles) {
  const suite = run.test && run.test.suite;
  const unitsOf = run.units || {};
  const ORDER = { kpi: 0, event: 1, info: 2, monitor: 3 };
  const roleOf = (name) => (roles.get(name) ? roles.get(name).role : isKpi(name, suite) ? 'kpi' : 'info');
  const rows = Object.entries(run.metrics || {}).map(([name, v]) => {
    const values = Array.isArray(v) ? v : [v];
    return { name, values, unit: unitsOf[name] || (name.startsWith('perf-profile.') ? '%' : ''), role: roleOf(name),
      rank: roles.get(name) && roles.get(name).kpi_rank != null ? roles.get(name).kpi_rank : 99, ...stats(values) };
  }).sort((a, b) => (ORDER[a.role] - ORDER[b.role]) || (a.rank - b.rank) || a.name.localeCompare(b.name));
  const trend = (r) => `/trend${qs({ machine: run.machine.name, suite, params: pairs(run.test.params), variant: pairs(run.variant), metric: r.name })}`;
  return table([
    { key: 'name', label: 'metric', cls: 'metric', cell: (r) => link(trend(r), r.name, { title: 'trend of this metric' }) },
    { key: 'role', label: 'role', title: 'KPI, event counter, informational row or machine monitor', cell: (r) => r.role },
    { key: 'n', label: 'n', num: true, cell: (r) => String(r.n) },
    { key: 'mean', label: 'mean', num: true, cell: (r) => el('span', {}, fmtNum(r.mean), r.unit ? el('span', { class: 'unit' }, r.unit) : null) },
    { key: 'sd', label: '±%', num: true, cell: (r) => (r.n > 1 && r.mean ? `${(100 * r.sd / Math.abs(r.mean)).toFixed(2)}%` : '') },
    { key: 'min', label: 'min', num: true, cell: (r) => fmtNum(r.min) },
    { key: 'max', label: 'max', num: true, cell: (r) => fmtNum(r.max) },
    { key: 'samples', label: 'samples', cls: 'mono', cell: (r) => r.values.slice(0, 12).map(fmtNum).join('  ') + (r.values.length > 12 ? `  … (${r.values.length})` : '') },
    { key: 'dir', label: 'direction', cell: (r) => (run.directions && run.directions[r.name]) || '' },
  ], rows);
}

async function render() {
  let run;
  try {
    run = await api(`/api/v1/runs/${encodeURIComponent(runId)}`);
  } catch (e) {
    if (e.status === 404) status(view, 'empty', `No run "${runId}". Runs are listed on the home page; collectors post them to /api/v1/runs.`);
    else showError(view, e, 'loading the run');
    return;
  }
  document.title = `${run.run_id} · kperf`;
  const roles = await metricRoles(run.test && run.test.suite);
  const k = run.kernel || {};
  const m = run.machine || {};
  const t = run.test || {};
  const compareParent = k.commit && k.parent
    ? link(`/compare${qs({ base: k.parent, target: k.commit, machine: m.name, suite: t.suite, params: pairs(t.params), variant: pairs(run.variant) })}`,
      `compare with parent ${shortSha(k.parent)}`)
    : null;
  put(view,
    el('h1', { class: 'wrap-anywhere' }, `Run ${run.run_id}`),
    run.valid === false
      ? el('p', { class: 'status error', id: 'run-invalid' }, `Invalid since ${fmtDate(run.invalidated_at)}: an admin marked it so; no decision counts it.`)
      : el('p', { class: 'controls' }, invalidateButton(run.run_id, render)),
    el('p', { class: 'lead' }, machineTag(m.name), ' · ', el('strong', {}, t.suite || '?'), ' ',
      el('span', { class: 'mono' }, pairs(t.params)), run.variant && Object.keys(run.variant).length ? ` · variant ${pairs(run.variant)}` : '',
      ' · kernel ', el('span', { class: 'mono' }, kernelName(k.commit, k.release))),
    el('div', { class: 'grid' },
      el('section', { class: 'card' }, el('h2', {}, 'Kernel'), kv([
        ['commit', k.commit ? el('span', { class: 'mono' }, k.commit) : null],
        ['subject', k.subject],
        ['parent', k.parent ? el('span', { class: 'mono' }, k.parent) : null],
        ['', compareParent],
        ['release', k.release],
        ['series', k.series ? link(`/series/${encodeURIComponent(k.series)}`, k.series) : null],
        ['author', k.author], ['date', k.date ? fmtDate(k.date) : null], ['branch', k.branch],
        ['cmdline', k.cmdline ? el('span', { class: 'mono' }, k.cmdline) : null],
      ]), mapTable(k.config, 'kernel config')),
      el('section', { class: 'card' }, el('h2', {}, 'Machine and run'), kv([
        ['machine', machineTag(m.name)], ['CPU', m.cpu_model], ['CPUs', m.nr_cpus != null ? String(m.nr_cpus) : null],
        ['sockets', m.sockets != null ? String(m.sockets) : null], ['memory', m.memory_mb ? `${Math.round(m.memory_mb / 1024)} GiB` : null],
        ['NUMA nodes', m.numa_nodes != null ? String(m.numa_nodes) : null],
        ['variant', run.variant && Object.keys(run.variant).length ? pairs(run.variant) : '(none)'],
        ['params', t.params && Object.keys(t.params).length ? pairs(t.params) : '(none)'],
        ['started', run.started_at ? fmtDate(run.started_at) : null],
        ['duration', run.duration_s != null ? `${fmtNum(run.duration_s)} s` : null],
        ['command', run.command ? el('span', { class: 'mono' }, run.command) : null],
        ['exit status', run.exit_status != null ? String(run.exit_status) : null],
      ]), mapTable(m.info, 'machine facts'), mapTable(run.environment, 'environment'))),
    el('section', {}, el('h2', {}, `Metrics (${Object.keys(run.metrics || {}).length})`), metricsTable(run, roles)),
    el('section', {}, el('h2', {}, 'Output tail'), run.output_tail
      ? el('pre', { class: 'tail', tabindex: '0' }, run.output_tail)
      : el('p', { class: 'muted' }, 'The collector kept no output for this run.')));
}

render();
