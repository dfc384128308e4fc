// home.js - the home page (/?focus=&machine=&suite=&series=&state=&q=): the
// latest decisions (regressions first, then improvements) with their filters
// and how many key groups are still waiting to be decided (refreshed while
// any are), a search for a sha, release or series, the series posted to the
// mailing lists (where each stands and its reply), the machines, the patch
// series and the latest runs.
import {
  $, el, put, api, qs, params, setState, onState, ticket, status, showError, table, link, fmtPct, fmtSigned, fmtCI,
  fmtDate, kernelName, shortSha, pairs, machineTag, verdictTag, EMPTY_RUNS, postedTag, mailText,
} from './kperf.js';

const enc = encodeURIComponent;
const FILTERS = ['focus', 'machine', 'suite', 'series', 'state'];
const lists = { machines: null, tests: null, series: null };

function readState() {
  const p = params();
  return Object.fromEntries([...FILTERS, 'q', 'all', 'role'].map((k) => [k, p.get(k) || '']));
}

async function loadLists() {
  if (!lists.machines) {
    const [m, t, s] = await Promise.all([api('/api/v1/machines?limit=1000'), api('/api/v1/tests?limit=1000'),
      api('/api/v1/series?limit=1000')]);
    lists.machines = m.items;
    lists.tests = t.items;
    lists.series = s.items;
  }
  return lists;
}

function drawFilters(st) {
  const f = $('#filters');
  const sel = (label, name, options) => el('label', {}, label, el('select', { name,
    onchange: (e) => { setState({ ...readState(), [name]: e.target.value }); render(); } },
  options.map(([v, text]) => el('option', { value: v, selected: v === st[name] }, text))));
  const suites = [...new Set(lists.tests.map((t) => t.suite))].sort();
  put(f,
    sel('focus', 'focus', [['', 'everything'], ['lru_lock', 'lru_lock contention'], ['mglru', 'MGLRU']]),
    sel('machine', 'machine', [['', 'all machines'], ...lists.machines.map((m) => [m.name, m.name.startsWith('demo-') ? `${m.name} (demo)` : m.name])]),
    sel('suite', 'suite', [['', 'all suites'], ...suites.map((s) => [s, s])]),
    sel('series', 'series', [['', 'any kernel'], ...lists.series.flatMap((s) => [[s.name, `${s.name} (all versions)`],
      ...(s.versions || []).map((v) => [`${s.name} v${v}`, `${s.name} v${v}`])])]),
    sel('state', 'triage state', [['', 'any state'], ['new', 'new'], ['acknowledged', 'acknowledged'], ['invalid', 'invalid'], ['fixed', 'fixed']]));
  f.onsubmit = (e) => e.preventDefault();
}

const absolute = (d) => d.absolute || d.metric.startsWith('perf-profile.');
const spaced = (o) => pairs(o).split(',').join(', ');
const testText = (d) => `${d.suite}${Object.keys(d.params || {}).length ? ` ${spaced(d.params)}` : ''}${Object.keys(d.variant || {}).length ? ` [${spaced(d.variant)}]` : ''}`;

function decisionsTable(items) {
  return table([
    { key: 'change', label: 'change', num: true,
      cell: (d) => el('span', { class: `c-${d.verdict}` }, absolute(d) ? `${fmtSigned(d.change_abs)} pp` : fmtPct(d.change_pct)) },
    { key: 'ci', label: '95% CI %', num: true, narrow: false, cell: (d) => fmtCI(d.welch && d.welch.ci95_pct) },
    { key: 'metric', label: 'metric and test', cls: 'metric', cell: (d) => [link(`/regressions/${d.id}`, d.metric, { title: 'the decision, its samples and triage' }),
      el('span', { class: 'cell-means' }, testText(d))] },
    { key: 'kernel', label: 'kernel', cls: 'kernel', cell: (d) => el('span', {}, el('span', { class: 'mono' }, kernelName(d.commit, d.release)), ' ', d.subject || '',
      d.series ? el('span', { class: 'muted' }, ` (${d.series})`) : null,
      d.bisected_to ? el('span', { class: 'cell-means' }, 'bisected to ', el('span', { class: 'mono' }, shortSha(d.bisected_to))) : null,
      d.confirmation === 'waiting' ? el('span', { class: 'cell-means' }, 'confirming: the labs are running it again') : null,
      d.confirmation === 'unconfirmed' ? el('span', { class: 'cell-means' }, 'unconfirmed') : null) },
    { key: 'machine', label: 'machine', cell: (d) => machineTag(d.machine) },
    { key: 'vs', label: 'against', narrow: false, cell: (d) => link(`/compare${qs({ base: d.base_commit, target: d.commit, machine: d.machine, suite: d.suite,
      params: pairs(d.params), variant: pairs(d.variant) })}`, `${{ series_base: 'series base', ancestor: 'ancestor' }[d.base_kind] || 'parent'} ${shortSha(d.base_commit)}`) },
    { key: 'state', label: 'state, decided', cell: (d) => [el('span', { class: 'badge state' }, d.state),
      el('span', { class: 'cell-means nowrap' }, fmtDate(d.decided_at || d.created_at).slice(0, 16))] },
  ], items, { rowClass: (d) => `r-${d.verdict}` });
}

