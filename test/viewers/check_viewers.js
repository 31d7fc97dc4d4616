// check_viewers.js - the browser half of test/integration/test_viewers.sh:
// drives Debian's chromium (headless, fresh profile) through playwright-core
// and checks that (a) the HTML report renders its charts with no console
// error and fetches nothing, (b) speedscope loads the Chrome export, (c) a
// plain page JSON.parses the export and finds its traceEvents.
// Usage: node check_viewers.js CONFIG.json   (keys: see `cfg` below)
// Prints one "ok ..." or "FAIL ..." line per check; exits 1 on any failure.
'use strict';
const fs = require('fs');
const path = require('path');

const cfg = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
// cfg: modules (node_modules dir), chromium, profile (fresh dir), base
// (http://127.0.0.1:PORT), report, trace, speedscope, loader (paths under
// base), artifacts (dir), threads (thread names of the trace), nthreads,
// checks (optional: which of report, speedscope, loader to run).
const { chromium } = require(path.join(cfg.modules, 'playwright-core'));

let failed = 0;
function check(ok, what) {
  console.log((ok ? 'ok   ' : 'FAIL ') + (what.length > 600 ? what.slice(0, 600) + '...' : what));
  if (!ok) failed++;
}

// Collects what a page reports as broken: console errors, uncaught
// exceptions, failed or >= 400 requests, and every URL it requested.
function watch(page) {
  const w = { errors: [], urls: [] };
  page.on('console', (m) => { if (m.type() === 'error') w.errors.push('console: ' + m.text()); });
  page.on('pageerror', (e) => w.errors.push('exception: ' + e.message));
  page.on('requestfailed', (r) => w.errors.push('request failed: ' + r.url() + ' ' + (r.failure() || {}).errorText));
  page.on('request', (r) => w.urls.push(r.url()));
  page.on('response', (r) => { if (r.status() >= 400) w.errors.push('HTTP ' + r.status() + ' ' + r.url()); });
  return w;
}

async function report(ctx) {
  const page = await ctx.newPage();
  const w = watch(page);
  const url = cfg.base + '/' + cfg.report;
  await page.goto(url, { waitUntil: 'load', timeout: 30000 });
  const r = await page.evaluate(() => {
    const visible = (el) => { const b = el.getBoundingClientRect(); return b.width > 0 && b.height > 0; };
    const charts = [...document.querySelectorAll('svg.chart')].map((svg) => ({
      kind: svg.classList.contains('heat') ? 'heat' : 'bars',
      metric: svg.dataset.metric || '', scope: svg.dataset.scope || '',
      count: Number(svg.dataset.count || 0),
      box: visible(svg),
      rects: [...svg.querySelectorAll('rect')].filter(visible).length,
      bars: [...svg.querySelectorAll('rect.bar')].filter(visible).reduce((n, b) => n + Number(b.dataset.count), 0),
      rows: svg.querySelectorAll('g.row').length,
    }));
    return { charts, scripts: document.scripts.length, title: document.title };
  });
  check(w.errors.length === 0, 'report: no console errors, exceptions or failed requests ' + JSON.stringify(w.errors));
  const foreign = w.urls.filter((u) => u !== url && !u.startsWith('data:'));
  check(foreign.length === 0, 'report: fetched nothing but itself ' + JSON.stringify(foreign));
  check(r.scripts === 0, 'report: no script elements (' + r.scripts + ')');
  const heat = r.charts.filter((c) => c.kind === 'heat');
  check(heat.length === 1 && heat[0].box && heat[0].rows === cfg.nthreads && heat[0].rects >= cfg.nthreads,
    'report: utilization chart rendered, a row per thread ' + JSON.stringify(heat));
  const bars = r.charts.filter((c) => c.kind === 'bars');
  for (const metric of ['park', 'busy', 'wake_latency']) {
    const all = bars.find((c) => c.metric === metric && c.scope === 'all');
    check(all && all.box && all.count > 0 && all.rects > 0 && all.bars === all.count,
      'report: ' + metric + ' histogram rendered, visible bars add up to its count ' + JSON.stringify(all));
  }
  const bad = bars.filter((c) => !c.box || (c.count > 0 && (c.rects === 0 || c.bars !== c.count)));
  check(bars.length >= 3 && bad.length === 0, 'report: all ' + bars.length + ' histograms rendered ' + JSON.stringify(bad));
  await page.screenshot({ path: path.join(cfg.artifacts, 'report.png'), fullPage: true });
  const heatEl = await page.$('svg.heat');
  if (heatEl) await heatEl.screenshot({ path: path.join(cfg.artifacts, 'report-utilization.png') });
  const hist = await page.$('#histograms');
  if (hist) await hist.screenshot({ path: path.join(cfg.artifacts, 'report-histograms.png') });
  await page.close();
}

