import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { existsSync, promises as fs } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { newManifest, writeManifest } from '../../src/runner/manifest.ts';
import { groupedBarChart, loadRuns, reportData, reportPaths, renderMarkdown, writeReport } from '../../src/runner/report.ts';
import { seededRandom } from '../../src/runner/metrics.ts';
import type { ResultRecord } from '../../src/runner/results.ts';
import { tempDir } from '../helpers.ts';
import { BUILTIN_SUITES } from '../../bin/builtins.ts';

/** The built-in suites' report sections, as `benchgym report` passes them. */
const SECTIONS = BUILTIN_SUITES.flatMap((s) => s.reportSections ?? []);

const CHROMIUM = '/usr/bin/chromium';
const LIBRARIES = ['numpy', 'pandas', 'scipy'];

/** A run directory with made-up results: `rate` is the chance a sample passes. */
async function fakeRun(dir: string, agent: string, model: string, opts: { samples: number; rate: number; seed: number; infra?: number; rounds?: boolean }): Promise<void> {
  const tasks = Array.from({ length: 12 }, (_, i) => `task-${String(i).padStart(2, '0')}`);
  const manifest = newManifest({
    suite: 'fake',
    agent,
    model,
    options: { dataset: null, samples: opts.samples, tasks: null, maxSteps: null, timeLimitMs: null, baseURL: null, temperature: 0.8, maxTokens: null, pricing: null },
    taskIds: tasks,
    settings: { concurrency: 4, retries: 2 },
  });
  await writeManifest(dir, manifest);
  const random = seededRandom(opts.seed);
  const lines: string[] = [];
  let infraLeft = opts.infra ?? 0;
  tasks.forEach((task, ti) => {
    for (let sample = 0; sample < opts.samples; sample++) {
      // Harder libraries pass less often.
      const passed = random() < opts.rate * (1 - 0.25 * (ti % 3));
      const base: ResultRecord = {
        runId: manifest.runId,
        suite: 'fake',
        task,
        sample,
        attempt: 1,
        final: true,
        agent,
        model,
        episodeId: `ep-${ti}-${sample}`,
        status: passed ? 'passed' : 'failed',
        reward: passed ? 1 : 0,
        infra: false,
        verdict: { reward: passed ? 1 : 0, status: passed ? 'passed' : 'failed', tests: { passed: 3, failed: passed ? 0 : 1, error: 0, skipped: 0 }, notes: [] },
        submitted: true,
        stopReason: 'submitted',
        steps: 10 + ti,
        ...(opts.rounds ? { rounds: passed ? 1 + (ti % 2) : 3, ...(passed ? { passedRound: 1 + (ti % 2) } : {}) } : {}),
        tokens: { prompt: 1000, completion: 200, total: 1200, calls: 4 },
        costUsd: 0.0012,
        startedAt: new Date().toISOString(),
        endedAt: new Date().toISOString(),
        durations: { startMs: 100, agentMs: 5000, scoringMs: 900, totalMs: 5200 },
        metadata: { language: 'python', kind: 'function', library: LIBRARIES[ti % 3]! },
        trajectory: `trajectories/${task}__${sample}.jsonl`,
        gymTrajectory: null,
      };
      if (infraLeft > 0 && sample === 0 && ti >= 9) {
        infraLeft--;
        // Retried twice, then recorded as an infrastructure failure.
        for (const attempt of [1, 2, 3]) {
          lines.push(JSON.stringify({ ...base, attempt, final: attempt === 3, status: 'error', reward: 0, infra: true, verdict: null, submitted: false, stopReason: 'error', infraError: { code: 'MODEL_UNAVAILABLE', message: 'down', source: 'agent' } }));
        }
        continue;
      }
      lines.push(JSON.stringify(base));
    }
  });
  await fs.writeFile(path.join(dir, 'results.jsonl'), lines.join('\n') + '\n');
}