// The decision queue under the filters: "still deciding N key groups" while
// the workers are on an import (polled every 2 s), nothing once it is empty;
// when it empties the decisions are drawn again, now complete.
const PENDING_POLL_MS = 2000;
let pendingTimer = null;

const plural = (n, one, many) => `${n.toLocaleString('en')} ${n === 1 ? one : many}`;

function drawPending(d, st, stale) {
  const box = $('#pending');
  clearTimeout(pendingTimer);
  pendingTimer = null;
  const groups = d.pending_groups || 0;
  if (!groups) { put(box); return; }
  const filtered = FILTERS.some((k) => st[k]);
  put(box, el('p', { class: 'status info pending', role: 'status' },
    `Still deciding: ${plural(groups, 'key group', 'key groups')} (machine, test, variant) `
    + `${groups === 1 ? 'has' : 'have'} runs waiting to be judged${filtered ? ' under these filters' : ''}, `
    + `${plural(d.pending_decisions || 0, 'commit decision', 'commit decisions')} in all; the lists below grow as they are made.`));
  pendingTimer = setTimeout(async () => {
    if (stale()) return;
    try {
      const filters = Object.fromEntries(FILTERS.map((k) => [k, st[k]]));
      const now = await api(`/api/v1/regressions${qs({ ...filters, limit: 1 })}`);
      if (stale()) return;
      if (now.pending_groups) drawPending(now, st, stale);
      else drawDecisions(st, stale);
    } catch (e) {
      showError(box, e, 'checking the decision queue');
    }
  }, PENDING_POLL_MS);
}

async function drawDecisions(st, stale) {
  const box = $('#decisions');
  status(box, 'loading', 'loading decisions…');
  const filters = Object.fromEntries(FILTERS.map((k) => [k, st[k]]));
  try {
    const limits = st.all ? [200, 200] : [25, 10];
    // the benchmarks' KPIs and the event counters beside them; totals, times
    // and machine monitors when asked for (role=all)
    const role = st.role === 'all' ? 'kpi,event,info,monitor' : 'kpi,event';
    const [reg, imp] = await Promise.all(['regression', 'improvement'].map((v, i) =>
      api(`/api/v1/regressions${qs({ ...filters, verdict: v, role, limit: limits[i] })}`)));
    if (stale()) return;
    drawPending(reg, st, stale);
    const more = () => link(`/${qs({ ...st, all: '1' })}`, 'show all');
    const part = (title, d, verdict) => el('div', {},
      el('h3', {}, verdictTag(verdict), ` ${title}: ${d.total}`, d.total > d.items.length ? [` (newest ${d.items.length}) · `, more()] : ''),
      d.items.length ? decisionsTable(d.items) : el('p', { class: 'muted' }, `no ${title.toLowerCase()} with these filters`));
    if (!reg.total && !imp.total) {
      const any = FILTERS.some((k) => st[k]);
      if (reg.pending_groups) status(box, 'empty', 'No regressions or improvements so far: the key groups above are still being judged.');
      else status(box, 'empty', any ? 'No regressions or improvements match these filters.'
        : 'No decisions yet: kperf decides each commit against its parent (or a series patch against the series base) about a second after both have runs.');
      return;
    }
    put(box, part('Regressions', reg, 'regression'), part('Improvements', imp, 'improvement'),
      el('p', { class: 'muted small', id: 'roles' }, st.role === 'all'
        ? ['All rows: KPIs, event counters, the benchmarks\' totals and times, machine monitors · ', link(`/${qs({ ...st, role: '' })}`, 'KPIs and event counters only')]
        : ['KPIs and event counters · ', link(`/${qs({ ...st, role: 'all' })}`, 'also totals, times and machine monitors')]));
  } catch (e) {
    showError(box, e, 'loading decisions');
  }
}

