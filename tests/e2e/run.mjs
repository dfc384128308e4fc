// run.mjs - the dashboard's browser tests: `node tests/e2e/run.mjs` with
// KPERF_URL (a running kperfd), KPERF_TOKEN (collector: the XSS check posts a
// run; also loads the demo set when the database has none) and
// KPERF_ADMIN_TOKEN (the triage check); KPERF_DATABASE_URL, the database of
// that kperfd, for the posted series' rows (posted.mjs). Prints one line per check and a
// summary "e2e: N passed, M failed[, K skipped]"; exits 1 when a check failed.
// Screenshots go to tests/e2e/out/.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, OUT } from './browser.mjs';
import { makeChecks } from './checks.mjs';
import { ensurePosted, postedChecks } from './posted.mjs';

const url = (process.env.KPERF_URL || '').replace(/\/+$/, '');
const token = process.env.KPERF_TOKEN || '';
const adminToken = process.env.KPERF_ADMIN_TOKEN || '';
const dbUrl = process.env.KPERF_DATABASE_URL || '';
const only = process.argv[2] ? new RegExp(process.argv[2]) : null;
const here = dirname(fileURLToPath(import.meta.url));

async function call(method, path, body, bearer) {
  const res = await fetch(url + path, {
    method,
    headers: { 'Content-Type': 'application/json', ...(bearer ? { Authorization: `Bearer ${bearer}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}
const api = (path) => call('GET', path);
const post = (path, body, bearer) => call('POST', path, body, bearer);

// The demo set, and the worker's decisions on it, must be there.
async function ensureDemo() {
  const have = await api('/api/v1/machines?name=demo-lkp-bdw-ex2');
  if (!have.items.length) {
    if (!token) throw new Error('the database has no demo data: run `node scripts/demo.mjs KPERF_URL TOKEN` first, or set KPERF_TOKEN');
    const r = spawnSync(process.execPath, [join(here, '../../scripts/demo.mjs'), url, token], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error('scripts/demo.mjs failed');
    const again = await api('/api/v1/machines?name=demo-lkp-bdw-ex2');
    if (!again.items.length) throw new Error('the database holds other runs but no demo data: give the e2e tests a database with the demo set');
  }
  for (let i = 0; i < 150; i++) {
    const d = await api('/api/v1/regressions?machine=demo-lkp-bdw-ex2&verdict=regression&limit=100');
    const s = await api('/api/v1/series/per-memcg-lru_lock');
    const decided = s.versions.every((v) => v.patches.every((p) => p.kpis.length));
    if (d.items.some((x) => x.metric === 'vm-scalability.throughput') && decided) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('no decisions on the demo data after 30 s: is the decision worker running?');
}

async function main() {
  if (!url) {
    console.error('e2e: set KPERF_URL to a running kperfd (with KPERF_TOKEN and KPERF_ADMIN_TOKEN)');
    process.exit(2);
  }
  try {
    await api('/healthz');
    await ensureDemo();
    if (dbUrl) await ensurePosted({ api, dbUrl });
  } catch (e) {
    console.error(`e2e: setup failed: ${e.cause ? e.cause.message || e.cause : e.message}`);
    console.log('e2e: 0 passed, 1 failed');
    process.exit(1);
  }
  const browser = await launch();
  const env = { url, api, call, post, token, adminToken, browser, dbUrl };
  const checks = [...makeChecks(env), ...postedChecks(env)].filter((c) => !only || only.test(c.name));
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const t0 = Date.now();
  for (const c of checks) {
    if (c.skip) {
      skipped++;
      console.log(`skip  ${c.name}: ${c.skip}`);
      continue;
    }
    const t = Date.now();
    try {
      await c.fn();
      passed++;
      console.log(`ok    ${c.name} (${Date.now() - t} ms)`);
    } catch (e) {
      failed++;
      console.log(`FAIL  ${c.name}\n      ${String(e.message || e).split('\n').join('\n      ')}`);
    }
  }
  await browser.close();
  console.log(`e2e: screenshots in ${OUT}`);
  console.log(`e2e: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  process.exit(failed ? 1 : 0);
}

main();
