// charts.js - Chart.js glue shared by the pages: a plugin of our own that
// draws 95% CI whiskers on bars and points, one that draws vertical markers
// (change points), and builders for the change-% bar chart and the strip
// chart. Chart.js, hammer.js and chartjs-plugin-zoom are classic scripts
// loaded before the page's module (window.Chart).
import { el, PALETTE, VERDICT_COLOR, fmtPct, fmtCI } from './kperf.js';

const Chart = window.Chart;

// ci: one [lo, hi] (or null) per data point, on the dataset as `ci`.
const whiskers = {
  id: 'kperfWhiskers',
  afterDatasetsDraw(chart) {
    const { ctx } = chart;
    const horizontal = chart.options.indexAxis === 'y';
    chart.data.datasets.forEach((ds, di) => {
      if (!ds.ci || !chart.isDatasetVisible(di)) return;
      const meta = chart.getDatasetMeta(di);
      const vscale = chart.scales[horizontal ? meta.xAxisID : meta.yAxisID];
      const area = chart.chartArea;
      ctx.save();
      ctx.beginPath();
      ctx.rect(area.left, area.top, area.right - area.left, area.bottom - area.top);
      ctx.clip();
      ctx.strokeStyle = ds.whiskerColor || '#222';
      ctx.lineWidth = 1.5;
      meta.data.forEach((elem, i) => {
        const ci = ds.ci[i];
        if (!ci || ci[0] == null || ci[1] == null) return;
        const a = vscale.getPixelForValue(ci[0]);
        const b = vscale.getPixelForValue(ci[1]);
        const size = Math.max(3, Math.min(8, (horizontal ? elem.height : elem.width) / 4 || 5));
        ctx.beginPath();
        if (horizontal) {
          ctx.moveTo(a, elem.y); ctx.lineTo(b, elem.y);
          ctx.moveTo(a, elem.y - size); ctx.lineTo(a, elem.y + size);
          ctx.moveTo(b, elem.y - size); ctx.lineTo(b, elem.y + size);
        } else {
          ctx.moveTo(elem.x, a); ctx.lineTo(elem.x, b);
          ctx.moveTo(elem.x - size, a); ctx.lineTo(elem.x + size, a);
          ctx.moveTo(elem.x - size, b); ctx.lineTo(elem.x + size, b);
        }
        ctx.stroke();
      });
      ctx.restore();
    });
  },
};

// options.plugins.kperfMarkers.lines: [{x, color, label}] vertical dashed lines.
const markers = {
  id: 'kperfMarkers',
  afterDatasetsDraw(chart, _args, opts) {
    const lines = (opts && opts.lines) || [];
    const { ctx, chartArea } = chart;
    const xs = chart.scales.x;
    ctx.save();
    for (const m of lines) {
      const x = xs.getPixelForValue(m.x);
      if (x < chartArea.left || x > chartArea.right) continue;
      ctx.strokeStyle = m.color || '#000';
      ctx.setLineDash([5, 4]);
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.moveTo(x, chartArea.top);
      ctx.lineTo(x, chartArea.bottom);
      ctx.stroke();
      if (m.label) {
        ctx.setLineDash([]);
        ctx.font = '11px system-ui, sans-serif';
        ctx.fillStyle = m.color || '#000';
        const w = ctx.measureText(m.label).width;
        const tx = x + 4 + w > chartArea.right ? x - 4 - w : x + 4;
        ctx.fillText(m.label, tx, chartArea.bottom - 6);
      }
    }
    ctx.restore();
  },
};

if (Chart) {
  Chart.register(whiskers, markers);
  Chart.defaults.font.family = 'system-ui, -apple-system, "Segoe UI", sans-serif';
  Chart.defaults.color = '#333';
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
}

export const chartLib = () => Chart;

// A box for a canvas; label is the canvas's accessible name.
export function chartBox(label, cls = '') {
  const canvas = el('canvas', { role: 'img', 'aria-label': label });
  const wrap = el('div', { class: `chart ${cls}`.trim() }, canvas);
  return { wrap, canvas };
}

export function makeChart(canvas, config) {
  if (!Chart) throw new Error('Chart.js did not load (static/vendor/chart.umd.min.js: run `make vendor`)');
  const old = Chart.getChart(canvas);
  if (old) old.destroy();
  return new Chart(canvas, config);
}

