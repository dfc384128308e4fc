// kperf.js - what every dashboard page shares: API calls and their errors,
// building DOM nodes (text only ever through textContent), number and kernel
// formatting, the view state kept in the URL, status lines and tables.
// Pages import it as an ES module; no text is ever parsed as HTML.

// Okabe-Ito: told apart by colour-blind readers (yellow last: weak on white).
export const PALETTE = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#000000', '#F0E442'];
export const VERDICT_COLOR = { regression: '#D55E00', improvement: '#0072B2', changed: '#E69F00', noise: '#8c8c8c' };

export class ApiError extends Error {
  constructor(status, body, path) {
    const msg = body && body.message ? body.message : `HTTP ${status}`;
    super(msg);
    this.status = status;
    this.code = body && body.error ? body.error : 'http';
    this.field = body && body.field ? body.field : null;
    this.path = path;
  }
  describe() {
    return `${this.code}${this.field ? ` (${this.field})` : ''}: ${this.message} [${this.status} ${this.path}]`;
  }
}

async function answer(res, path) {
  const text = await res.text();
  let body = null;
  try { body = JSON.parse(text); } catch { body = null; }
  if (!res.ok) throw new ApiError(res.status, body || { message: text.slice(0, 200) }, path);
  return body;
}

// Read-your-writes with hot standbys: a write's answer carries the WAL
// position it committed at (X-Kperf-LSN); this tab sends the last one back on
// its reads, and kperfd waits for a standby to have replayed it (or reads the
// primary). Nothing is sent when kperfd has no standby (no header came).
const LSN_KEY = 'kperf.lsn';
export function rememberWrite(res) {
  const lsn = res.headers.get('X-Kperf-LSN');
  if (lsn) sessionStorage.setItem(LSN_KEY, lsn);
}
export function readHeaders(extra = {}) {
  const lsn = sessionStorage.getItem(LSN_KEY);
  return lsn ? { ...extra, 'X-Kperf-LSN': lsn } : extra;
}

// GET a JSON document; throws ApiError with the API's {error, field, message}.
export async function api(path) {
  const res = await fetch(path, { headers: readHeaders({ Accept: 'application/json' }) });
  return answer(res, path);
}

// GET a text rendering (format=lkp, mmtests).
export async function apiText(path) {
  const res = await fetch(path, { headers: readHeaders() });
  if (!res.ok) return answer(res, path);
  return res.text();
}

export async function apiPost(path, body, token) {
  const res = await fetch(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  rememberWrite(res);
  return answer(res, path);
}

// An admin marks a run invalid (DELETE /api/v1/runs/ID): its decisions are
// redone without it. The admin token is the one kept for this tab.
export function invalidateButton(runId, onDone) {
  const out = el('span', { role: 'status' });
  const go = async () => {
    const token = sessionStorage.getItem('kperf.adminToken') || '';
    if (!token) {
      put(out, 'this needs the admin token (enter it on a decision\'s page under Triage)');
      return;
    }
    put(out, 'invalidating…');
    try {
      const res = await fetch(`/api/v1/runs/${encodeURIComponent(runId)}`, {
        method: 'DELETE', headers: { Authorization: `Bearer ${token}` },
      });
      rememberWrite(res);
      await answer(res, `/api/v1/runs/${runId}`);
      put(out, 'invalidated: its decisions are redone without it');
      if (onDone) onDone();
    } catch (e) {
      put(out, `invalidating failed: ${errorText(e)}`);
    }
  };
  return el('span', { class: 'invalidate' },
    el('button', { type: 'button', class: 'invalidate-run', title: `mark run ${runId} invalid (admin)`, onclick: go }, 'invalidate'), ' ', out);
}

// Query string from an object; skips empty values, repeats arrays.
export function qs(obj) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(obj)) {
    if (v === undefined || v === null || v === '' || v === false) continue;
    for (const x of Array.isArray(v) ? v : [v]) if (x !== '' && x != null) p.append(k, String(x));
  }
  const s = p.toString();
  return s ? `?${s}` : '';
}

