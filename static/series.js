// series.js - /series/NAME (NAME or "NAME vN"), from /api/v1/series/{name}:
// each patch of a version against the series base for the KPIs, with their
// 95% CIs (a matrix and a chart), and each version against the one before;
// then the versions posted to a mailing list (the robot): their mails, base,
// patches and the commits the labs made of them, where each plan's test
// stands and its reply, which an admin releases when the plan holds it.
import {
  $, el, put, api, apiPost, qs, status, showError, errorText, table, link, fmtPct, fmtSigned, fmtCI, fmtNum,
  fmtDate, shortSha, pairs, varyingKeys, verdictTag, postedTag, mailText,
} from './kperf.js';
import { chartBox, ciBarChart, makeChart, color } from './charts.js';

const view = $('#view');
const requested = decodeURIComponent(location.pathname.replace(/^\/series\//, ''));
const m = /^(.+) v(\d+)$/.exec(requested);
const baseName = m ? m[1] : requested;
const wantVersion = m ? Number(m[2]) : null;
const enc = encodeURIComponent;

const keyOf = (k) => [k.machine, k.suite, pairs(k.params), pairs(k.variant), k.metric].join('|');
const absolute = (k) => k.metric.startsWith('perf-profile.');

// Labels: the metric and what differs between the keys of the same suite.
function labeller(keys) {
  const suites = new Set(keys.map((k) => k.suite));
  const varyIn = new Map([...suites].map((su) => [su, varyingKeys(keys.filter((k) => k.suite === su).map((k) => k.params))]));
  const machines = new Set(keys.map((k) => k.machine)).size > 1;
  const variant = varyingKeys(keys.map((k) => k.variant));
  return (k) => [machines ? k.machine : null, k.metric,
    ...varyIn.get(k.suite).map((p) => `${p}=${(k.params || {})[p] ?? '–'}`),
    ...variant.filter((p) => (k.variant || {})[p] !== undefined).map((p) => `${p}=${k.variant[p]}`)]
    .filter(Boolean).join(' ');
}

// The y range that shows every CI whisker, within reason.
function ciRange(ds) {
  const xs = ds.filter((d) => d).flatMap((d) => [d.change_pct, ...(d.ci95_pct || [])]).filter(Number.isFinite);
  return xs.length ? { suggestedMin: Math.max(-100, Math.min(...xs)), suggestedMax: Math.min(200, Math.max(...xs)) } : {};
}

function cell(d) {
  if (!d) return el('span', { class: 'muted' }, '–');
  return link(`/regressions/${d.id}`, [
    el('span', { class: `c-${d.verdict}` }, absolute(d) ? `${fmtSigned(d.change_abs)} pp` : fmtPct(d.change_pct)),
    el('span', { class: 'cell-ci' }, fmtCI(d.ci95_pct)),
  ], { title: `${d.verdict}: ${d.metric} against ${shortSha(d.base_commit)}` });
}

function patchMatrix(v) {
  const keys = new Map();
  for (const p of v.patches) for (const d of p.kpis) if (!keys.has(keyOf(d))) keys.set(keyOf(d), d);
  // a KPI some patch regressed (or improved) first, then the headline's kind
  // (kpi_rank), then by name: the chart shows the first eight
  const moved = (k) => v.patches.some((p) => p.kpis.some((d) => keyOf(d) === keyOf(k) && d.verdict === 'regression')) ? 0
    : v.patches.some((p) => p.kpis.some((d) => keyOf(d) === keyOf(k) && d.verdict !== 'noise')) ? 1 : 2;
  const list = [...keys.values()].sort((a, b) => (moved(a) - moved(b)) || ((a.kpi_rank ?? 99) - (b.kpi_rank ?? 99))
    || a.metric.localeCompare(b.metric) || keyOf(a).localeCompare(keyOf(b), undefined, { numeric: true }));
  if (!list.length) {
    return { node: el('p', { class: 'status empty' }, 'No KPI decisions for these patches yet: they come about a second after a patch and the series base both have runs of the same test.'), list };
  }
  const label = labeller(list);
  const cols = [
    { key: 'pos', label: '#', num: true, cell: (p) => String(p.position) },
    { key: 'patch', label: 'patch', cls: 'kernel', cell: (p) => el('span', {}, el('span', { class: 'mono' }, shortSha(p.commit)), ' ', p.subject || '',
      el('span', { class: 'muted' }, ` · ${p.runs} runs`)) },
    ...list.map((k) => ({ key: keyOf(k), label: label(k), num: true,
      cell: (p) => cell(p.kpis.find((d) => keyOf(d) === keyOf(k))) })),
  ];
  return { node: el('div', { class: 'matrix' }, table(cols, v.patches, { rowClass: (p) => (p.kpis.some((d) => d.verdict === 'regression') ? 'r-regression' : null) })), list, label };
}

// Change % against the series base per patch, one line per KPI, with CIs.
function patchChart(v, list, label) {
  const box = chartBox(`change of each KPI against the series base, patch by patch (${v.series})`);
  const draw = () => {
    const narrow = box.wrap.clientWidth < 600;
    if (narrow) box.wrap.style.height = '460px';
    return drawLines(narrow);
  };
  const drawLines = (narrow) => makeChart(box.canvas, {
    type: 'line',
    data: {
      labels: v.patches.map((p) => `${p.position} ${shortSha(p.commit).slice(0, 7)}`),
      datasets: list.slice(0, 8).map((k, i) => {
        const ds = v.patches.map((p) => p.kpis.find((d) => keyOf(d) === keyOf(k)));
        return { label: label(k), data: ds.map((d) => (d ? d.change_pct : null)), ci: ds.map((d) => (d ? d.ci95_pct : null)),
          borderColor: color(i), backgroundColor: color(i), whiskerColor: color(i), pointRadius: 4, spanGaps: true };
      }),
    },
    options: {
      scales: { y: { ...ciRange(list.slice(0, 8).flatMap((k) => v.patches.map((p) => p.kpis.find((d) => keyOf(d) === keyOf(k))))),
        title: { display: true, text: 'change vs series base, % (95% CI)' } },
        x: { offset: true, title: { display: true, text: 'patch' } } },
      plugins: {
        legend: { position: narrow ? 'bottom' : 'top', labels: { boxWidth: narrow ? 10 : 30, font: { size: narrow ? 10 : 12 } } },
        tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${fmtPct(c.parsed.y)} CI ${fmtCI(c.dataset.ci[c.dataIndex])}` } },
      },
    },
  });
  return { box, draw };
}

function versusPrevious(v, prev) {
  if (!v.vs_previous) return el('p', { class: 'muted' }, prev ? 'no comparison with the previous version' : 'the first version: nothing before it');
  if (!v.vs_previous.length) return el('p', { class: 'status empty' }, `v${prev.version} and v${v.version} share no KPI test yet.`);
  const label = labeller(v.vs_previous);
  const rows = [...v.vs_previous].sort((a, b) => label(a).localeCompare(label(b), undefined, { numeric: true }));
  const box = chartBox(`v${v.version} against v${prev.version}: KPI change with 95% CI`);
  const node = el('div', {},
    table([
      { key: 'k', label: 'KPI', cls: 'metric', cell: (r) => label(r) || r.metric },
      { key: 'b', label: `v${prev.version} mean`, num: true, narrow: false, cell: (r) => fmtNum(r.base_mean) },
      { key: 't', label: `v${v.version} mean`, num: true, narrow: false, cell: (r) => fmtNum(r.target_mean) },
      { key: 'c', label: 'change', num: true, cell: (r) => el('span', { class: `c-${r.verdict}` }, fmtPct(r.change_pct)) },
      { key: 'ci', label: '95% CI %', num: true, cell: (r) => fmtCI(r.ci95_pct) },
      { key: 'v', label: 'verdict', cell: (r) => verdictTag(r.verdict) },
    ], rows, { rowClass: (r) => `r-${r.verdict}` }),
    box.wrap);
  node.draw = () => ciBarChart(box, rows.filter((r) => r.ci95_pct).map((r) => ({ label: label(r) || r.metric, value: r.change_pct, ci: r.ci95_pct, verdict: r.verdict })),
    { title: `v${v.version} against v${prev.version}, % (95% CI)` });
  return node;
}

// --- the versions posted to a mailing list ----------------------------------------
const TOKEN_KEY = 'kperf.adminToken';

// Release a held reply (POST /api/v1/alerts/ID/release): with the admin
// token kept for this tab, else one typed beside the button (then kept).
function releaseButton(mail, onDone) {
  const out = el('span', { role: 'status', class: 'small' });
  const kept = sessionStorage.getItem(TOKEN_KEY) || '';
  const input = kept ? null : el('input', { type: 'password', name: 'token', autocomplete: 'off', placeholder: 'admin token',
    'aria-label': 'admin token (kept for this browser tab only)' });
  const btn = el('button', { type: 'button', class: 'primary release-mail', title: `send the held reply (alert ${mail.id})`,
    onclick: async () => {
      const token = (input ? input.value.trim() : '') || sessionStorage.getItem(TOKEN_KEY) || '';
      if (!token) { put(out, 'releasing needs an admin token (kperfd token create NAME --role admin)'); return; }
      btn.disabled = true;
      put(out, 'releasing…');
      try {
        await apiPost(`/api/v1/alerts/${encodeURIComponent(mail.id)}/release`, {}, token);
        sessionStorage.setItem(TOKEN_KEY, token);
        put(out, 'released: the reply goes out with the next outbox pass');
        btn.remove();
        if (input) input.remove();
        if (onDone) onDone();
      } catch (e) {
        btn.disabled = false;
        put(out, e.status === 409 ? 'this reply is not held any more (reload the page)' : `releasing failed: ${errorText(e)}`);
      }
    } }, 'Release');
  return el('span', { class: 'release' }, btn, input, out);
}

function planLine(pl, total) {
  const mail = pl.mail;
  const tag = mail ? el('span', { class: `badge mail mail-${mail.state}` }, mailText(mail.state) || `mail ${mail.state}`) : null;
  return el('li', { class: 'plan' }, el('span', { class: 'mono' }, pl.plan), ': ',
    postedTag({ state: pl.state, detail: pl.detail, first_bad_position: pl.first_bad_position, total }),
    pl.detail ? el('span', { class: 'muted' }, ` ${pl.detail}`) : null,
    tag, mail && mail.kind ? el('span', { class: 'muted small' }, ` (${mail.kind} reply)`) : null,
    mail && mail.state === 'held' ? releaseButton(mail, () => { tag.className = 'badge mail mail-pending'; tag.textContent = 'mail pending'; }) : null);
}

function postedVersion(s, p) {
  const plans = p.plans || [];
  const bads = plans.map((pl) => pl.first_bad_position).filter((x) => x);
  const firstBad = bads.length ? Math.min(...bads) : null;
  const lab = s.versions.find((v) => v.version === p.version);
  const base = p.base;
  const against = p.previous_version == null ? null
    : el('p', { class: 'versus-posted' }, `v${p.version} against v${p.previous_version}: `,
      lab && lab.vs_previous ? link(`/series/${enc(`${s.name} v${p.version}`)}#vs-previous`,
        `the KPIs of v${p.version}'s last patch against v${p.previous_version}'s, as the labs measured them`)
        : el('span', { class: 'muted' }, 'no lab comparison of the two yet (it comes once both were applied and run)'));
  const patches = p.patches || [];
  return el('article', { class: 'card posted-version', id: `posted-v${p.version}` },
    el('h3', {}, `v${p.version}${p.rfc ? ' (RFC)' : ''}: `, p.url ? link(p.url, p.subject, { class: 'cover-mail', title: p.has_cover ? 'the cover letter in the archive' : 'the first patch in the archive' }) : p.subject),
    el('p', { class: 'posted-facts' },
      postedTag({ state: p.state, detail: p.state_detail, first_bad_position: firstBad, total: p.total, base }),
      p.state_detail ? el('span', {}, ` ${p.state_detail}`) : null,
      el('span', { class: 'cell-means' }, 'by ', p.author || p.author_email || '?', p.author && p.author_email ? ` <${p.author_email}>` : '',
        ` · ${p.total} patch${p.total === 1 ? '' : 'es'}`, p.inbox ? ` · ${p.inbox}` : '', p.posted_at ? ` · ${fmtDate(p.posted_at)}` : '',
        ' · base ', base ? el('span', { class: 'mono' }, shortSha(base)) : 'not named',
        p.change_id ? [' · change-id ', el('span', { class: 'mono' }, p.change_id)] : null)),
    against,
    patches.length ? table([
      { key: 'pos', label: '#', num: true, cell: (x) => `${x.position}/${p.total}` },
      { key: 'subject', label: 'patch (its mail)', cls: 'kernel', cell: (x) => [link(x.url, x.subject, { class: 'patch-mail' }),
        x.position === firstBad ? el('span', { class: 'badge first-bad' }, 'first bad patch') : null,
        x.files && x.files.length ? el('span', { class: 'cell-means' }, x.files.join(', ')) : null] },
      { key: 'commit', label: 'commit', cell: (x) => (x.commit
        ? (base ? link(`/compare${qs({ base, target: x.commit })}`, shortSha(x.commit), { class: 'mono', title: 'this patch against the series base' })
          : el('span', { class: 'mono' }, shortSha(x.commit)))
        : el('span', { class: 'muted' }, 'not applied yet')) },
    ], patches, { rowClass: (x) => (x.position === firstBad ? 'r-regression first-bad' : null) }) : null,
    plans.length ? el('div', {}, el('h4', {}, 'Plans testing it'), el('ul', { class: 'plans' }, plans.map((pl) => planLine(pl, p.total))))
      : el('p', { class: 'muted small' }, 'No plan tests this version.'));
}

function postedPart(s) {
  const list = [...(s.posted || [])].sort((a, b) => (b.version - a.version) || (b.id - a.id));
  if (!list.length) return null;
  return el('section', { id: 'posted' }, el('h2', {}, 'Posted versions'),
    el('p', { class: 'muted small' }, 'The versions posted to a mailing list, newest first: each links to its mails in the archive; a commit appears once a lab applied the patch.'),
    list.map((p) => postedVersion(s, p)));
}

async function render() {
  let s;
  try {
    s = await api(`/api/v1/series/${enc(baseName)}`);
  } catch (e) {
    if (e.status === 404) {
      status(view, 'empty', `No series "${requested}". A series is named by its commits' "series": "NAME vN" (kperf-collect commits --series NAME vN).`);
    } else {
      showError(view, e, 'loading the series');
    }
    return;
  }
  document.title = `${s.name} · kperf`;
  const versions = s.versions;
  const posted = postedPart(s);
  if (!versions.length) {
    put(view, el('h1', {}, `Series ${s.name}`),
      el('p', { class: 'lead' }, 'Posted to a mailing list; no lab version of it (commits with "series": "NAME vN") has runs here yet.'), posted);
    return;
  }
  const chosen = versions.find((v) => v.version === wantVersion) || versions[versions.length - 1];
  const idx = versions.indexOf(chosen);
  const prev = idx > 0 ? versions[idx - 1] : null;
  const { node, list, label } = patchMatrix(chosen);
  const pc = list.length ? patchChart(chosen, list, label) : null;
  const vs = versusPrevious(chosen, prev);
  const last = chosen.patches[chosen.patches.length - 1];
  put(view,
    el('h1', {}, `Series ${s.name}`),
    el('nav', { class: 'tabs', 'aria-label': 'versions' }, versions.map((v) => link(`/series/${enc(`${s.name} v${v.version}`)}`, `v${v.version}`,
      { 'aria-current': v === chosen ? 'page' : null }))),
    el('p', { class: 'lead' }, `${chosen.series}: ${chosen.patches.length} patches on `,
      chosen.base ? [el('span', { class: 'mono' }, shortSha(chosen.base.commit)), ' ', chosen.base.subject || ''] : 'an unknown base',
      chosen.base && last ? [' · ', link(`/compare${qs({ base: chosen.base.commit, target: last.commit })}`, 'compare the last patch with the base')] : null,
      ' · ', link(`/lru-lock${qs({ series: chosen.series })}`, 'lock contention'),
      posted ? [' · ', link('#posted', 'posted versions')] : null),
    el('section', {}, el('h2', {}, 'Each patch against the series base (KPIs, 95% CI)'),
      el('p', { class: 'muted small' }, 'A cell: the change of the KPI\'s mean against the series base and its 95% confidence interval; it links to the decision.'),
      node, pc ? pc.box.wrap : null),
    el('section', { id: 'vs-previous' }, el('h2', {}, prev ? `v${chosen.version} against v${prev.version} (last patches)` : `v${chosen.version} against the previous version`), vs),
    posted);
  if (pc) pc.draw();
  if (vs.draw) vs.draw();
  if (location.hash) { const at = document.getElementById(location.hash.slice(1)); if (at) at.scrollIntoView(); }
}

render();