function drawMachines() {
  const box = $('#machines');
  if (!lists.machines.length) { status(box, 'empty', EMPTY_RUNS); return; }
  put(box, table([
    { key: 'name', label: 'machine', cell: (m) => el('span', { class: 'machine' }, link(`/trend${qs({ machine: m.name })}`, m.name, { title: 'trends of this machine' }),
      m.name.startsWith('demo-') ? el('span', { class: 'badge demo' }, 'demo') : null) },
    { key: 'cpu', label: 'CPU', narrow: false, cell: (m) => [m.cpu_model || '', m.nr_cpus ? ` ${m.nr_cpus} CPUs` : ''].join('').trim() || '–' },
    { key: 'mem', label: 'memory', num: true, cell: (m) => (m.memory_mb ? `${Math.round(m.memory_mb / 1024)} GiB` : '–') },
    { key: 'runs', label: 'runs', num: true, cell: (m) => String(m.runs) },
    { key: 'last', label: 'last run', cell: (m) => fmtDate(m.last_run_at) },
  ], lists.machines));
}

function drawSeries() {
  const box = $('#series');
  if (!lists.series.length) {
    status(box, 'empty', 'No patch series yet: post commits with "series": "NAME vN" (kperf-collect commits --series, or a run\'s kernel.series).');
    return;
  }
  put(box, table([
    { key: 'name', label: 'series', cell: (s) => link(`/series/${enc(s.name)}`, s.name) },
    { key: 'versions', label: 'versions', cell: (s) => (s.versions || []).map((v, i) => [i ? ' ' : '', link(`/series/${enc(`${s.name} v${v}`)}`, `v${v}`)]) },
    { key: 'patches', label: 'patches', num: true, cell: (s) => String(s.patches) },
    { key: 'runs', label: 'runs', num: true, cell: (s) => String(s.runs) },
  ], lists.series));
}

// The series posted to the lists (those of /api/v1/series with posted), by
// the arrival of their newest version: where it stands and its reply.
const POSTED_SHOWN = 10;

function drawPosted() {
  const box = $('#posted');
  const newest = (s) => s.posted.reduce((a, p) => (p.version > a.version || (p.version === a.version
    && String(p.posted_at) > String(a.posted_at)) ? p : a));
  const rows = lists.series.filter((s) => s.posted && s.posted.length).map((s) => ({ s, p: newest(s) }))
    .sort((a, b) => String(b.p.posted_at || '').localeCompare(String(a.p.posted_at || '')) || a.s.name.localeCompare(b.s.name));
  if (!rows.length) {
    status(box, 'empty', 'No series posted to a mailing list yet: kperf reads them from the public-inbox archives it polls (POST /api/v1/inboxes).');
    return;
  }
  put(box, table([
    { key: 'name', label: 'series', cls: 'kernel', cell: ({ s, p }) => [link(`/series/${enc(s.name)}`, s.name, { class: 'posted-series' }),
      el('span', { class: 'cell-means' }, p.subject || '')] },
    { key: 'version', label: 'version', cell: ({ s, p }) => [`v${p.version}`,
      s.posted.length > 1 ? el('span', { class: 'cell-means' }, `${s.posted.length} versions posted`) : null] },
    { key: 'author', label: 'author', narrow: false, cell: ({ p }) => p.author || '–' },
    { key: 'state', label: 'where it stands', cell: ({ p }) => [postedTag(p),
      mailText(p.mail) ? el('span', { class: `badge mail mail-${p.mail}` }, mailText(p.mail)) : null] },
    { key: 'posted', label: 'posted', narrow: false, cell: ({ p }) => fmtDate(p.posted_at) },
  ], rows.slice(0, POSTED_SHOWN), { rowClass: ({ p }) => (p.state === 'regression' ? 'r-regression' : null) }),
  rows.length > POSTED_SHOWN ? el('p', { class: 'muted small' }, `newest ${POSTED_SHOWN} of ${rows.length} posted series`) : null);
}