// --- DOM -----------------------------------------------------------------------
// el('td', {class: 'num'}, 'text', node, ...): strings become text nodes.
export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = v;
    else if (k === 'for') node.htmlFor = v;
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else if (k === 'value' || k === 'checked' || k === 'selected' || k === 'disabled') node[k] = v;
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    node.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

export function put(node, ...children) {
  clear(node);
  append(node, children);
  return node;
}

export const $ = (sel, root = document) => root.querySelector(sel);

// A link inside the dashboard.
export const link = (href, text, attrs = {}) => el('a', { href, ...attrs }, text);

// --- formatting -----------------------------------------------------------------
const nf0 = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const nf2 = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

export function fmtNum(v) {
  if (v === null || v === undefined || Number.isNaN(v)) return '–';
  const a = Math.abs(v);
  if (a >= 1e9) return v.toExponential(3);
  if (a >= 1000) return nf0.format(v);
  if (a >= 1 || a === 0) return nf2.format(v);
  return Number(v.toPrecision(3)).toString();
}

// 3,086,769 -> 3.09M: for dense matrices
export function fmtCompact(v) {
  if (v === null || v === undefined || Number.isNaN(v)) return '–';
  const a = Math.abs(v);
  for (const [d, s] of [[1e9, 'G'], [1e6, 'M'], [1e3, 'k']]) if (a >= d) return `${(v / d).toPrecision(3)}${s}`;
  return fmtNum(v);
}

export function fmtPct(v, digits = 2) {
  if (v === null || v === undefined || Number.isNaN(v)) return '–';
  return `${v > 0 ? '+' : v < 0 ? '−' : ''}${Math.abs(v).toFixed(digits)}%`;
}

export function fmtSigned(v) {
  if (v === null || v === undefined || Number.isNaN(v)) return '–';
  return `${v > 0 ? '+' : v < 0 ? '−' : ''}${fmtNum(Math.abs(v))}`;
}

// "[2.23, 3.44]" like the MGLRU seed prints a 95% CI of the change in %.
export function fmtCI(ci) {
  if (!ci || ci.length !== 2 || ci[0] == null || ci[1] == null) return '–';
  return `[${ci[0].toFixed(2)}, ${ci[1].toFixed(2)}]`;
}

export function fmtP(p) {
  if (p === null || p === undefined) return '–';
  if (p < 1e-4) return p.toExponential(1);
  return p.toFixed(4);
}

export function fmtDate(s) {
  if (!s) return '–';
  const d = new Date(s);
  if (Number.isNaN(d.getTime())) return String(s);
  return d.toISOString().replace('T', ' ').replace(/:\d\d(\.\d+)?Z$/, ' UTC');
}

export const shortSha = (s) => (s && /^[0-9a-f]{40}$/i.test(s) ? s.slice(0, 12) : s || '');

// How a kernel is named on screen: the short sha, else the release.
export const kernelName = (commit, release) => (commit ? shortSha(commit) : release || '?');

// {k: v} -> "k=v,k=v" (sorted), the API's params= and variant= spelling.
export function pairs(obj) {
  if (!obj) return '';
  return Object.keys(obj).sort().map((k) => `${k}=${obj[k]}`).join(',');
}

// The params that differ between a list of param objects.
export function varyingKeys(list) {
  const keys = new Set();
  list.forEach((o) => Object.keys(o || {}).forEach((k) => keys.add(k)));
  return [...keys].filter((k) => new Set(list.map((o) => (o || {})[k])).size > 1).sort();
}

export const isDemo = (machine) => typeof machine === 'string' && machine.startsWith('demo-');

// A machine's name, with a "demo" badge for the demo data set.
export function machineTag(name) {
  return el('span', { class: 'machine' }, name || '?',
    isDemo(name) ? el('span', { class: 'badge demo', title: 'demo data loaded by scripts/demo.mjs' }, 'demo') : null);
}

