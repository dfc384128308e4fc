// checks.mjs - the browser checks of the dashboard, run against a kperfd
// holding the demo data (scripts/demo.mjs): every page loads without console
// errors and draws its charts, the compare and MGLRU pages show the seed's
// confidence intervals, a trend point opens its compare, deep links and Back
// restore views, triage works with the admin token, the phone layout fits and
// a commit subject carrying markup stays text.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newPage, open, settle, canvasInk, shot, assert, noProblems } from './browser.mjs';

export const MGLRU_CIS = ['[2.23, 3.44]', '[6.97, 9.73]', '[2.16, 3.55]', '[8.83, 10.03]', '[21.12, 23.14]', '[5.53, 6.46]'];
const LKP_TREND = '/trend?machine=demo-lkp-bdw-ex2&suite=vm-scalability&params=runtime%3D300s%2Ctest%3Dlru-file-mmap-read'
  + '&variant=cpufreq_governor%3Dperformance&metric=vm-scalability.throughput';
const STEP = '1431d4d11abb265e79cd44bed2f5ea93f1bcc57b';
const STEP_PARENT = 'a4fe1631f313f75c9d8f4b5e0e9cba1c1bd1d68e';

export function makeChecks(env) {
  const { url, api, call, post, token, adminToken, browser } = env;
  const checks = [];
  const check = (name, fn, { skip } = {}) => checks.push({ name, fn, skip });

  // The decision the regression page shows: vm-scalability.throughput at 1431d4d11a.
  const stepDecision = async () => {
    const d = await api('/api/v1/regressions?machine=demo-lkp-bdw-ex2&verdict=regression&limit=100');
    const it = d.items.find((x) => x.metric === 'vm-scalability.throughput' && x.commit === STEP);
    assert(it, 'no regression decision for vm-scalability.throughput at 1431d4d11a: is the demo data loaded and the worker running?');
    return it;
  };

  const pages = [
    { name: 'home', path: '/', charts: 0, text: ['Latest decisions', 'Machines', 'demo-lkp-bdw-ex2'] },
    { name: 'trend', path: LKP_TREND, charts: 1, text: ['vm-scalability.throughput', 'Decisions on this trend'] },
    { name: 'trend-default', path: '/trend', charts: 1, text: ['Trend'] },
    { name: 'compare', path: '/compare?base=5.14.0&target=5.14.0-mglru', charts: 1, text: ['What differs besides the kernel', 'copy LKP', 'copy mmtests'] },
    { name: 'compare-empty', path: '/compare', charts: 0, text: ['Name a base and a target'] },
    { name: 'lru-lock', path: '/lru-lock', charts: 2, text: ['Top lock call chains'] },
    { name: 'lru-lock-memtier', path: '/lru-lock?machine=demo-lkp-icl-2sp2&suite=memtier', charts: 2, text: ['13.11%', '1.79%'] },
    { name: 'mglru', path: '/mglru', charts: 1, text: ['Reclaim counters alongside', 'pgscan_kswapd'] },
    { name: 'mglru-lru_gen', path: null, charts: 1, text: ['lru_gen'] },
    { name: 'series', path: '/series/per-memcg-lru_lock%20v18', charts: 2, text: ['Each patch against the series base', 'v18 against v17'] },
    { name: 'run', path: '/runs/demo-lkp-1431d4d11abb-0', charts: 0, text: ['mm: base LRU balancing on an explicit cost model', 'Output tail', 'usecs to free memory'] },
    { name: 'regression', path: null, charts: 1, text: ['regression', 'Triage', 'History'] },
    { name: 'subscriptions', path: '/subscriptions', charts: 0, text: ['Alerts and subscriptions'] },
    { name: 'jobs', path: '/jobs', charts: 0, text: ['Jobs', 'Running', 'Bisections', 'Agents'] },
  ];
  for (const pg of pages) {
    check(`page ${pg.name} loads without console errors and draws its charts`, async () => {
      let path = pg.path;
      if (pg.name === 'regression') path = `/regressions/${(await stepDecision()).id}`;
      if (pg.name === 'mglru-lru_gen') {
        const runs = (await api('/api/v1/runs?machine=demo-mongo-v6&limit=1')).items;
        assert(runs.length, 'no demo-mongo-v6 runs');
        const sha = runs[0].commit;
        path = `/mglru?base=${sha}:lru_gen%3Doff&target=${sha}:lru_gen%3Don&machine=demo-mongo-v6&suite=ycsb`;
      }
      const page = await newPage(browser);
      try {
        await open(page, url + path);
        noProblems(page, path);
        const errors = await page.locator('.status.error').allTextContents();
        assert(!errors.length, `${path} shows an error: ${errors.join(' | ')}`);
        const body = await page.locator('main').innerText();
        for (const t of pg.text) assert(body.includes(t), `${path}: "${t}" not on the page`);
        const ink = await canvasInk(page);
        assert(ink.length >= pg.charts, `${path}: ${ink.length} canvases, expected ${pg.charts}`);
        for (const c of ink) {
          assert(c.elements > 0 && c.inked > 2000 && c.data > 150,
            `${path}: chart "${c.label}" looks empty (${c.elements} elements, ${c.inked} inked pixels, ${c.data} in the plot area)`);
        }
        await shot(page, pg.name);
      } finally {
        await page.closeAll();
      }
    });
  }

  check('compare base=5.14.0&target=5.14.0-mglru shows the six MGLRU CIs of seed 002 (Table 1)', async () => {
    const page = await newPage(browser);
    try {
      await open(page, `${url}/compare?base=5.14.0&target=5.14.0-mglru`);
      const rows = await page.locator('table tr', { hasText: 'ycsb.total_throughput_ops/s' }).allInnerTexts();
      for (const ci of MGLRU_CIS) assert(rows.some((r) => r.includes(ci)), `compare: no ycsb row shows ${ci}`);
      await open(page, `${url}/mglru?base=5.14.0&target=5.14.0-mglru&machine=demo-mongo&suite=ycsb`);
      const t1 = await page.locator('#table1').innerText();
      for (const ci of MGLRU_CIS) assert(t1.includes(ci), `mglru Table 1 lacks ${ci}`);
      noProblems(page, 'compare/mglru');
    } finally {
      await page.closeAll();
    }
  });

  check('clicking a trend point opens the compare against its parent; its triangle opens the decision', async () => {
    const page = await newPage(browser);
    // where the mean (or decision triangle) of a commit is drawn, in page pixels
    const where = (sha, kind) => page.evaluate(([s, k]) => {
      const canvas = document.querySelector('canvas');
      const chart = window.Chart.getChart(canvas);
      const di = chart.data.datasets.findIndex((d) => d.kind === k);
      const ds = chart.data.datasets[di];
      const i = k === 'mean' ? ds.points.findIndex((p) => p.commit === s) : ds.decisions.findIndex((d) => d.commit === s);
      if (i < 0) return null;
      const el = chart.getDatasetMeta(di).data[i];
      const box = canvas.getBoundingClientRect();
      return { x: box.left + el.x, y: box.top + el.y, next: k === 'mean' && ds.points[i + 1] ? ds.points[i + 1].commit : null };
    }, [sha, kind]);
    try {
      await open(page, url + LKP_TREND);
      const step = await where(STEP, 'mean');
      assert(step && step.next, 'the trend has no point for 1431d4d11a or none after it');
      const after = await where(step.next, 'mean');
      await Promise.all([page.waitForURL(/\/compare\?/), page.mouse.click(after.x, after.y)]);
      await settle(page);
      const u = new URL(page.url());
      assert(u.searchParams.get('base') === STEP, `compare base is ${u.searchParams.get('base')}, not the parent 1431d4d11a`);
      assert(u.searchParams.get('target') === step.next, `compare target is ${u.searchParams.get('target')}, not ${step.next}`);
      assert(u.searchParams.get('machine') === 'demo-lkp-bdw-ex2' && u.searchParams.get('suite') === 'vm-scalability',
        'the trend\'s filters were not kept');
      const row = await page.locator('tr', { hasText: 'vm-scalability.throughput' }).first().innerText();
      assert(row.includes('18,'), `compare row: ${row}`);
      noProblems(page, 'trend point click');
      await shot(page, 'compare-from-trend');
      await page.goBack();
      await settle(page);
      const tri = await where(STEP, 'decision');
      assert(tri, 'no decision triangle at 1431d4d11a');
      await Promise.all([page.waitForURL(/\/regressions\/\d+/), page.mouse.click(tri.x, tri.y)]);
      await settle(page);
      assert((await page.locator('main').innerText()).includes('vm-scalability.throughput'), 'the decision page does not show the metric');
      noProblems(page, 'trend triangle click');
    } finally {
      await page.closeAll();
    }
  });

  check('a deep link restores the same view (compare filter, sort, significant; reload)', async () => {
    const page = await newPage(browser);
    const state = () => page.evaluate(() => ({
      filter: document.querySelector('input[type=search]').value,
      significant: document.querySelector('input[name=significant]').checked,
      sorted: [...document.querySelectorAll('th[aria-sort]')].filter((t) => t.getAttribute('aria-sort') !== 'none').map((t) => t.textContent + t.getAttribute('aria-sort')),
      rows: [...document.querySelectorAll('tbody tr')].map((r) => r.innerText),
    }));
    try {
      await open(page, `${url}/compare?base=${STEP_PARENT.slice(0, 10)}&target=${STEP.slice(0, 10)}&machine=demo-lkp-bdw-ex2`);
      await page.fill('input[type=search]', 'vm-scalability.');
      await page.locator('th button.sort', { hasText: 'change' }).click();
      await page.locator('th button.sort', { hasText: 'change' }).click();
      await page.check('input[name=significant]');
      await Promise.all([page.waitForURL(/significant=1/), page.click('form#form button[type=submit]')]);
      await settle(page);
      const link = page.url();
      for (const k of ['filter=vm-scalability.', 'sort=change', 'dir=asc', 'significant=1']) assert(link.includes(k), `the URL lacks ${k}: ${link}`);
      const before = await state();
      assert(before.rows.length > 0 && before.rows.every((r) => r.includes('vm-scalability.')), 'the filter did not apply');
      const fresh = await newPage(browser);
      try {
        await open(fresh, link);
        const page2 = fresh;
        const after = await page2.evaluate(() => ({
          filter: document.querySelector('input[type=search]').value,
          significant: document.querySelector('input[name=significant]').checked,
          sorted: [...document.querySelectorAll('th[aria-sort]')].filter((t) => t.getAttribute('aria-sort') !== 'none').map((t) => t.textContent + t.getAttribute('aria-sort')),
          rows: [...document.querySelectorAll('tbody tr')].map((r) => r.innerText),
        }));
        assert(JSON.stringify(after) === JSON.stringify(before), `the deep link shows another view:\n${JSON.stringify(before)}\n${JSON.stringify(after)}`);
        noProblems(fresh, 'deep link');
      } finally {
        await fresh.closeAll();
      }
      noProblems(page, 'compare state');
    } finally {
      await page.closeAll();
    }
  });

  check('Back returns to the previous view (trend test switch, then history.back)', async () => {
    const page = await newPage(browser);
    try {
      await open(page, `${url}/trend?machine=demo-bdw-2s&suite=sysbench&params=driver%3Dpostgres%2Cnr_threads%3D20%2Cworkload%3Doltp-read-only&metric=sysbench.tps`);
      const first = page.url();
      const other = await page.locator('select[name=test] option').evaluateAll((os) => os.map((o) => o.value).find((v) => v.includes('nr_threads=4')));
      assert(other, 'no nr_threads=4 test to switch to');
      await Promise.all([page.waitForURL(/nr_threads%3D4/), page.selectOption('select[name=test]', other)]);
      await settle(page);
      assert((await page.locator('main').innerText()).includes('nr_threads=4'), 'the view did not switch');
      await page.goBack();
      await settle(page);
      assert(page.url() === first, `Back went to ${page.url()}`);
      const sel = await page.locator('select[name=test]').inputValue();
      assert(sel.includes('nr_threads=20'), `after Back the form shows ${sel}`);
      noProblems(page, 'trend back');
    } finally {
      await page.closeAll();
    }
  });

  check('sorting the compare table works from the keyboard', async () => {
    const page = await newPage(browser);
    try {
      await open(page, `${url}/compare?base=5.14.0&target=5.14.0-mglru`);
      let found = false;
      for (let i = 0; i < 120 && !found; i++) {
        await page.keyboard.press('Tab');
        found = await page.evaluate(() => document.activeElement && document.activeElement.matches('th button.sort'));
      }
      assert(found, 'Tab never reached a sortable column header');
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => location.search.includes('sort='));
      noProblems(page, 'keyboard sort');
    } finally {
      await page.closeAll();
    }
  });

  check('triage with the admin token (kept in sessionStorage)', async () => {
    const d = await stepDecision();
    const page = await newPage(browser);
    try {
      await open(page, `${url}/regressions/${d.id}`);
      await page.selectOption('#triage select[name=state]', 'acknowledged');
      await page.fill('#triage textarea[name=note]', 'e2e: triaged from the browser');
      await page.fill('#triage input[name=token]', adminToken);
      await page.click('#triage button[type=submit]');
      await page.waitForFunction(() => document.body.innerText.includes('saved: acknowledged'));
      const kept = await page.evaluate(() => sessionStorage.getItem('kperf.adminToken'));
      assert(kept === adminToken, 'the admin token was not kept in sessionStorage');
      const now = await api(`/api/v1/regressions/${d.id}`);
      assert(now.state === 'acknowledged' && now.note === 'e2e: triaged from the browser', `server state ${now.state} / ${now.note}`);
      noProblems(page, 'triage');
      await shot(page, 'regression-triaged');
    } finally {
      await post(`/api/v1/regressions/${d.id}`, { state: 'new', note: '' }, adminToken).catch(() => {});
      await page.closeAll();
    }
  }, { skip: adminToken ? null : 'KPERF_ADMIN_TOKEN is not set' });

  check('a subscription is created and listed on the alerts page (admin token)', async () => {
    const page = await newPage(browser);
    try {
      await open(page, `${url}/subscriptions`);
      await page.fill('#token', adminToken);
      await page.click('#token-form button[type=submit]');
      await page.fill('#f-email', 'e2e-review@example.org');
      await page.fill('#f-series', 'per-memcg-lru_lock');
      await page.fill('#f-files', 'mm/vmscan.c, mm/swap.c');
      await page.selectOption('#f-focus', 'lru_lock');
      await page.click('#new-form button[type=submit]');
      await page.waitForFunction(() => document.querySelector('#subs') &&
        document.querySelector('#subs').innerText.includes('e2e-review@example.org'));
      const text = await page.evaluate(() => document.querySelector('#subs').innerText);
      assert(text.includes('focus=lru_lock') && text.includes('files=mm/vmscan.c,mm/swap.c'), `listed: ${text}`);
      noProblems(page, 'subscriptions');
      await shot(page, 'subscriptions');
    } finally {
      await page.closeAll();
    }
  }, { skip: adminToken ? null : 'KPERF_ADMIN_TOKEN is not set' });

  // The mail a reviewer gets, read from the SMTP server's Maildir: its links
  // (kperfd started without KPERF_PUBLIC_URL) name the served address and
  // open the compare, the decision and the unsubscribe page.
  const maildir = process.env.KPERF_MAILDIR;
  check('an alert mail\'s compare, triage and unsubscribe links open the right pages', async () => {
    const rcpt = `e2e-links-${Date.now()}@example.org`;
    const sub = await post('/api/v1/subscriptions', { email: rcpt, machine: 'e2e-mail' }, adminToken);
    const stamp = Date.now().toString(16).padStart(12, '0');
    const parent = `e2e0${stamp}`.padEnd(40, '0');
    const child = `e2e1${stamp}`.padEnd(40, '1');
    const runs = [[parent, null, 1000], [parent, null, 1004], [parent, null, 996],
      [child, parent, 880], [child, parent, 884], [child, parent, 878]];
    for (const [i, [sha, par, v]] of runs.entries()) {
      await post('/api/v1/runs', {
        run_id: `e2e-mail-${stamp}-${i}`, machine: { name: 'e2e-mail' },
        kernel: { commit: sha, ...(par ? { parent: par } : {}), subject: `e2e: ${par ? 'the child' : 'the parent'}` },
        test: { suite: 'vm-scalability', params: { test: 'e2e-links' } },
        metrics: { 'vm-scalability.throughput': v },
      }, token);
    }
    let msg = null;
    for (let i = 0; i < 300 && !msg; i++) {
      for (const f of readdirSync(join(maildir, 'new'))) {
        const text = readFileSync(join(maildir, 'new', f), 'utf8');
        if (text.includes(`To: ${rcpt}`)) msg = text;
      }
      if (!msg) await new Promise((r) => setTimeout(r, 100));
    }
    assert(msg, `no mail to ${rcpt} within 30 s`);
    const link = (re) => { const m = msg.match(re); assert(m, `no ${re} in the mail:\n${msg}`); return m[1]; };
    const compare = link(/^Compare: (\S+)\r?$/m);
    const triage = link(/^Triage: +(\S+)\r?$/m);
    const unsub = link(/^List-Unsubscribe: <([^>]+)>\r?$/m);
    for (const u of [compare, triage, unsub]) assert(u.startsWith(`${url}/`), `link ${u} is not on ${url}`);
    const page = await newPage(browser);
    try {
      await open(page, compare);
      await page.waitForFunction(() => document.body.innerText.includes('vm-scalability.throughput'));
      const ct = await page.evaluate(() => document.body.innerText);
      assert(ct.includes('-12.'), `the compare page shows no -12% change: ${ct.slice(0, 400)}`);
      noProblems(page, 'compare from mail');
      await shot(page, 'mail-compare');
      await open(page, triage);
      await page.waitForFunction(() => document.body.innerText.includes('Triage'));
      const tt = await page.evaluate(() => document.body.innerText);
      assert(tt.includes('vm-scalability.throughput') && tt.includes('regression'), `the decision page: ${tt.slice(0, 400)}`);
      noProblems(page, 'triage from mail');
      await shot(page, 'mail-triage');
      await open(page, unsub);
      const ut = await page.evaluate(() => document.body.innerText);
      assert(ut.includes('You will get no more mail'), `the unsubscribe page: ${ut}`);
      const list = await call('GET', `/api/v1/subscriptions?email=${encodeURIComponent(rcpt)}`, undefined, adminToken);
      assert(!list.items.some((x) => x.id === sub.id), `subscription ${sub.id} still active after the link`);
    } finally {
      await page.closeAll();
    }
  }, { skip: !maildir ? 'KPERF_MAILDIR is not set' : !adminToken ? 'KPERF_ADMIN_TOKEN is not set' : null });

  check('a 390-px-wide phone shows home and compare without page-wide horizontal scrolling', async () => {
    for (const [name, path] of [['home-390', '/'], ['compare-390', '/compare?base=5.14.0&target=5.14.0-mglru'], ['mglru-390', '/mglru']]) {
      const page = await newPage(browser, { width: 390, height: 844 });
      try {
        await open(page, url + path);
        const w = await page.evaluate(() => document.documentElement.scrollWidth);
        assert(w <= 392, `${path} at 390 px is ${w} px wide`);
        noProblems(page, `${path} at 390 px`);
        await shot(page, name);
      } finally {
        await page.closeAll();
      }
    }
  });

  check('API errors are shown, not swallowed', async () => {
    const page = await newPage(browser);
    try {
      await open(page, `${url}/compare?base=0000000dead&target=5.14.0`);
      const err = await page.locator('.status.error').innerText();
      assert(/not_found|invalid/.test(err), `the compare error is not shown: "${err}"`);
      assert(page.problems.every((p) => /HTTP 40\d|status of 40\d/.test(p)), `unexpected problems: ${page.problems.join('; ')}`);
    } finally {
      await page.closeAll();
    }
  });

  check('an empty database says what to do (API answers replaced by empty lists)', async () => {
    const page = await newPage(browser);
    try {
      await page.route(/\/api\/v1\/(machines|runs|regressions|series|tests|commits|metrics)(\?|$)/, (route) => route.fulfill({
        status: 200, contentType: 'application/json', body: JSON.stringify({ items: [], total: 0, limit: 100, offset: 0 }) }));
      for (const path of ['/', '/trend', '/mglru', '/lru-lock']) {
        await open(page, url + path);
        const text = await page.locator('main').innerText();
        assert(/No runs yet: post one with kperf-collect|No MGLRU runs yet/.test(text), `${path}: no empty state that says what to do:\n${text.slice(0, 300)}`);
      }
      noProblems(page, 'empty state');
      await shot(page, 'empty-lru-lock');
    } finally {
      await page.closeAll();
    }
  });

  check('home says how many key groups are still being decided, and draws its lists again once none are', async () => {
    const page = await newPage(browser);
    let groups = 600;
    try {
      // the real answers, with the pending counts of an import being judged
      await page.route(/\/api\/v1\/regressions(\?|$)/, async (route) => {
        const res = await route.fetch();
        const body = { ...(await res.json()), pending_groups: groups, pending_decisions: groups * 9 };
        await route.fulfill({ response: res, contentType: 'application/json', body: JSON.stringify(body) });
      });
      await open(page, `${url}/`);
      const note = await page.locator('#pending').innerText();
      assert(note.includes('Still deciding: 600 key groups') && note.includes('5,400 commit decisions'),
        `the pending note: "${note}"`);
      await shot(page, 'home-pending');
      groups = 0; // the queue empties: the note goes, the decisions are drawn again
      await page.waitForFunction(() => !document.querySelector('#pending').textContent.trim(), null, { timeout: 15000 });
      await settle(page);
      const text = await page.locator('#decisions').innerText();
      assert(text.includes('Regressions'), `no decisions after the queue emptied: ${text.slice(0, 300)}`);
      noProblems(page, 'pending note');
    } finally {
      await page.closeAll();
    }
  });

  check('pages work under a Content-Security-Policy header without unsafe-inline', async () => {
    const page = await newPage(browser);
    try {
      await page.route((u) => !u.pathname.startsWith('/api/') && !u.pathname.startsWith('/static/'), async (route) => {
        const res = await route.fetch();
        await route.fulfill({ response: res, headers: { ...res.headers(),
          'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'" } });
      });
      for (const path of [LKP_TREND, '/compare?base=5.14.0&target=5.14.0-mglru', '/series/per-memcg-lru_lock%20v18']) {
        await open(page, url + path);
        const ink = await canvasInk(page);
        assert(ink.length && ink.every((c) => c.data > 150), `${path}: charts not drawn under the CSP`);
      }
      noProblems(page, 'CSP');
    } finally {
      await page.closeAll();
    }
  });

  check('a commit subject with markup renders as text (XSS)', async () => {
    const subject = '<img src=x onerror=alert(1)>';
    const parent = 'e2e0000000000000000000000000000000000001';
    const commit = 'e2e0000000000000000000000000000000000002';
    const run = (sha, par, subj, i, v) => ({
      run_id: `e2e-xss-${sha.slice(-1)}-${i}`, machine: { name: 'e2e-xss' },
      kernel: { commit: sha, parent: par, subject: subj, release: `e2e-xss-${sha.slice(-1)}` },
      test: { suite: 'xss', params: { note: subject } }, variant: { label: subject },
      metrics: { 'xss.throughput': v, 'xss.<b>bold</b>': v / 10 }, output_tail: `${subject}\n<script>alert(2)</script>`,
    });
    await post('/api/v1/commits', [{ sha: parent, subject: 'e2e: the parent of the XSS check' }, { sha: commit, parent, subject }], token);
    await post('/api/v1/runs', { runs: [0, 1, 2].flatMap((i) => [run(parent, undefined, 'e2e: the parent of the XSS check', i, 100 + i),
      run(commit, parent, subject, i, 150 + i)]) }, token);
    let decision = null;
    for (let i = 0; i < 50 && !decision; i++) {
      decision = (await api('/api/v1/regressions?machine=e2e-xss&limit=5')).items[0] || null;
      if (!decision) await new Promise((r) => setTimeout(r, 200));
    }
    const paths = [`/runs/e2e-xss-2-0`, `/compare?base=${parent}&target=${commit}`, '/trend?machine=e2e-xss&suite=xss&metric=xss.throughput',
      `/?q=${commit.slice(0, 12)}`];
    if (decision) paths.push(`/regressions/${decision.id}`, '/?machine=e2e-xss');
    for (const path of paths) {
      const page = await newPage(browser);
      try {
        await open(page, url + path);
        const imgs = await page.locator('img').count();
        assert(imgs === 0, `${path}: ${imgs} <img> elements: the subject was parsed as HTML`);
        assert(!page.dialogs.length, `${path}: a dialog opened: ${page.dialogs.join(', ')}`);
        const text = await page.locator('main').innerText();
        assert(text.includes(subject), `${path}: the subject is not shown as text`);
        noProblems(page, path);
        if (path.startsWith('/runs/')) await shot(page, 'xss-run');
      } finally {
        await page.closeAll();
      }
    }
  }, { skip: token ? null : 'KPERF_TOKEN is not set' });

  // Two commits' runs as kperf-collect posts them from real `perf lock contention`
  // outputs and the readtwice runs they recorded (tests/fixtures/collect/perf-lock/).
  const repo = join(dirname(fileURLToPath(import.meta.url)), '../..');
  const collectBin = process.env.KPERF_COLLECT_BIN || join(repo, 'build/kperf-collect');
  check('the lru-lock page shows the perf-lock rows of the LRU lock\'s callers', async () => {
    const base = 'e2ea000000000000000000000000000000000001';
    const target = 'e2eb000000000000000000000000000000000002';
    await post('/api/v1/commits', [{ sha: base, subject: 'e2e: perf lock base' }, { sha: target, parent: base, subject: 'e2e: perf lock target' }], token);
    for (const [sha, fixture] of [[base, 'readtwice-4procs'], [target, 'readtwice-8procs']]) {
      for (const [format, file] of [['perf-lock', fixture], ['readtwice', `${fixture}.out`]]) {
        const r = spawnSync(collectBin, ['--server', url, '--token', token, '--machine', 'e2e-perf-lock', 'import', '--format', format,
          '--suite', 'readtwice', '--param', 'lab=e2e', '--commit', sha, '--quiet', join(repo, 'tests/fixtures/collect/perf-lock', file)],
        { encoding: 'utf8', env: { ...process.env, KPERF_COLLECT_CONFIG: '/dev/null' } });
        assert(r.status === 0, `kperf-collect import --format ${format} ${file}: exit ${r.status}: ${r.stderr}`);
      }
    }
    const page = await newPage(browser);
    try {
      const path = '/lru-lock?machine=e2e-perf-lock&suite=readtwice&params=lab%3De2e';
      await open(page, url + path);
      noProblems(page, path);
      const body = await page.locator('main').innerText();
      assert(body.includes('perf lock: time waited on the LRU lock by its callers'), `${path}: no perf lock chart section`);
      const rows = await page.locator('tr', { hasText: 'folio_batch_move_lru' }).allInnerTexts();
      // readtwice-4procs: 10 contentions, 70.96 us; readtwice-8procs: 37, 234.12 us (three and five rows summed)
      assert(rows.some((r) => /\b10\b/.test(r) && /\b37\b/.test(r) && r.includes('70.96') && r.includes('234.12')), `folio_batch_move_lru row: ${rows.join(' | ')}`);
      assert(!(await page.locator('tr', { hasText: 'ext4_do_writepages' }).count()), 'a caller that is not the LRU lock\'s is listed');
      const ink = await canvasInk(page);
      const chart = ink.find((c) => /perf lock contention/.test(c.label));
      assert(chart && chart.elements > 0 && chart.inked > 2000, `the perf lock chart looks empty: ${JSON.stringify(ink)}`);
      await shot(page, 'lru-lock-perf-lock');
    } finally {
      await page.closeAll();
    }
  }, { skip: !token ? 'KPERF_TOKEN is not set' : !existsSync(collectBin) ? `${collectBin} is not built (make)` : null });

  return checks;
}