describe('reports', () => {
  let root: string;
  let baseline: string;
  let feedback: string;
  let otherModel: string;

  before(async () => {
    root = await tempDir('benchgym-report-');
    baseline = path.join(root, 'baseline');
    feedback = path.join(root, 'feedback');
    otherModel = path.join(root, 'other-model');
    await fakeRun(baseline, 'swe-agent', 'model-a', { samples: 5, rate: 0.5, seed: 1, infra: 2 });
    await fakeRun(feedback, 'feedback', 'model-a', { samples: 5, rate: 0.8, seed: 2, rounds: true });
    await fakeRun(otherModel, 'swe-agent', 'model-b', { samples: 5, rate: 0.3, seed: 3 });
  });
  after(async () => {
    await fs.rm(root, { recursive: true, force: true });
  });

  test('one run: overall pass@k with intervals, by library, infra failures, cost', async () => {
    const { md, html } = await writeReport([baseline], baseline, { sections: SECTIONS });
    assert.equal(md, path.join(baseline, 'report.md'));
    assert.equal(html, path.join(baseline, 'report.html'));
    const text = await fs.readFile(md, 'utf8');
    assert.match(text, /\| run \| tasks \| samples\/task \| pass@1 \[95% CI\] \| pass@5 \[95% CI\] \| infra failures \|/);
    assert.match(text, /\| swe-agent · model-a \| 12 \| 4–5 \| \d+\.\d% \[\d+\.\d%, \d+\.\d%\] \| /);
    assert.match(text, /## By library\n\n\| library \| pass@1 \| pass@5 \| tasks \|\n\|---\|---\|---\|---\|\n\| numpy \|/);
    // Two final infrastructure failures, each after two retried attempts, not in any denominator.
    assert.match(text, /\| swe-agent · model-a \| 2 \| 4 \| 0 \| MODEL_UNAVAILABLE × 2 \|/);
    assert.match(text, /## Cost and tokens/);
    assert.match(text, /Not available: Acc@k counts oracle_context tokens/);
    const data = reportData(await loadRuns([baseline]));
    assert.equal(data.runs[0]!.summary.infraFailures, 2);
    assert.equal(data.runs[0]!.summary.samples, 58);
  });

  test('two runs that differ by agent: baseline vs feedback, with a paired difference; by model: model vs model', async () => {
    const agents = reportData(await loadRuns([baseline, feedback]));
    assert.equal(agents.kind, 'agent');
    assert.deepEqual(agents.runs.map((r) => r.run.label), ['swe-agent', 'feedback']);
    const md = renderMarkdown(agents);
    assert.match(md, /## Baseline vs feedback: agents compared\n\n- pass@1 of \*\*feedback\*\* minus \*\*swe-agent\*\*: \+\d+\.\d pp \[[+-]\d+\.\d, [+-]\d+\.\d\] over the 12 tasks/);
    assert.match(md, /## Feedback rounds/);
    assert.match(md, /\| library \| swe-agent: pass@1 \| swe-agent: pass@5 \| feedback: pass@1 \| feedback: pass@5 \| tasks \|/);

    const models = reportData(await loadRuns([baseline, otherModel]));
    assert.equal(models.kind, 'model');
    assert.deepEqual(models.runs.map((r) => r.run.label), ['model-a', 'model-b']);
    assert.match(renderMarkdown(models), /## Model vs model/);
  });

  test('--out: a directory, or a file name whose extension is swapped', () => {
    assert.deepEqual(reportPaths('/x/y'), { md: '/x/y/report.md', html: '/x/y/report.html' });
    assert.deepEqual(reportPaths('/x/cmp.html'), { md: '/x/cmp.md', html: '/x/cmp.html' });
  });

  test('a chart has one bar per (group, series) with a value, and marks missing values', () => {
    const svg = groupedBarChart({ title: 't', groups: ['a', 'b'], series: [{ name: 's1', values: [0.5, undefined] }, { name: 's2', values: [1, 0] }] });
    assert.equal((svg.match(/<rect class="bar"/g) ?? []).length, 3);
    assert.match(svg, /class="na"[^>]*>n\/a</);
  });

  describe('report.html in Chromium', { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing (apt-get install chromium; .ci/run installs it)` }, () => {
    let browser: Browser;
    before(async () => {
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      });
    });
    after(async () => {
      await browser?.close();
    });

    for (const [name, dirs] of [
      ['baseline vs feedback', () => [baseline, feedback]],
      ['model vs model', () => [baseline, otherModel]],
    ] as const) {
      test(`${name}: the charts are drawn, nothing is fetched, a screenshot is taken`, async () => {
        const out = path.join(root, `${name.replace(/\W+/g, '-')}.html`);
        const { html } = await writeReport(dirs(), out, { sections: SECTIONS });
        const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
        const problems: string[] = [];
        page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
        page.on('console', (m) => {
          if (m.type() === 'error') problems.push(`console: ${m.text()}`);
        });
        page.on('request', (r) => {
          if (!r.url().startsWith('file://')) problems.push(`request: ${r.url()}`);
        });
        try {
          await page.goto(`file://${html}`);
          assert.equal(await page.title(), 'benchgym report');
          const charts = await page.evaluate(() =>
            [...document.querySelectorAll('svg.chart')].map((svg) => ({
              id: svg.id,
              title: svg.querySelector('.title')?.textContent,
              bars: [...svg.querySelectorAll('rect.bar')].map((r) => {
                const box = (r as SVGGraphicsElement).getBoundingClientRect();
                return { value: Number(r.getAttribute('data-value')), series: r.getAttribute('data-series'), width: box.width, height: box.height };
              }),
              whiskers: svg.querySelectorAll('path.ci').length,
            })),
          );
          assert.deepEqual(charts.map((c) => c.id), ['chart-overall', 'chart-by-library']);
          assert.equal(charts[0]!.title, name === 'model vs model' ? 'Model vs model' : 'Baseline vs feedback: agents compared');
          for (const chart of charts) {
            // Grouped bars: both runs appear in every chart.
            assert.equal(new Set(chart.bars.map((b) => b.series)).size, 2, JSON.stringify(chart));
            const drawn = chart.bars.filter((b) => b.value > 0);
            assert.ok(drawn.length >= 4, `${chart.id}: bars with values`);
            for (const b of drawn) assert.ok(b.width > 0 && b.height > 0, `${chart.id}: a drawn bar has a size: ${JSON.stringify(b)}`);
            assert.ok(chart.whiskers > 0, 'interval whiskers');
          }
          // The bar heights follow the values: the taller bar has the larger value.
          const overall = charts[0]!.bars.filter((b) => b.value > 0);
          const [lo, hi] = [...overall].sort((a, b) => a.value - b.value).filter((_, i, arr) => i === 0 || i === arr.length - 1);
          assert.ok(hi!.height > lo!.height);

          const shot = path.join(os.tmpdir(), `benchgym-report-${process.pid}-${name.replace(/\W+/g, '-')}.png`);
          await page.screenshot({ path: shot, fullPage: true });
          const png = await fs.readFile(shot);
          assert.ok(png.length > 5000, 'a screenshot was written');
          assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'it is a PNG');
          if (process.env.BENCHGYM_KEEP_SCREENSHOT) process.stderr.write(`screenshot: ${shot}\n`);
          else await fs.rm(shot, { force: true });
          assert.deepEqual(problems, []);
        } finally {
          await page.close();
        }
      });
    }
  });
});
