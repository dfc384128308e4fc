// posted.mjs - the browser checks of the series posted to mailing lists (the
// robot): home lists them with where they stand, the series page shows each
// posted version with its mail links, commits and plans, and a held reply is
// released from its Release button.
//
// The posted series are rows written with psql into the e2e database
// (KPERF_DATABASE_URL), here and only here: kperfd learns posted series by
// polling a public-inbox and their outcome from lab agents, neither of which
// the e2e harness runs. The inbox the rows belong to is never polled
// (next_poll_at is infinity); no plan target is left queued or applied, so
// the robot's workers leave the rows alone. Per-memcg-lru_lock v17 and v18
// are posted versions of the demo's series, their patches the demo's commits.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { newPage, open, settle, canvasInk, shot, assert, noProblems } from './browser.mjs';

export const INBOX = 'https://lore.kernel.org/linux-mm/';
export const VMSCAN = 'mm/vmscan: batch the lru_lock in folio_batch_move_lru';
export const MGLRU = 'mm: multi-gen LRU: wake kswapd once per memcg';
export const LRU = 'per-memcg-lru_lock';
const HELD_MSGID = '<kperf.robot.e2e-held.regression@localhost>';
const BASE = 'e2e5ba5e00000000000000000000000000000001';
const PATCH_SHAS = [1, 2, 3].map((i) => `e2e5a7c${i}`.padEnd(40, String(i)));
const msgid = (name, v, i) => `20261201${String(v).padStart(2, '0')}${String(i).padStart(2, '0')}.${name.replace(/[^a-z]/gi, '').slice(0, 12).toLowerCase()}@example.org`;

const lit = (s) => (s === null || s === undefined ? 'NULL' : `'${String(s).replace(/'/g, "''")}'`);
const arr = (xs) => `ARRAY[${xs.map(lit).join(',')}]::text[]`;