async function drawRuns() {
  const box = $('#runs');
  try {
    const r = await api('/api/v1/runs?limit=10');
    if (!r.items.length) { status(box, 'empty', EMPTY_RUNS); return; }
    put(box, runsTable(r.items), el('p', { class: 'muted small' }, `${r.total} runs in all`));
  } catch (e) {
    showError(box, e, 'loading runs');
  }
}

function runsTable(items) {
  return table([
    { key: 'run', label: 'run', cls: 'metric', cell: (r) => link(`/runs/${enc(r.run_id)}`, r.run_id) },
    { key: 'machine', label: 'machine', cell: (r) => machineTag(r.machine) },
    { key: 'kernel', label: 'kernel', cell: (r) => el('span', { class: 'mono' }, kernelName(r.commit, r.release)) },
    { key: 'test', label: 'test', cell: (r) => `${r.suite}${Object.keys(r.params || {}).length ? ` ${pairs(r.params)}` : ''}` },
    { key: 'metrics', label: 'metrics', num: true, narrow: false, cell: (r) => String(r.metrics) },
    { key: 'started', label: 'started', cell: (r) => fmtDate(r.started_at || r.received_at) },
  ], items);
}

// A sha, release or series typed into the search box.
async function search(q) {
  const box = $('#found');
  if (!q) { put(box); return; }
  const qq = q.trim();
  const series = lists.series.find((s) => s.name === qq || (s.versions || []).some((v) => `${s.name} v${v}` === qq));
  if (series) { location.href = `/series/${enc(qq)}`; return; }
  status(box, 'loading', `looking for ${qq}…`);
  try {
    const r = await api(`/api/v1/runs${qs({ commit: qq, limit: 50 })}`);
    if (!r.items.length) {
      status(box, 'empty', `No runs of a kernel "${qq}": give a sha (7+ hex digits), an exact release or a series name.`);
      return;
    }
    const kernels = [...new Set(r.items.map((x) => x.commit || x.release))];
    const first = await api(`/api/v1/runs/${enc(r.items[0].run_id)}`);
    const k = first.kernel || {};
    put(box, el('div', { class: 'card' },
      el('h2', {}, `Kernel ${qq}`),
      k.subject ? el('p', {}, el('span', { class: 'mono' }, kernelName(k.commit, k.release)), ' ', k.subject) : null,
      kernels.length > 1 ? el('p', { class: 'muted' }, `${kernels.length} kernels match: ${kernels.map(shortSha).join(', ')}`) : null,
      k.parent ? el('p', {}, link(`/compare${qs({ base: k.parent, target: k.commit })}`, `compare ${shortSha(k.commit)} with its parent ${shortSha(k.parent)}`)) : null,
      runsTable(r.items), r.total > r.items.length ? el('p', { class: 'muted small' }, `${r.total} runs in all`) : null));
  } catch (e) {
    showError(box, e, `looking for ${qq}`);
  }
}

function fillRefs() {
  const list = $('#refs');
  if (list.childElementCount) return;
  for (const s of lists.series) {
    list.appendChild(el('option', { value: s.name }));
    for (const v of s.versions || []) list.appendChild(el('option', { value: `${s.name} v${v}` }));
  }
  api('/api/v1/commits?limit=500').then((c) => {
    const seen = new Set();
    for (const x of c.items) {
      for (const v of [x.release, x.sha && shortSha(x.sha)]) {
        if (v && !seen.has(v)) { seen.add(v); list.appendChild(el('option', { value: v, label: x.subject || '' })); }
      }
    }
  }).catch(() => {});
}

async function render() {
  const st = readState();
  const stale = ticket();
  try {
    await loadLists();
  } catch (e) {
    showError($('#decisions'), e, 'loading the catalog');
    return;
  }
  const q = $('#q');
  q.value = st.q;
  $('#search').onsubmit = (e) => { e.preventDefault(); setState({ ...readState(), q: q.value.trim() }); search(q.value); };
  fillRefs();
  drawFilters(st);
  drawPosted();
  drawMachines();
  drawSeries();
  search(st.q);
  await Promise.all([drawDecisions(st, stale), drawRuns()]);
}

onState(render);