export function verdictTag(verdict) {
  return el('span', { class: `verdict v-${verdict || 'none'}` }, verdict || '–');
}

// A benchmark KPI when kperfd's roles are not at hand (compare rows carry
// role): the metric belongs to the suite's program.
export const isKpi = (metric, suite) => !!suite && metric.startsWith(`${suite}.`);

// The roles of the metrics in a suite's runs (kperfd's metric_role table):
// name -> {role, kpi_rank}, from GET /api/v1/metrics?suite=.
const roleCache = new Map();
export function metricRoles(suite) {
  if (!roleCache.has(suite)) {
    roleCache.set(suite, api(`/api/v1/metrics${qs({ suite, limit: 1000 })}`)
      .then((j) => new Map(j.items.map((m) => [m.name, { role: m.role, kpi_rank: m.kpi_rank }])))
      .catch(() => new Map()));
  }
  return roleCache.get(suite);
}

// The headline of names: the KPI of lowest rank, the first by name among
// equals; null when none is a KPI.
export function headline(names, roles) {
  const kpis = names.filter((n) => roles.get(n) && roles.get(n).role === 'kpi');
  kpis.sort((a, b) => (roles.get(a).kpi_rank - roles.get(b).kpi_rank) || (a < b ? -1 : a > b ? 1 : 0));
  return kpis[0] || null;
}

// --- posted series (the robot) ----------------------------------------------------
// Where a posted version stands, in words: its state (posted_series.state),
// the detail kperf wrote, the plans' first bad patch and the base it names.
export function postedStateText(p) {
  const bad = p.first_bad_position;
  const base = p.base ? shortSha(p.base) : null;
  switch (p.state) {
    case 'regression': return bad ? `regression in patch ${bad}/${p.total}` : 'regression';
    case 'improvement': return bad ? `improvement in patch ${bad}/${p.total}` : 'improvement';
    case 'does_not_apply':
      return p.detail && /^does not apply/.test(p.detail) ? p.detail.replace(/: .*$/s, '')
        : `does not apply${base ? ` on ${base}` : ''}`;
    case 'no_base': return 'no base-commit';
    case 'posted': return 'posted';
    default: return p.state ? p.state.replace(/_/g, ' ') : '–';
  }
}

// The latest reply's state: held for an admin, queued, sent.
export function mailText(state) {
  return { held: 'mail held', pending: 'mail pending', sending: 'mail pending', sent: 'mailed',
    failed: 'mail failed' }[state] || null;
}

export function postedTag(p) {
  const cls = { regression: 'v-regression', improvement: 'v-improvement', does_not_apply: 'v-changed',
    no_base: 'v-changed', clean: 'v-noise' }[p.state] || 'v-none';
  return el('span', { class: `verdict ${cls} posted-state` }, postedStateText(p));
}

// --- units ----------------------------------------------------------------------
let unitCache = null;
export async function units() {
  if (!unitCache) {
    unitCache = api('/api/v1/metrics?limit=1000')
      .then((j) => Object.fromEntries(j.items.filter((m) => m.unit).map((m) => [m.name, m.unit])))
      .catch(() => ({}));
  }
  return unitCache;
}

// --- the view's state in the URL --------------------------------------------------
export const params = () => new URLSearchParams(location.search);

// Replace the query with obj (empty values dropped); push a history entry so
// Back returns to the previous view, unless replace is set.
export function setState(obj, { replace = false, path = location.pathname } = {}) {
  const url = path + qs(obj);
  if (url === location.pathname + location.search) return false;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  return true;
}

// A render started before the latest one must not write the page: each
// render takes a ticket and asks stale() before it writes what it awaited.
let generation = 0;
export function ticket() {
  const mine = ++generation;
  return () => mine !== generation;
}

// Run render() now and whenever Back/Forward changes the URL.
export function onState(render) {
  window.addEventListener('popstate', () => render());
  return render();
}

