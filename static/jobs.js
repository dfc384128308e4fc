// jobs.js - /jobs: the labs' work queue (running with lease age, queued,
// failed with their reasons, done), the agents and what they offer, and the
// bisections. Text from the database enters the page through el() only.
import {
  api, el, put, clear, $, table, status, showError, fmtDate, shortSha, pairs, link,
} from './kperf.js';

const age = (s) => {
  if (!s) return '';
  const secs = Math.max(0, Math.round((Date.now() - Date.parse(s)) / 1000));
  if (secs < 120) return `${secs} s`;
  if (secs < 7200) return `${Math.round(secs / 60)} min`;
  return `${Math.round(secs / 3600)} h`;
};

const test = (j) => {
  const p = pairs(j.params);
  return p ? `${j.suite} ${p}` : j.suite;
};
const variant = (j) => pairs(j.variant) || '';
const kernel = (j) => (j.commit ? link(`/compare?target=${shortSha(j.commit)}`, shortSha(j.commit), { class: 'mono' }) : j.release || '?');
const why = (j) => (j.bisection ? link(`/jobs#bisection-${j.bisection}`, `bisection ${j.bisection}`)
  : j.decision ? link(`/regressions/${j.decision}`, `decision ${j.decision}`) : j.reason || '');

async function section(node, state, columns, empty) {
  status(node, 'loading', `Loading ${state} jobs…`);
  try {
    const list = await api(`/api/v1/jobs?state=${state}&limit=${state === 'done' ? 50 : 500}`);
    clear(node);
    if (!list.items.length) status(node, 'empty', empty);
    else put(node, table(columns, list.items, { caption: `${list.total} ${state}` }));
  } catch (e) {
    showError(node, e, `loading ${state} jobs`);
  }
}

const base = [
  { key: 'id', label: 'Job', num: true },
  { key: 'commit', label: 'Kernel', cell: kernel },
  { key: 'test', label: 'Test', cell: test },
  { key: 'variant', label: 'Variant', cell: variant, narrow: false },
  { key: 'runs', label: 'Runs', num: true, cell: (j) => `${j.runs_done}/${j.runs}` },
  { key: 'why', label: 'Why', cell: why },
];

async function bisections() {
  const node = $('#bisections');
  status(node, 'loading', 'Loading bisections…');
  try {
    const list = await api('/api/v1/bisections?limit=50');
    clear(node);
    if (!list.items.length) {
      status(node, 'empty', 'No bisections yet: a confirmed regression whose base is not its parent starts one.');
      return;
    }
    put(node, table([
      { key: 'id', label: 'Bisection', num: true, cell: (b) => el('span', { id: `bisection-${b.id}` }, String(b.id)) },
      { key: 'metric', label: 'Metric', cell: (b) => `${b.metric} on ${b.machine}` },
      { key: 'range', label: 'Good..bad', cell: (b) => el('span', { class: 'mono' }, `${shortSha(b.good)}..${shortSha(b.bad)}`) },
      { key: 'state', label: 'State', cell: (b) => el('span', { class: `state-${b.state}` }, b.state) },
      { key: 'first_bad', label: 'First bad', cell: (b) => (b.first_bad ? link(`/compare?base=${shortSha(b.last_good || b.good)}&target=${shortSha(b.first_bad)}`, shortSha(b.first_bad), { class: 'mono' }) : '') },
      { key: 'steps', label: 'Steps', num: true, cell: (b) => String(b.steps.length) },
      { key: 'decision', label: 'Decision', cell: (b) => (b.decision_id ? link(`/regressions/${b.decision_id}`, String(b.decision_id)) : 'by hand') },
      { key: 'started_at', label: 'Started', cell: (b) => fmtDate(b.started_at) },
    ], list.items));
  } catch (e) {
    if (e.status === 404) clear(node);
    else showError(node, e, 'loading bisections');
  }
}

async function agents() {
  const node = $('#agents');
  status(node, 'loading', 'Loading agents…');
  try {
    const list = await api('/api/v1/agents?limit=500');
    clear(node);
    if (!list.items.length) {
      status(node, 'empty', 'No agent has claimed work yet: run kperf-collect agent --catalogue FILE on a lab machine.');
      return;
    }
    put(node, table([
      { key: 'machine', label: 'Machine' },
      { key: 'tests', label: 'Tests offered', cell: (a) => a.tests.map(test).join('; ') },
      { key: 'last_claim_at', label: 'Last claim', cell: (a) => `${age(a.last_claim_at)} ago` },
    ], list.items));
  } catch (e) {
    showError(node, e, 'loading agents');
  }
}

function load() {
  section($('#running'), 'running', [...base,
    { key: 'leased_to', label: 'Machine' },
    { key: 'claimed_at', label: 'Lease age', cell: (j) => age(j.claimed_at) },
  ], 'Nothing running.');
  section($('#queued'), 'queued', [...base,
    { key: 'machine', label: 'Machine', cell: (j) => j.machine || 'any' },
    { key: 'priority', label: 'Priority', num: true },
    { key: 'created_at', label: 'Waiting', cell: (j) => age(j.created_at) },
  ], 'Nothing queued.');
  section($('#failed'), 'failed', [...base,
    { key: 'failures', label: 'Reasons', cell: (j) => el('ul', {}, j.failures.map((f) => el('li', {}, `${f.machine || '?'}: ${f.reason}`))) },
    { key: 'ended_at', label: 'Ended', cell: (j) => fmtDate(j.ended_at) },
  ], 'No failed jobs.');
  section($('#done'), 'done', [...base,
    { key: 'leased_to', label: 'Machine' },
    { key: 'ended_at', label: 'Ended', cell: (j) => fmtDate(j.ended_at) },
  ], 'No job done yet.');
  bisections();
  agents();
}

load();
