import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { existsSync, promises as fs } from 'node:fs';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { compareLink, runLink, sampleLink } from '../../src/protocol/viewer_links.ts';
import { RunStore, discoverRuns } from '../../src/viewer/runs.ts';
import { startViewerServer, type RunningViewer } from '../../src/viewer/server.ts';
import { tempDir } from '../helpers.ts';
import { taskName, writeFixtureRun } from './fixture.ts';

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing (apt-get install chromium; .ci/run installs it)`;
/** Screenshots go outside the project; BENCHGYM_SHOTS names another folder. */
const SHOTS = process.env.BENCHGYM_SHOTS ?? '/tmp/viewer-shots';

describe('the viewer in Chromium', { skip }, () => {
  let root: string;
  let viewer: RunningViewer;
  let context: BrowserContext;
  let userDataDir: string;
  let page: Page;
  const problems: string[] = [];

  before(async () => {
    root = await tempDir('benchgym-view-page-');
    await writeFixtureRun(path.join(root, 'baseline'), { tasks: 150, samples: 2, longSteps: 150 });
    await writeFixtureRun(path.join(root, 'feedback'), {
      agent: 'feedback',
      tasks: 150,
      samples: 1,
      pricing: { prompt: 2.5, completion: 10 },
      status: (i) => (i % 2 ? 'passed' : 'failed'),
    });
    viewer = await startViewerServer({ runs: new RunStore(await discoverRuns([root])) }, { port: 0 });
    await fs.mkdir(SHOTS, { recursive: true });
    userDataDir = await tempDir('benchgym-view-chromium-');
    // A new, empty profile: launchPersistentContext takes its folder.
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      viewport: { width: 1400, height: 900 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
    page.on('request', (r) => {
      if (!r.url().startsWith(viewer.url) && !r.url().startsWith('data:')) problems.push(`a request off the viewer's server: ${r.url()}`);
    });
  });

  after(async () => {
    await context?.close();
    await viewer?.close();
    await fs.rm(root, { recursive: true, force: true });
    if (userDataDir) await fs.rm(userDataDir, { recursive: true, force: true });
  });

  const shot = (name: string, fullPage = false) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage });
  const rowCount = () => page.locator('#results tbody tr').count();

  test('the run list renders both runs with their figures', async () => {
    await page.goto(viewer.url);
    await page.waitForSelector('table.runs tbody tr');
    assert.equal(await page.locator('table.runs tbody tr').count(), 2);
    const text = await page.locator('table.runs').innerText();
    assert.match(text, /baseline[\s\S]*swe-agent[\s\S]*300 \/ 300/);
    assert.match(text, /feedback[\s\S]*50\.0%/);
    assert.match(text, /n\/a/, 'no pricing: cost n/a');
    await shot('01-run-list');
  });

  test('a run table: the first page, sorting, a status filter and a metadata filter', async () => {
    await page.goto(runLink('baseline', viewer.url));
    await page.waitForSelector('#results tbody tr');
    assert.equal(await rowCount(), 100);
    assert.match(await page.locator('#page-info').innerText(), /1–100 of 300/);
    await shot('02-run-table');

    await page.locator('th[data-key="steps"]').click();
    await page.waitForFunction(() => document.querySelector('th[data-key="steps"]')?.textContent?.includes('▼'));
    const steps = await page.locator('#results tbody tr td:nth-child(6)').allInnerTexts();
    assert.deepEqual(
      steps.map(Number),
      steps.map(Number).sort((a, b) => b - a),
    );

    await page.selectOption('#f-status', 'failed');
    await page.waitForFunction(() => /of \d+ \(filtered/.test(document.querySelector('#page-info')?.textContent ?? ''));
    const statuses = await page.locator('#results tbody .badge').allInnerTexts();
    assert.ok(statuses.length > 0 && statuses.every((s) => s === 'failed'), statuses.join(','));

    // The table is drawn again after the hash changes: wait for the new count, not just the hash.
    const before = await page.locator('#page-info').innerText();
    await page.selectOption('#f-key', 'library');
    await page.selectOption('#f-value', 'lib2');
    await page.waitForFunction(() => location.hash.includes('m.library=lib2'));
    await page.waitForFunction((prev) => (document.querySelector('#page-info')?.textContent ?? '') !== prev, before);
    await page.waitForFunction(() =>
      [...document.querySelectorAll('#results tbody td.task a')].every((a) => /task-\d+/.test(a.textContent ?? '')),
    );
    const tasks = await page.locator('#results tbody td.task').allInnerTexts();
    assert.ok(tasks.length > 0);
    assert.ok(
      tasks.every((t) => Number(t.slice(5)) % 3 === 2),
      `every task is of lib2: ${tasks.slice(0, 5).join(', ')}`,
    );
    await shot('03-run-table-filtered');

    // The filters live in the address: a reload shows the same rows.
    await page.reload();
    await page.waitForSelector('#results tbody tr');
    assert.deepEqual(await page.locator('#results tbody td.task').allInnerTexts(), tasks);
  });

  test('a transcript opens from the table; agent output is shown as text, never run', async () => {
    await page.goto(runLink('baseline', viewer.url));
    await page.waitForSelector('#results tbody tr');
    await page.locator('#results tbody td.task a').nth(2).click();
    await page.waitForSelector('.item.tool');
    assert.match(page.url(), new RegExp(`#/run/baseline/task/${taskName(1)}/0$`));
    await page.waitForSelector('.verdict .failing');
    const verdict = await page.locator('.verdict').innerText();
    assert.match(verdict, /test_add[\s\S]*AssertionError: <script>window.__xss = 1<\/script>/);
    const observation = await page.locator('.item.tool pre.obs').first().innerText();
    assert.match(observation, /<script>window\.__xss = 1<\/script><img src=x onerror="window\.__xss=2">/);
    assert.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined, 'no injected script ran');
    assert.equal(await page.locator('main img, main script').count(), 0, 'no element came from agent output');
    assert.ok(await page.locator('.item.tool pre.diff .dl-add').count(), 'the edit is drawn as a diff');
    assert.ok(await page.locator('.final-diff .dl-del').count(), 'the final diff is drawn');
    assert.ok(await page.locator('.item.tool .fold details').count(), 'the long observation is folded');
    await shot('04-transcript');
    await shot('05-transcript-full', true);
  });

  test('a 150-step transcript loads a page at a time as it is scrolled', async () => {
    await page.goto(sampleLink('baseline', taskName(0), 0, viewer.url));
    await page.waitForSelector('.item.tool');
    const first = await page.locator('.items > .item').count();
    assert.ok(first < 150, `only a first page is drawn (${first})`);
    for (let i = 0; i < 10 && (await page.locator('.items > .item').count()) < 303; i++) {
      await page.locator('.sentinel').scrollIntoViewIfNeeded();
      await page.waitForTimeout(150);
    }
    assert.equal(await page.locator('.items > .item').count(), 303);
    assert.match(await page.locator('.sentinel').innerText(), /^303 entries$/);
  });

  test('two runs side by side on one task', async () => {
    await page.goto(compareLink('baseline', 'feedback', taskName(1), viewer.url));
    await page.waitForSelector('#side-a .item.tool');
    await page.waitForSelector('#side-b .item.tool');
    assert.match(await page.locator('#side-a .side-head').innerText(), /baseline[\s\S]*failed/);
    assert.match(await page.locator('#side-b .side-head').innerText(), /feedback[\s\S]*passed/);
    const boxA = await page.locator('#side-a').boundingBox();
    const boxB = await page.locator('#side-b').boundingBox();
    assert.ok(boxA && boxB && boxB.x > boxA.x + boxA.width - 1, 'the columns stand side by side');
    await shot('06-compare');
  });

  test('nothing failed in the page: no script error, no refused request, nothing off the viewer', () => {
    assert.deepEqual(problems, []);
  });
});