// --- status lines ---------------------------------------------------------------
// kind: loading | empty | error | info
export function status(node, kind, ...text) {
  return put(node, el('p', { class: `status ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, ...text));
}

export function errorText(e) {
  return e instanceof ApiError ? e.describe() : String(e && e.message ? e.message : e);
}

export function showError(node, e, what) {
  return status(node, 'error', `${what} failed: ${errorText(e)}`);
}

export const EMPTY_RUNS = 'No runs yet: post one with kperf-collect (kperf-collect --server URL --token TOKEN run --suite SUITE -- COMMAND), or load the demo set with `node scripts/demo.mjs URL TOKEN` (`make run` does it for an empty database).';

// --- tables -----------------------------------------------------------------------
// columns: [{key, label, num, value(row) -> sort key, cell(row) -> node|string, title,
// narrow: false to hide the column on a phone}]
// Sorting keys live in the caller's state (sort, dir) so they go into the URL.
export function table(columns, rows, { sort, dir = 'desc', onSort, caption, rowClass } = {}) {
  const thead = el('thead', {}, el('tr', {}, columns.map((c) => {
    const th = el('th', { class: [c.num ? 'num' : '', c.narrow === false ? 'wide-only' : ''].join(' ').trim() || null, scope: 'col', title: c.title || null });
    if (onSort && c.value) {
      const active = sort === c.key;
      th.setAttribute('aria-sort', active ? (dir === 'asc' ? 'ascending' : 'descending') : 'none');
      th.appendChild(el('button', { type: 'button', class: 'sort',
        onclick: () => onSort(c.key, active && dir === 'desc' ? 'asc' : 'desc') },
      c.label, active ? (dir === 'asc' ? ' ▲' : ' ▼') : ''));
    } else {
      th.textContent = c.label;
    }
    return th;
  })));
  let list = rows;
  const col = columns.find((c) => c.key === sort && c.value);
  if (col) {
    const sign = dir === 'asc' ? 1 : -1;
    list = [...rows].sort((a, b) => {
      const x = col.value(a), y = col.value(b);
      if (x === y) return 0;
      if (x === null || x === undefined || Number.isNaN(x)) return 1;
      if (y === null || y === undefined || Number.isNaN(y)) return -1;
      return (x < y ? -1 : 1) * sign;
    });
  }
  const tbody = el('tbody', {}, list.map((r) => el('tr', { class: rowClass ? rowClass(r) : null },
    columns.map((c) => el('td', { class: [c.num ? 'num' : c.cls || '', c.narrow === false ? 'wide-only' : ''].join(' ').trim() || null },
      c.cell ? c.cell(r) : String(r[c.key] ?? ''))))));
  return el('div', { class: 'table-wrap' },
    el('table', {}, caption ? el('caption', {}, caption) : null, thead, tbody));
}

// A <pre> with a copy button for a mailing-list reply.
export function preWithCopy(title, text, id) {
  const pre = el('pre', { class: 'mono', id, tabindex: '0' }, text);
  const btn = el('button', { type: 'button', class: 'copy', onclick: async () => {
    try {
      await navigator.clipboard.writeText(pre.textContent);
      btn.textContent = 'copied';
    } catch {
      const r = document.createRange();
      r.selectNodeContents(pre);
      const s = getSelection();
      s.removeAllRanges();
      s.addRange(r);
      btn.textContent = 'selected: press Ctrl-C';
    }
    setTimeout(() => { btn.textContent = `copy ${title}`; }, 2000);
  } }, `copy ${title}`);
  return el('div', { class: 'pre-block' }, el('div', { class: 'pre-head' }, el('h3', {}, title), btn), pre);
}

// Mark the current page in the header's navigation.
function markNav() {
  const first = `/${location.pathname.split('/')[1] || ''}`;
  document.querySelectorAll('header.top nav a').forEach((a) => {
    const here = new URL(a.href).pathname;
    if (here === first || (here === '/' && first === '/')) a.setAttribute('aria-current', 'page');
  });
}
markNav();
