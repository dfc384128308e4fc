// browser.mjs - the e2e tests' browser: Debian's chromium driven by
// playwright-core (never a downloaded browser), pages that record console
// errors and dialogs, a wait for a page to finish rendering, the pixel check
// of chart canvases and screenshots into tests/e2e/out/.
import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const OUT = join(dirname(fileURLToPath(import.meta.url)), 'out');
const CHROMIUM = process.env.KPERF_CHROMIUM || '/usr/bin/chromium';

export async function launch() {
  mkdirSync(OUT, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

// A page that keeps what went wrong: console errors, uncaught exceptions,
// dialogs (an alert() would mean injected script ran) and failed requests.
export async function newPage(browser, { width = 1280, height = 800 } = {}) {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  page.problems = [];
  page.dialogs = [];
  page.on('console', (m) => { if (m.type() === 'error') page.problems.push(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => page.problems.push(`uncaught: ${e.message}`));
  page.on('dialog', async (d) => { page.dialogs.push(`${d.type()}: ${d.message()}`); await d.dismiss(); });
  page.on('requestfailed', (r) => page.problems.push(`request failed: ${r.url()} ${r.failure() ? r.failure().errorText : ''}`));
  page.on('response', (r) => { if (r.status() >= 400) page.problems.push(`HTTP ${r.status()} for ${r.url()}`); });
  page.closeAll = () => context.close();
  return page;
}

// Until the network is idle and no "loading" status line is left.
export async function settle(page, timeout = 20000) {
  await page.waitForLoadState('networkidle', { timeout });
  await page.waitForFunction(() => !document.querySelector('.status.loading'), null, { timeout });
  await page.waitForLoadState('networkidle', { timeout });
}

export async function open(page, url) {
  await page.goto(url, { waitUntil: 'load' });
  await settle(page);
}

// What each chart drew: non-background pixels of the whole canvas, and the
// solid ones (alpha > 100) inside the plot area, where only data is solid
// (Chart.js grid lines are translucent, the background transparent); plus
// the number of data elements Chart.js laid out.
export async function canvasInk(page) {
  return page.evaluate(() => [...document.querySelectorAll('canvas')].map((c) => {
    const label = c.getAttribute('aria-label');
    const chart = window.Chart && window.Chart.getChart(c);
    if (!c.width || !c.height || !chart) return { label, inked: 0, data: 0, elements: 0 };
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const r = chart.currentDevicePixelRatio || 1;
    const a = chart.chartArea;
    const [x0, x1, y0, y1] = [a.left, a.right, a.top, a.bottom].map((v) => Math.round(v * r));
    let inked = 0;
    let data = 0;
    for (let y = 0; y < c.height; y++) {
      for (let x = 0; x < c.width; x++) {
        const alpha = d[(y * c.width + x) * 4 + 3];
        if (alpha < 16) continue;
        inked++;
        if (alpha > 100 && x > x0 + 1 && x < x1 - 1 && y > y0 + 1 && y < y1 - 1) data++;
      }
    }
    const elements = chart.data.datasets.reduce((n, _, i) => n + chart.getDatasetMeta(i).data
      .filter((e) => Number.isFinite(e.x) && Number.isFinite(e.y)).length, 0);
    return { label, inked, data, elements };
  }));
}

export async function shot(page, name) {
  const path = join(OUT, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

export function assert(cond, message) {
  if (!cond) throw new Error(message);
}

export function noProblems(page, what) {
  const p = page.problems.concat(page.dialogs.map((d) => `dialog ${d}`));
  assert(!p.length, `${what}: ${p.join('; ')}`);
}