export const alpha = (hex, a) => {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${a})`;
};

export const color = (i) => PALETTE[i % PALETTE.length];

// A label as lines of at most width characters, broken at spaces.
export function wrapLabel(text, width) {
  const lines = [];
  let line = '';
  for (const word of String(text).split(' ')) {
    if (line && line.length + 1 + word.length > width) { lines.push(line); line = word; } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.length > 1 ? lines : lines[0] || '';
}

// Horizontal bars of change % with their 95% CI whiskers.
// items: [{label, value, ci, verdict}]; the box grows with the number of bars,
// and on a narrow screen the labels wrap instead of being cut.
export function ciBarChart(box, items, { title = 'change % (95% CI)', limit = null } = {}) {
  const narrow = box.wrap.clientWidth && box.wrap.clientWidth < 600;
  const width = narrow ? 16 : 70;
  const lines = Math.max(1, ...items.map((i) => [].concat(wrapLabel(i.label, width)).length));
  box.wrap.style.height = `${Math.max(150, items.length * (14 * lines + 14) + 70)}px`;
  const lo = Math.min(0, ...items.map((i) => (i.ci ? i.ci[0] : i.value)));
  const hi = Math.max(0, ...items.map((i) => (i.ci ? i.ci[1] : i.value)));
  return makeChart(box.canvas, {
    type: 'bar',
    data: {
      labels: items.map((i) => i.label),
      datasets: [{
        label: title,
        data: items.map((i) => i.value),
        ci: items.map((i) => i.ci),
        backgroundColor: items.map((i) => alpha(VERDICT_COLOR[i.verdict] || VERDICT_COLOR.noise, 0.75)),
        borderColor: items.map((i) => VERDICT_COLOR[i.verdict] || VERDICT_COLOR.noise),
        borderWidth: 1,
        barPercentage: 0.8,
      }],
    },
    options: {
      indexAxis: 'y',
      scales: {
        x: { suggestedMin: lo, suggestedMax: hi, grace: '4%', title: { display: true, text: title },
          ...(limit ? { min: Math.max(-limit, Math.floor(lo)), max: Math.min(limit, Math.ceil(hi)) } : {}),
          grid: { color: (c) => (c.tick && c.tick.value === 0 ? '#333' : '#e3e3e3') } },
        y: { ticks: { autoSkip: false, font: { size: 11 }, callback: (_v, i) => wrapLabel(items[i].label, width) } },
      },
      plugins: {
        legend: { display: false },
        tooltip: { callbacks: { label: (c) => {
          const it = items[c.dataIndex];
          const real = it.real || it;
          return `${fmtPct(real.value)}  CI ${fmtCI(real.ci)}%  ${it.verdict || ''}`;
        } } },
      },
    },
  });
}

// Both sides' samples as a strip chart, with each side's mean as a bar.
export function stripChart(box, sides, { unit = '' } = {}) {
  const jitter = (i, n) => (n > 1 ? ((i * 0.618033) % 1) * 0.36 - 0.18 : 0);
  const datasets = sides.map((s, k) => ({
    type: 'scatter',
    label: `${s.label} (n=${s.values.length})`,
    data: s.values.map((v, i) => ({ x: k + jitter(i, s.values.length), y: v })),
    backgroundColor: alpha(color(k === 0 ? 4 : 1), 0.8),
    borderColor: color(k === 0 ? 0 : 5),
    pointRadius: 4,
  }));
  sides.forEach((s, k) => {
    if (!s.values.length) return;
    const m = s.values.reduce((a, b) => a + b, 0) / s.values.length;
    datasets.push({ type: 'line', label: `${s.label} mean`, data: [{ x: k - 0.3, y: m }, { x: k + 0.3, y: m }],
      borderColor: '#000', borderWidth: 2, pointRadius: 0 });
  });
  return makeChart(box.canvas, {
    type: 'scatter',
    data: { datasets },
    options: {
      scales: {
        x: { min: -0.6, max: sides.length - 0.4, ticks: { stepSize: 1, callback: (v) => (sides[v] ? sides[v].label : '') } },
        y: { title: { display: !!unit, text: unit } },
      },
      plugins: { legend: { labels: { filter: (l) => !l.text.endsWith(' mean') } } },
    },
  });
}

export function zoomOptions() {
  return {
    zoom: { wheel: { enabled: true, modifierKey: 'ctrl' }, pinch: { enabled: true }, drag: { enabled: false }, mode: 'x' },
    pan: { enabled: true, mode: 'x' },
    limits: { x: { min: 'original', max: 'original' } },
  };
}
