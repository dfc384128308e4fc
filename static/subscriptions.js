// subscriptions.js - /subscriptions: who gets alert mail for what (create,
// list, delete with the admin token), and the outbox with failures. Text from
// the database enters the page through el()/textContent only.
import {
  api, apiPost, el, put, clear, $, table, status, showError, fmtDate, shortSha, readHeaders,
  rememberWrite,
} from './kperf.js';

const TOKEN_KEY = 'kperf.adminToken';
const token = () => sessionStorage.getItem(TOKEN_KEY) || '';

async function authed(path, method = 'GET') {
  const headers = { Authorization: `Bearer ${token()}`, Accept: 'application/json' };
  const res = await fetch(path, { method, headers: method === 'GET' ? readHeaders(headers) : headers });
  if (method !== 'GET') rememberWrite(res);
  const body = await res.json().catch(() => null);
  if (!res.ok) {
    const e = new Error((body && body.message) || `HTTP ${res.status}`);
    e.status = res.status;
    throw e;
  }
  return body;
}

function tokenForm() {
  const input = el('input', { type: 'password', id: 'token', name: 'token', autocomplete: 'off', value: token(), 'aria-label': 'admin token' });
  const form = $('#token-form');
  clear(form);
  put(form, el('label', { for: 'token' }, 'Token '), input,
    el('button', { type: 'submit' }, 'Use'),
    el('button', { type: 'button', onclick: () => { sessionStorage.removeItem(TOKEN_KEY); input.value = ''; load(); } }, 'Forget'));
  form.onsubmit = (ev) => { ev.preventDefault(); sessionStorage.setItem(TOKEN_KEY, input.value.trim()); load(); };
}

const FIELDS = [
  ['email', 'Email', 'mm-review@example.org'],
  ['series', 'Series', 'per-memcg-lru_lock'],
  ['suite', 'Suite', 'vm-scalability'],
  ['metric', 'Metric glob', 'vm-scalability.*'],
  ['machine', 'Machine', ''],
  ['files', 'Files (comma separated globs)', 'mm/vmscan.c, mm/swap.c'],
  ['min_change_pct', 'Minimum change %', '2'],
];

function newForm() {
  const form = $('#new-form');
  clear(form);
  for (const [name, label, hint] of FIELDS) {
    form.append(el('p', {}, el('label', { for: `f-${name}` }, `${label} `),
      el('input', { id: `f-${name}`, name, placeholder: hint, required: name === 'email' ? true : null })));
  }
  form.append(
    el('p', {}, el('label', { for: 'f-focus' }, 'Focus '),
      el('select', { id: 'f-focus', name: 'focus' }, el('option', { value: '' }, 'any'),
        el('option', { value: 'lru_lock' }, 'lru_lock'), el('option', { value: 'mglru' }, 'MGLRU'))),
    el('p', {}, el('label', { for: 'f-delivery' }, 'Delivery '),
      el('select', { id: 'f-delivery', name: 'delivery' }, el('option', { value: 'immediate' }, 'immediate'),
        el('option', { value: 'daily' }, 'daily digest (UTC)'))),
    el('fieldset', {}, el('legend', {}, 'Verdicts'),
      ...['regression', 'improvement', 'changed'].map((v) => el('label', {},
        el('input', { type: 'checkbox', name: 'verdicts', value: v, checked: v === 'regression' }), ` ${v} `))),
    el('button', { type: 'submit' }, 'Subscribe'));
  form.onsubmit = async (ev) => {
    ev.preventDefault();
    const f = new FormData(form);
    const body = {};
    for (const [name] of FIELDS) {
      const v = String(f.get(name) || '').trim();
      if (!v) continue;
      if (name === 'files') body.files = v.split(',').map((x) => x.trim()).filter(Boolean);
      else if (name === 'min_change_pct') body.min_change_pct = Number(v);
      else body[name] = v;
    }
    if (f.get('focus')) body.focus = f.get('focus');
    body.delivery = f.get('delivery');
    body.verdicts = f.getAll('verdicts');
    try {
      const made = await apiPost('/api/v1/subscriptions', body, token());
      status($('#new-status'), made && made.warning ? 'error' : 'ok', `Subscribed ${body.email}.`,
        made && made.warning ? ` Warning: ${made.warning}.` : '');
      form.reset();
      form.querySelector('input[value=regression]').checked = true;
      load();
    } catch (e) {
      showError($('#new-status'), e, 'subscribing');
    }
  };
}

function filters(s) {
  const parts = [];
  for (const k of ['focus', 'series', 'suite', 'metric', 'machine']) if (s[k]) parts.push(`${k}=${s[k]}`);
  if (s.files) parts.push(`files=${s.files.join(',')}`);
  if (s.min_change_pct != null) parts.push(`≥${s.min_change_pct}%`);
  return parts.join(' ') || 'everything';
}

async function load() {
  const subs = $('#subs');
  const out = $('#outbox');
  if (!token()) {
    status(subs, 'empty', 'Enter an admin token above to see and manage subscriptions (kperfd token create NAME --role admin).');
    clear(out);
    return;
  }
  status(subs, 'loading', 'Loading subscriptions…');
  try {
    const list = await authed('/api/v1/subscriptions?limit=1000');
    clear(subs);
    if (!list.items.length) {
      status(subs, 'empty', 'No subscriptions yet: add one above.');
    } else {
      put(subs, table([
        { key: 'email', label: 'Email' },
        { key: 'filters', label: 'Filters', cell: (s) => filters(s) },
        { key: 'verdicts', label: 'Verdicts', cell: (s) => s.verdicts.join(', ') },
        { key: 'delivery', label: 'Delivery' },
        { key: 'created_at', label: 'Since', cell: (s) => fmtDate(s.created_at) },
        { key: 'x', label: '', cell: (s) => el('button', { type: 'button', onclick: async () => {
          try { await authed(`/api/v1/subscriptions/${s.id}`, 'DELETE'); load(); } catch (e) { showError(subs, e, 'deleting'); }
        } }, 'Delete') },
      ], list.items));
    }
  } catch (e) {
    showError(subs, e, 'loading subscriptions');
  }
  status(out, 'loading', 'Loading the outbox…');
  try {
    const list = await authed('/api/v1/alerts?limit=200');
    clear(out);
    if (!list.items.length) {
      status(out, 'empty', 'No messages yet: they appear when a decision matches a subscription.');
      return;
    }
    put(out, table([
      { key: 'state', label: 'State', cell: (a) => el('span', { class: `state-${a.state}` }, a.state) },
      { key: 'email', label: 'To' },
      { key: 'subject', label: 'Subject', cell: (a) => a.subject || (a.kind === 'digest' ? 'daily digest' : `commit ${shortSha(a.commit)}`) },
      { key: 'due_at', label: 'Due', cell: (a) => fmtDate(a.due_at) },
      { key: 'attempts', label: 'Tries', num: true },
      { key: 'last_error', label: 'SMTP reply', cell: (a) => a.last_error || '' },
      { key: 'sent_at', label: 'Sent', cell: (a) => fmtDate(a.sent_at) },
    ], list.items));
  } catch (e) {
    showError(out, e, 'loading the outbox');
  }
}

async function mail() {
  try {
    const h = await api('/healthz');
    status($('#mail'), h.mail === 'configured' ? 'ok' : 'empty',
      h.mail === 'configured' ? 'Mail is configured: messages are sent as they come due.'
        : 'Mail is not configured (set KPERF_SMTP_URL): messages wait in the outbox.');
  } catch (e) {
    showError($('#mail'), e, 'checking mail');
  }
}

tokenForm();
newForm();
mail();
load();