function psql(dbUrl, sql) {
  const r = spawnSync('psql', [dbUrl, '-X', '-q', '-t', '-A', '-v', 'ON_ERROR_STOP=1', '-f', '-'], { input: sql, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`psql: exit ${r.status}: ${r.stderr}`);
  return r.stdout.trim();
}

// One posted version: its series row, patches, and a plan target with its reply.
function version({ name, v, prev, subject, cover, state, detail, base, patches, target, mail, author = 'Lab Dev',
  email = 'e2e-author@example.org', days }) {
  const head = cover ? msgid(name, v, 0) : patches[0].msgid;
  const sid = `(SELECT id FROM posted_series WHERE head_msgid = ${lit(head)})`;
  const out = [`INSERT INTO posted_series (inbox_id, head_msgid, has_cover, series_key, name, version, subject,
    author_name, author_email, change_id, base_sha, total, previous_id, state, state_detail, posted_at)
    VALUES ((SELECT id FROM inbox WHERE name = 'e2e-lore'), ${lit(head)}, ${cover}, ${lit(`e2e:${name}`)}, ${lit(name)}, ${v},
    ${lit(subject)}, ${lit(author)}, ${lit(email)}, ${lit(`20261201-e2e-${name.length}`)}, ${lit(base)}, ${patches.length},
    ${prev ? `(SELECT id FROM posted_series WHERE series_key = ${lit(`e2e:${name}`)} AND version = ${prev})` : 'NULL'},
    ${lit(state)}, ${lit(detail)}, now() - interval '${days} days');`];
  patches.forEach((p, i) => out.push(`INSERT INTO posted_patch (series_id, position, msgid, subject, author_name, author_email, files, commit_id)
    VALUES (${sid}, ${i + 1}, ${lit(p.msgid)}, ${lit(p.subject)}, ${lit(author)}, ${lit(email)}, ${arr(p.files)},
    ${p.commit ? `(SELECT id FROM commits WHERE sha = ${lit(p.commit)})` : 'NULL'});`));
  if (target) {
    out.push(`INSERT INTO plan_target (plan_id, series_id, base_commit_id, state, detail, first_bad_position)
      VALUES ((SELECT id FROM plan WHERE name = 'e2e-lru'), ${sid}, (SELECT id FROM commits WHERE sha = ${lit(base)}),
      ${lit(target.state)}, ${lit(target.detail)}, ${target.firstBad || 'NULL'});`);
  }
  if (mail) {
    const tid = `(SELECT id FROM plan_target WHERE series_id = ${sid})`;
    const message = [`From: kperf <kperf@localhost>`, `To: ${author} <${email}>`, `Subject: Re: ${subject}`,
      `Message-ID: ${mail.msgid}`, `In-Reply-To: <${head}>`, 'Date: Tue, 01 Dec 2026 12:00:00 +0000', '',
      `kperf (e2e): ${target.detail}`, ''].join('\r\n');
    out.push(`INSERT INTO alert (subscription_id, commit_id, kind, state, due_at, rcpt, subject, message_id, message,
      plan_target_id, robot_kind, in_reply_to, sent_at)
      VALUES (NULL, ${patches[patches.length - 1].commit ? `(SELECT id FROM commits WHERE sha = ${lit(patches[patches.length - 1].commit)})` : 'NULL'},
      'robot', ${lit(mail.state)}, now(), ${lit(email)}, ${lit(`Re: ${subject}`)}, ${lit(mail.msgid)}, ${lit(message)}, ${tid},
      ${lit(mail.kind)}, ${lit(`<${head}>`)}, ${mail.state === 'sent' ? 'now()' : 'NULL'});`);
  }
  return out.join('\n');
}

// The posted series, once per database; a rerun only holds the reply again.
export async function ensurePosted({ api, dbUrl }) {
  if (psql(dbUrl, "SELECT count(*) FROM inbox WHERE name = 'e2e-lore'") !== '0') {
    psql(dbUrl, `UPDATE alert SET state = 'held', released_at = NULL, attempts = 0 WHERE message_id = ${lit(HELD_MSGID)};`);
    return;
  }
  const lab = await api(`/api/v1/series/${encodeURIComponent(LRU)}`);
  const labVersion = (n) => lab.versions.find((v) => v.version === n);
  const sql = ['BEGIN;',
    `INSERT INTO inbox (name, url, list, poll_s, next_poll_at, last_poll_at, last_result, last_ok_at)
      VALUES ('e2e-lore', ${lit(INBOX)}, 'linux-mm@kvack.org', 86400, 'infinity', now(), 'ok', now());`,
    `INSERT INTO plan (name, inbox_id, subject_glob, tests, machines, runs, report_mode)
      VALUES ('e2e-lru', (SELECT id FROM inbox WHERE name = 'e2e-lore'), '*lru*',
      '[{"suite":"vm-scalability","params":{}}]', '{demo-lkp-bdw-ex2}', 3, 'hold');`,
    `INSERT INTO commits (sha, parent_sha, subject, author) VALUES (${lit(BASE)}, NULL, 'Linux 6.13-rc1', 'Linus Torvalds');`,
    ...PATCH_SHAS.map((sha, i) => `INSERT INTO commits (sha, parent_sha, subject, author, message_id) VALUES (${lit(sha)},
      ${lit(i ? PATCH_SHAS[i - 1] : BASE)}, ${lit(['mm/vmscan: take the lru_lock once per batch', 'mm/swap: drain folio batches under one lock',
      'mm/vmscan: drop the now-unused lock helper'][i])}, 'Lab Dev', ${lit(msgid(VMSCAN, 2, i + 1))});`)];
  const vmscanPatches = (v, commits) => ['mm/vmscan: take the lru_lock once per batch', 'mm/swap: drain folio batches under one lock',
    'mm/vmscan: drop the now-unused lock helper'].map((subject, i) => ({ subject, msgid: msgid(VMSCAN, v, i + 1),
    files: [['mm/vmscan.c'], ['mm/swap.c', 'mm/vmscan.c'], ['mm/vmscan.c', 'include/linux/swap.h']][i], commit: commits ? PATCH_SHAS[i] : null }));
  const vmscanSubject = (v) => `[PATCH v${v} 0/3] ${VMSCAN}`;
  sql.push(version({ name: VMSCAN, v: 1, subject: vmscanSubject(1), cover: true, state: 'does_not_apply', base: BASE, days: 3,
    detail: `does not apply on ${BASE.slice(0, 12)}: git am says: error: patch failed: mm/swap.c:1032`,
    patches: vmscanPatches(1, false), target: { state: 'does_not_apply', detail: `does not apply on ${BASE.slice(0, 12)}: git am says: error: patch failed: mm/swap.c:1032` } }));
  sql.push(version({ name: VMSCAN, v: 2, prev: 1, subject: vmscanSubject(2), cover: true, state: 'regression', base: BASE, days: 1,
    detail: `vm-scalability.throughput -9.84% at ${PATCH_SHAS[1].slice(0, 12)}`, patches: vmscanPatches(2, true),
    target: { state: 'regression', detail: `vm-scalability.throughput -9.84% at ${PATCH_SHAS[1].slice(0, 12)}`, firstBad: 2 },
    mail: { state: 'held', kind: 'regression', msgid: HELD_MSGID } }));
  for (const [v, days, state, detail, kind] of [[17, 20, 'clean', 'no KPI moved', 'clean'],
    [18, 10, 'improvement', 'sysbench.tps +9.71% at the last patch', 'improvement']]) {
    const lv = labVersion(v);
    assert(lv && lv.base, `the demo has no per-memcg-lru_lock v${v}`);
    sql.push(version({ name: LRU, v, prev: v === 18 ? 17 : null, subject: `[PATCH v${v} 0/${lv.patches.length}] ${LRU}`, cover: true,
      state, detail, base: lv.base.commit, days, author: 'Alex Shi', email: 'alex.shi@example.org',
      patches: lv.patches.map((p, i) => ({ subject: p.subject, msgid: msgid(LRU, v, i + 1), files: ['mm/swap.c', 'mm/vmscan.c'], commit: p.commit })),
      target: { state, detail }, mail: { state: 'sent', kind, msgid: `<kperf.robot.e2e-${v}.${kind}@localhost>` } }));
  }
  sql.push(version({ name: MGLRU, v: 1, subject: `[PATCH] ${MGLRU}`, cover: false, state: 'no_base', base: null, days: 0,
    detail: 'the series names no base-commit', patches: [{ subject: MGLRU, msgid: msgid(MGLRU, 1, 1), files: ['mm/vmscan.c'] }] }));
  sql.push('COMMIT;');
  psql(dbUrl, sql.join('\n'));
}

export function postedChecks(env) {
  const { url, api, adminToken, browser, dbUrl } = env;
  const checks = [];
  const skip = dbUrl ? null : 'KPERF_DATABASE_URL is not set (the posted series are written into the e2e database)';
  const check = (name, fn, opts = {}) => checks.push({ name, fn, skip: opts.skip || skip });
  const href = (name) => `/series/${encodeURIComponent(name)}`;

  check('home lists the posted series with where each stands and its reply', async () => {
    const page = await newPage(browser);
    try {
      await open(page, `${url}/`);
      noProblems(page, 'home');
      const rows = await page.locator('#posted tbody tr').allInnerTexts();
      const row = (name) => rows.find((r) => r.includes(name)) || '';
      for (const [name, want] of [[VMSCAN, ['v2', 'Lab Dev', 'regression in patch 2/3', 'mail held']],
        [LRU, ['v18', 'Alex Shi', 'improvement', 'mailed']], [MGLRU, ['v1', 'no base-commit']]]) {
        for (const w of want) assert(row(name).includes(w), `home: the posted row of "${name}" lacks "${w}": ${row(name)}`);
      }
      assert(rows.findIndex((r) => r.includes(MGLRU)) < rows.findIndex((r) => r.includes(VMSCAN)), `home: posted series not newest first:\n${rows.join('\n')}`);
      assert(!row(MGLRU).includes('mail'), `home: a series without a reply says one: ${row(MGLRU)}`);
      const links = await page.locator('#posted a.posted-series').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
      for (const n of [VMSCAN, LRU, MGLRU]) assert(links.includes(href(n)), `home: no link ${href(n)} in ${links.join(' ')}`);
      assert((await page.locator('main').innerText()).includes('Latest decisions'), 'home lost its decisions');
      await shot(page, 'home-posted');
      await Promise.all([page.waitForURL((u) => u.pathname === href(MGLRU)), page.locator('#posted a.posted-series', { hasText: MGLRU }).click()]);
      await settle(page);
      const text = await page.locator('main').innerText();
      assert(text.includes('Posted versions') && text.includes('no base-commit') && text.includes('the series names no base-commit'),
        `the posted-only series page: ${text.slice(0, 400)}`);
      noProblems(page, href(MGLRU));
    } finally {
      await page.closeAll();
    }
  });

  check('a posted series page shows its versions, mail links, commits and first bad patch; Release sends the held reply', async () => {
    const page = await newPage(browser);
    try {
      await open(page, url + href(VMSCAN));
      noProblems(page, href(VMSCAN));
      const errors = await page.locator('.status.error').allTextContents();
      assert(!errors.length, `${href(VMSCAN)} shows an error: ${errors.join(' | ')}`);
      const s = await api(`/api/v1/series/${encodeURIComponent(VMSCAN)}`);
      const cards = page.locator('#posted article.posted-version');
      assert(await cards.count() === 2, `${await cards.count()} posted versions shown, expected 2`);
      const [v2, v1] = [cards.nth(0), cards.nth(1)];
      const t2 = await v2.innerText();
      const t1 = await v1.innerText();
      assert(t2.startsWith('v2') && t1.startsWith('v1'), 'posted versions are not newest first');
      for (const w of ['regression in patch 2/3', 'vm-scalability.throughput -9.84%', 'Lab Dev', `base ${BASE.slice(0, 12)}`,
        'v2 against v1', 'first bad patch', 'mail held', 'e2e-lru']) assert(t2.includes(w), `v2 lacks "${w}":\n${t2}`);
      for (const w of [`does not apply on ${BASE.slice(0, 12)}`, 'git am says', 'not applied yet']) assert(t1.includes(w), `v1 lacks "${w}":\n${t1}`);
      const p2 = s.posted.find((p) => p.version === 2);
      assert(await v2.locator('h3 a.cover-mail').getAttribute('href') === p2.url && p2.url.startsWith(INBOX),
        `the cover link is not ${p2.url}`);
      const mails = await v2.locator('a.patch-mail').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
      assert(JSON.stringify(mails) === JSON.stringify(p2.patches.map((p) => p.url)), `patch mail links ${mails.join(' ')}`);
      const bad = await v2.locator('tr.first-bad').innerText();
      assert(bad.includes('2/3') && bad.includes(PATCH_SHAS[1].slice(0, 12)), `the first bad row: ${bad}`);
      const cmp = await v2.locator('tr.first-bad a.mono').getAttribute('href');
      assert(cmp === `/compare?base=${BASE}&target=${PATCH_SHAS[1]}`, `patch 2's commit links ${cmp}`);
      assert(await page.locator('button.release-mail').count() === 1, 'no single Release button for the held reply');
      await shot(page, 'series-posted');
      if (!adminToken) return;
      const maildir = process.env.KPERF_MAILDIR;
      const before = new Set(maildir ? readdirSync(join(maildir, 'new')) : []);
      await page.fill('.release input[name=token]', adminToken);
      await page.click('button.release-mail');
      await page.waitForFunction(() => document.querySelector('.release').innerText.includes('released'));
      assert((await v2.innerText()).includes('mail pending'), 'the reply is not shown pending after release');
      assert(await page.evaluate(() => sessionStorage.getItem('kperf.adminToken')) === adminToken, 'the admin token was not kept');
      const now = await api(`/api/v1/series/${encodeURIComponent(VMSCAN)}`);
      const m = now.posted.find((p) => p.version === 2).plans[0].mail;
      assert(m.state !== 'held', `the reply is still ${m.state} on the server`);
      noProblems(page, 'release');
      await shot(page, 'series-posted-released');
      assert(!(await page.locator('button.release-mail').count()), 'the Release button is still there after the release');
      if (maildir) {
        let got = false;
        for (let i = 0; i < 300 && !got; i++) {
          got = readdirSync(join(maildir, 'new')).some((f) => !before.has(f)
            && readFileSync(join(maildir, 'new', f), 'utf8').includes(HELD_MSGID));
          if (!got) await new Promise((r) => setTimeout(r, 100));
        }
        assert(got, `the released reply ${HELD_MSGID} reached no mailbox within 30 s`);
      }
    } finally {
      await page.closeAll();
    }
  });

  check('a series with lab and posted versions keeps its charts and points "v18 against v17" at them', async () => {
    const page = await newPage(browser);
    try {
      await open(page, `${url}${href(`${LRU} v18`)}`);
      noProblems(page, `${LRU} v18`);
      const text = await page.locator('main').innerText();
      for (const t of ['Each patch against the series base', 'v18 against v17', 'Posted versions', 'improvement', 'mailed'])
        assert(text.includes(t), `"${t}" not on the page`);
      const ink = await canvasInk(page);
      assert(ink.length >= 2 && ink.every((c) => c.data > 150), `charts not drawn: ${JSON.stringify(ink)}`);
      const v18 = page.locator('#posted-v18');
      const to = await v18.locator('.versus-posted a').getAttribute('href');
      assert(to === `${href(`${LRU} v18`)}#vs-previous`, `v18 against v17 links ${to}`);
      const lab = (await api(`/api/v1/series/${LRU}`)).versions.find((v) => v.version === 18);
      const shown = await v18.locator('td a.mono').allInnerTexts();
      assert(JSON.stringify(shown) === JSON.stringify(lab.patches.map((p) => p.commit.slice(0, 12))), `v18's commits: ${shown.join(' ')}`);
      assert(!(await page.locator('button.release-mail').count()), 'a Release button for replies already sent');
      await shot(page, 'series-lab-posted');
    } finally {
      await page.closeAll();
    }
  });

  return checks;
}
