// regression.js - /regressions/ID: one decision (GET /api/v1/regressions/{id})
// with both sides' samples as a strip chart, its numbers, triage controls
// (POST with the admin token the user enters, kept in sessionStorage) and
// what the API keeps of its history.
import {
  $, el, put, api, apiPost, qs, status, showError, errorText, link, units, fmtNum, fmtPct, fmtSigned, fmtCI,
  fmtP, fmtDate, kernelName, shortSha, pairs, machineTag, verdictTag, invalidateButton,
} from './kperf.js';
import { chartBox, stripChart, makeChart, color } from './charts.js';

const view = $('#view');
const id = decodeURIComponent(location.pathname.replace(/^\/regressions\//, ''));
const TOKEN_KEY = 'kperf.adminToken';

const kv = (rows) => el('table', { class: 'kv' }, el('tbody', {}, rows.filter(Boolean)
  .map(([k, v]) => el('tr', {}, el('th', { scope: 'row' }, k), el('td', {}, v)))));

function numbers(d, unit) {
  const side = (s) => [el('td', { class: 'num' }, String(s.runs ?? '–')), el('td', { class: 'num' }, String(s.n ?? '–')),
    el('td', { class: 'num' }, fmtNum(s.mean), unit ? el('span', { class: 'unit' }, unit) : null),
    el('td', { class: 'num' }, s.stddev_pct == null ? '–' : `${s.stddev_pct.toFixed(2)}%`)];
  return el('div', { class: 'table-wrap' }, el('table', {},
    el('thead', {}, el('tr', {}, ['side', 'kernel', 'runs', 'samples', 'mean', '±%'].map((h, i) => el('th', { class: i > 1 ? 'num' : null, scope: 'col' }, h)))),
    el('tbody', {},
      el('tr', {}, el('td', {}, baseName(d)), el('td', { class: 'mono' }, kernelName(d.base_commit)), side(d.base)),
      el('tr', {}, el('td', {}, 'commit'), el('td', { class: 'mono' }, kernelName(d.commit, d.release)), side(d.target)))));
}

// A side whose runs are in an archived month has no samples, only each run's summary.
function archivedNote(d) {
  const sides = [['base', d.base_archived], ['commit', d.target_archived]].filter(([, a]) => a && a.length);
  if (!sides.length) return null;
  return el('p', { class: 'hint' }, sides.map(([name, runs]) => `${name}: ${runs.length} run(s) of an archived month, no dots (summaries: ${
    runs.map((r) => `${fmtNum(r.mean)} ± ${fmtNum(r.stddev)}, n=${r.n}`).join('; ')})`).join('. '));
}

const baseName = (d) => ({ series_base: 'series base', ancestor: 'nearest tested ancestor' }[d.base_kind] || 'parent');

const CONFIRMATION = {
  waiting: 'waiting for the labs\' runs of both commits (its mail waits)',
  confirmed: 'confirmed with more runs',
  refuted: 'refuted: noise with more runs (not mailed)',
  unconfirmed: 'unconfirmed: mailed without the runs it asked for',
};

// The bisection this decision belongs to: its steps, and the metric's change
// against the good end over the bisected commits (good and bad ends marked).
async function bisection(d, node) {
  let b;
  try {
    b = await api(`/api/v1/bisections/${d.bisection}`);
  } catch (e) {
    showError(node, e, 'loading the bisection');
    return;
  }
  const box = chartBox(`${b.metric}: change against the good commit at each bisected commit`, 'short');
  const steps = [...b.steps].sort((x, y) => x.position - y.position); /* in chain order */
  put(node,
    el('p', {}, `${b.state === 'found' ? 'Found' : b.state === 'running' ? 'Running' : 'Inconclusive'}: `,
      el('span', { class: 'mono' }, shortSha(b.good)), ' (good) .. ', el('span', { class: 'mono' }, shortSha(b.bad)),
      ` (bad), ${b.commits} commits on ${b.machine}`,
      b.first_bad ? [', first bad commit ', el('span', { class: 'mono' }, shortSha(b.first_bad)), ` ${b.first_bad_subject || ''}`] : '',
      b.reason ? ` — ${b.reason}` : ''),
    box.wrap,
    el('div', { class: 'table-wrap' }, el('table', {},
      el('thead', {}, el('tr', {}, ['step', 'commit', 'runs', 'change vs good', 'vs good', 'vs bad', 'judged'].map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, b.steps.map((st, i) => el('tr', {},
        el('td', { class: 'num' }, String(i + 1)),
        el('td', { class: 'mono' }, shortSha(st.commit), ' ', el('span', { class: 'muted' }, st.subject || '')),
        el('td', { class: 'num' }, String(st.runs)),
        el('td', { class: 'num' }, fmtPct(st.change_pct_vs_good)),
        el('td', {}, verdictTag(st.verdict_vs_good)), el('td', {}, verdictTag(st.verdict_vs_bad)),
        el('td', {}, el('span', { class: `state-${st.class}` }, st.class))))))));
  const points = [{ label: `${shortSha(b.good)} good`, y: 0, c: 2 }, ...steps.map((st) => ({ label: shortSha(st.commit), y: st.change_pct_vs_good, c: st.class === 'bad' ? 5 : st.class === 'good' ? 2 : 1 })),
    { label: `${shortSha(b.bad)} bad`, y: d.change_pct, c: 5 }];
  makeChart(box.canvas, {
    type: 'line',
    data: { labels: points.map((p) => p.label), datasets: [{ label: `${b.metric}, % against the good commit`, data: points.map((p) => p.y),
      borderColor: color(0), pointBackgroundColor: points.map((p) => color(p.c)), pointRadius: 5 }] },
    options: { scales: { y: { title: { display: true, text: '% change' } } } },
  });
}

// An admin asks the labs for more runs of both commits (jobs on this machine).
function moreRuns(d) {
  const out = el('span', { role: 'status' });
  const ask = async () => {
    const token = sessionStorage.getItem(TOKEN_KEY) || '';
    if (!token) {
      put(out, 'this needs the admin token: enter it under Triage first');
      return;
    }
    put(out, 'asking…');
    try {
      for (const commit of [d.base_commit, d.commit]) {
        await apiPost('/api/v1/jobs', { commit, machine: d.machine, suite: d.suite, params: d.params,
          variant: d.variant, runs: 3, reason: `more runs for decision ${d.id}` }, token);
      }
      put(out, 'asked: 3 more runs of each side, ', link('/jobs', 'see the jobs'));
    } catch (e) {
      put(out, `asking failed: ${errorText(e)}`);
    }
  };
  return el('p', {}, el('button', { type: 'button', id: 'more-runs', onclick: ask }, 'Ask the labs for 3 more runs of both sides'), ' ', out);
}

function triage(d, onDone) {
  const token = el('input', { type: 'password', name: 'token', autocomplete: 'off', value: sessionStorage.getItem(TOKEN_KEY) || '',
    placeholder: 'admin token' });
  const state = el('select', { name: 'state' }, ['new', 'acknowledged', 'invalid', 'fixed'].map((s) => el('option', { value: s, selected: s === d.state }, s)));
  const note = el('textarea', { name: 'note', rows: '2', cols: '40', placeholder: 'why (kept with the decision)' }, d.note || '');
  const out = el('div', { 'aria-live': 'polite' });
  const form = el('form', { class: 'controls', id: 'triage' },
    el('label', {}, 'triage state', state),
    el('label', {}, 'note', note),
    el('label', {}, 'admin token (kept for this browser tab only)', token),
    el('button', { type: 'submit', class: 'primary' }, 'Save'),
    el('button', { type: 'button', onclick: () => { sessionStorage.removeItem(TOKEN_KEY); token.value = ''; } }, 'Forget token'));
  form.onsubmit = async (e) => {
    e.preventDefault();
    if (!token.value.trim()) { put(out, el('p', { class: 'status error', role: 'alert' }, 'Triage needs an admin token (kperfd token create NAME --role admin).')); return; }
    sessionStorage.setItem(TOKEN_KEY, token.value.trim());
    put(out, el('p', { class: 'status loading' }, 'saving…'));
    try {
      const body = { state: state.value };
      if (note.value.trim() !== (d.note || '')) body.note = note.value.trim();
      const next = await apiPost(`/api/v1/regressions/${encodeURIComponent(id)}`, body, token.value.trim());
      onDone(next, `saved: ${next.state}`);
    } catch (err) {
      put(out, el('p', { class: 'status error', role: 'alert' }, `triage failed: ${errorText(err)}`));
    }
  };
  return el('div', {}, form, out);
}

async function render(d, message) {
  const unit = (await units())[d.metric] || (d.metric.startsWith('perf-profile.') ? '%' : '');
  const box = chartBox(`samples of ${d.metric}: base against commit`, 'short');
  const filters = { machine: d.machine, suite: d.suite, params: pairs(d.params), variant: pairs(d.variant) };
  const absolute = d.absolute || d.metric.startsWith('perf-profile.');
  document.title = `${d.verdict} ${d.metric} · kperf`;
  put(view,
    el('h1', {}, verdictTag(d.verdict), ' ', el('span', { class: `c-${d.verdict}` }, absolute ? `${fmtSigned(d.change_abs)} pp` : fmtPct(d.change_pct)),
      ' ', el('span', { class: 'mono wrap-anywhere' }, d.metric)),
    message ? el('p', { class: 'status info', role: 'status' }, message) : null,
    el('p', { class: 'lead' }, el('span', { class: 'mono' }, kernelName(d.commit, d.release)), ' ', d.subject || '',
      d.series ? [' (', link(`/series/${encodeURIComponent(d.series)}`, d.series), ')'] : null),
    el('p', {}, machineTag(d.machine), ` · ${d.suite} ${pairs(d.params)}`, Object.keys(d.variant || {}).length ? ` · ${pairs(d.variant)}` : '',
      ' · ', link(`/compare${qs({ base: d.base_commit, target: d.commit, ...filters })}`, `compare with the ${baseName(d)}`),
      ' · ', link(`/trend${qs({ ...filters, metric: d.metric })}`, 'trend')),
    el('div', { class: 'grid' },
      el('section', { class: 'card' }, el('h2', {}, 'Samples'), box.wrap, archivedNote(d),
        el('p', { class: 'legend-note' }, 'each dot one sample (iterations of every run, pooled); black bars: means')),
      el('section', { class: 'card' }, el('h2', {}, 'Numbers'), numbers(d, unit), kv([
        ['change', absolute ? `${fmtSigned(d.change_abs)} (absolute, percentage points)` : `${fmtPct(d.change_pct)} (${fmtSigned(d.change_abs)}${unit ? ` ${unit}` : ''})`],
        ['95% CI of the change', `${fmtCI(d.welch && d.welch.ci95_pct)} % of the base mean`],
        ['Welch p', fmtP(d.welch && d.welch.p_value)],
        ['decided by', d.test || '–'],
        ['LKP\'s rule', d.lkp_changed ? 'changed' : 'not changed'],
        ['direction', d.direction || 'none'],
        ['role', { kpi: 'KPI: the benchmark\'s own figure', event: 'event counter beside the KPI',
          info: 'the benchmark\'s informational row (a total, time or spread): never a KPI',
          monitor: 'machine monitor: kept and comparable, not mailed on its own' }[d.role] || (d.kpi ? 'KPI' : 'not a KPI')],
        d.command_differs ? ['not judged', `the sides ran other work arguments: ${d.command_differs}`] : null,
        d.recovered_by ? ['recovered by', el('span', { class: 'mono' }, shortSha(d.recovered_by))] : null,
        d.confirmation ? ['confirmation', CONFIRMATION[d.confirmation] || d.confirmation] : null,
        d.bisected_to ? ['bisected to', el('span', { class: 'mono' }, shortSha(d.bisected_to))] : null,
      ]))),
    d.bisection ? el('section', {}, el('h2', {}, 'Bisection'), el('div', { id: 'bisection' }, status(el('div'), 'loading', 'Loading the bisection…'))) : null,
    el('section', {}, el('h2', {}, 'Triage'), triage(d, (next, msg) => render(next, msg)), moreRuns(d)),
    el('section', {}, el('h2', {}, 'History'), kv([
      ['created', fmtDate(d.created_at)],
      ['decided', fmtDate(d.decided_at)],
      ['last change', fmtDate(d.updated_at)],
      ['state now', el('span', { class: 'badge state' }, d.state)],
      ['note', d.note || '–'],
    ]), (d.history || []).length
      ? el('ol', { class: 'plain history' }, d.history.map((h) => el('li', {},
        `${fmtDate(h.at)}: ${h.state}`, h.by ? ` by ${h.by}` : '', h.note ? ` — ${h.note}` : '')))
      : el('p', { class: 'muted small' }, 'No triage yet.')),
    el('section', {}, el('h2', {}, 'Runs'), el('div', { class: 'sides' },
      el('div', { class: 'side base' }, el('h3', {}, 'base'), el('ul', { class: 'plain' }, (d.base_runs || []).map((r) => el('li', {}, link(`/runs/${encodeURIComponent(r)}`, r), ' ', invalidateButton(r))))),
      el('div', { class: 'side target' }, el('h3', {}, 'commit'), el('ul', { class: 'plain' }, (d.target_runs || []).map((r) => el('li', {}, link(`/runs/${encodeURIComponent(r)}`, r), ' ', invalidateButton(r))))))));
  if (d.bisection) bisection(d, $('#bisection'));
  stripChart(box, [
    { label: `base ${kernelName(d.base_commit).slice(0, 12)}`, values: d.base_samples || [] },
    { label: `commit ${kernelName(d.commit, d.release).slice(0, 12)}`, values: d.target_samples || [] },
  ], { unit });
}

async function load() {
  try {
    await render(await api(`/api/v1/regressions/${encodeURIComponent(id)}`));
  } catch (e) {
    if (e.status === 404) status(view, 'empty', `No decision ${id}. The home page lists the latest ones.`);
    else showError(view, e, 'loading the decision');
  }
}

load();