async function speedscope(ctx) {
  const page = await ctx.newPage();
  const w = watch(page);
  const profile = cfg.base + '/' + cfg.trace;
  await page.goto(cfg.base + '/' + cfg.speedscope + '#profileURL=' + encodeURIComponent(profile),
    { waitUntil: 'load', timeout: 30000 });
  // speedscope names the page after the profile once it has imported it.
  let title = '';
  try {
    await page.waitForFunction(() => / - speedscope$/.test(document.title), null, { timeout: 30000 });
    title = await page.title();
  } catch (e) {
    title = 'timeout: ' + (await page.title());
  }
  await page.waitForTimeout(500); // a frame or two of the flame graph
  const text = await page.evaluate(() => document.body.innerText);
  check(/ - speedscope$/.test(title), 'speedscope: loaded the profile (title "' + title + '")');
  check(!/Something went wrong|Unrecognized format|Failed to/i.test(text), 'speedscope: no error message on the page');
  // One profile per thread track, the first one named after its thread: "NAME (tid N) (1/THREADS)".
  const named = cfg.threads.filter((n) => text.includes(n + ' (tid '));
  check(named.length > 0 && text.includes('(1/' + cfg.nthreads + ')'),
    'speedscope: a profile per thread, named (' + JSON.stringify(named) + ', want "(1/' + cfg.nthreads + ')")');
  const errors = w.errors;
  check(errors.length === 0, 'speedscope: no console errors, exceptions or failed requests ' + JSON.stringify(errors));
  check(w.urls.includes(profile), 'speedscope: fetched ' + profile);
  await page.screenshot({ path: path.join(cfg.artifacts, 'speedscope.png') });
  await page.close();
}

async function loader(ctx) {
  const page = await ctx.newPage();
  const w = watch(page);
  await page.goto(cfg.base + '/' + cfg.loader + '#' + encodeURIComponent(cfg.base + '/' + cfg.trace),
    { waitUntil: 'load', timeout: 30000 });
  await page.waitForFunction(() => document.body.dataset.result, null, { timeout: 30000 });
  const r = JSON.parse(await page.evaluate(() => document.body.dataset.result));
  check(r.ok && r.events > 0 && r.threads === cfg.nthreads && r.X > 0,
    'JSON page: JSON.parse and traceEvents, a thread_name per thread ' + JSON.stringify(r));
  check(w.errors.length === 0, 'JSON page: no console errors ' + JSON.stringify(w.errors));
  await page.close();
}

(async () => {
  const ctx = await chromium.launchPersistentContext(cfg.profile, {
    executablePath: cfg.chromium,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu'].concat(cfg.extraArgs || []),
    viewport: { width: 1400, height: 1000 },
  });
  try {
    const checks = cfg.checks || ['report', 'speedscope', 'loader'];
    if (checks.includes('report')) await report(ctx);
    if (checks.includes('speedscope')) await speedscope(ctx);
    if (checks.includes('loader')) await loader(ctx);
  } catch (e) {
    check(false, 'browser run: ' + (e.stack || e));
  } finally {
    await ctx.close();
  }
  process.exit(failed ? 1 : 0);
})();
