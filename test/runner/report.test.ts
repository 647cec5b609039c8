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
import { failureReason, sampleTable } from '../../src/runner/report/tables.ts';
import { runId, sampleLink } from '../../src/protocol/viewer_links.ts';
import { BUILTIN_SUITES } from '../../bin/builtins.ts';

/** The built-in suites' report sections, as `benchgym report` passes them. */
const SECTIONS = BUILTIN_SUITES.flatMap((s) => s.reportSections ?? []);

const CHROMIUM = '/usr/bin/chromium';
/** Where the Chromium tests leave their screenshots, to look at. */
const SHOTS = process.env.BENCHGYM_REPORT_SHOTS ?? path.join(os.tmpdir(), 'report-shots');
const LIBRARIES = ['numpy', 'pandas', 'scipy'];

/** A run directory with made-up results: `rate` is the chance a sample passes. */
async function fakeRun(
  dir: string,
  agent: string,
  model: string,
  opts: { samples: number; rate: number; seed: number; infra?: number; rounds?: boolean; costUsd?: number; taskPrefix?: string },
): Promise<void> {
  const tasks = Array.from({ length: 12 }, (_, i) => `${opts.taskPrefix ?? 'task-'}${String(i).padStart(2, '0')}`);
  const manifest = newManifest({
    suite: 'fake',
    agent,
    model,
    options: {
      dataset: null,
      samples: opts.samples,
      tasks: null,
      maxSteps: null,
      timeLimitMs: null,
      baseURL: null,
      temperature: 0.8,
      maxTokens: null,
      pricing: null,
    },
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
        verdict: {
          reward: passed ? 1 : 0,
          status: passed ? 'passed' : 'failed',
          tests: { passed: 3, failed: passed ? 0 : 1, error: 0, skipped: 0 },
          notes: [],
        },
        submitted: true,
        stopReason: 'submitted',
        steps: 10 + ti,
        ...(opts.rounds ? { rounds: passed ? 1 + (ti % 2) : 3, ...(passed ? { passedRound: 1 + (ti % 2) } : {}) } : {}),
        tokens: { prompt: 1000, completion: 200, total: 1200, calls: 4 },
        costUsd: opts.costUsd ?? 0.0012,
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
          lines.push(
            JSON.stringify({
              ...base,
              attempt,
              final: attempt === 3,
              status: 'error',
              reward: 0,
              infra: true,
              verdict: null,
              submitted: false,
              stopReason: 'error',
              infraError: { code: 'MODEL_UNAVAILABLE', message: 'down', source: 'agent' },
            }),
          );
        }
        continue;
      }
      lines.push(JSON.stringify(base));
    }
  });
  await fs.writeFile(path.join(dir, 'results.jsonl'), lines.join('\n') + '\n');
}

type Box = { x0: number; x1: number; y0: number; y1: number };

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

  test(
    'one run: overall pass@k with intervals, by library, infra failures, ' +
      'cost; errors are samples that did not pass unless --exclude-errors',
    async () => {
      const { md, html } = await writeReport([baseline], baseline, { sections: SECTIONS });
      assert.equal(md, path.join(baseline, 'report.md'));
      assert.equal(html, path.join(baseline, 'report.html'));
      const text = await fs.readFile(md, 'utf8');
      assert.match(
        text,
        /\| run \| tasks \| samples\/task \| samples passed \| pass@1 \[95% CI\] \| pass@5 \[95% CI\] \| infra failures \|/,
      );
      // Two final infrastructure failures (each after two retried attempts): in every denominator, the scored rate beside the headline.
      assert.match(text, /\n- swe-agent · model-a: (\d+)\/60 samples passed \(\d+\.\d%\), 2 errors; over the 58 scored: \d+\.\d%\n/);
      assert.match(
        text,
        new RegExp(
          String.raw`\| swe-agent · model-a \| 12 \| 5 \| \d+\/60 passed \(\d+\.\d%\), 2 errors; over the 58 scored: ` +
            String.raw`\d+\.\d% \| \d+\.\d% \[\d+\.\d%, \d+\.\d%\] \| `,
        ),
      );
      assert.match(text, /## By library\n\n\| library \| pass@1 \| pass@5 \| tasks \|\n\|---\|---\|---\|---\|\n\| numpy \|/);
      assert.match(text, /\| swe-agent · model-a \| 2 \| 4 \| 0 \| MODEL_UNAVAILABLE × 2 \|/);
      assert.match(text, /\| task-09 \| \d\/5 \(1 error\) \|/, 'per task: passed over every sample');
      assert.match(text, /## Cost and tokens/);
      assert.match(text, /Not available: Acc@k counts oracle_context tokens/);
      assert.match(text, /An infrastructure failure \(status "error"\) is a sample that did not pass: it stays in every denominator/);
      const data = reportData(await loadRuns([baseline]));
      const s = data.runs[0]!.summary;
      assert.deepEqual([s.infraFailures, s.samples, s.tasks, s.excludeErrors], [2, 60, 12, false]);
      assert.deepEqual(data.runs[0]!.counts, { passed: s.passedSamples, failed: 58 - s.passedSamples, errors: 2 });

      const old = reportData(await loadRuns([baseline]), { excludeErrors: true });
      const o = old.runs[0]!.summary;
      assert.deepEqual([o.infraFailures, o.samples, o.excludeErrors], [2, 58, true]);
      assert.ok(o.passAtK[1]!.estimate > s.passAtK[1]!.estimate, 'leaving the errors out raises pass@1');
      const oldText = renderMarkdown(old);
      assert.match(
        oldText,
        /\n- swe-agent · model-a: \d+\/58 scored samples passed \(\d+\.\d%\), 2 errors left out; over all 60: \d+\.\d%\n/,
      );
      assert.match(oldText, /\| task-09 \| \d\/4 \(1 error left out\) \|/);
      assert.match(oldText, /left out of every denominator here \(--exclude-errors\)/);
    },
  );

  test('two runs that differ by agent: baseline vs feedback, with a paired difference; by model: model vs model', async () => {
    const agents = reportData(await loadRuns([baseline, feedback]));
    assert.equal(agents.kind, 'agent');
    assert.deepEqual(
      agents.runs.map((r) => r.run.label),
      ['swe-agent', 'feedback'],
    );
    const md = renderMarkdown(agents);
    assert.match(
      md,
      new RegExp(
        String.raw`## Baseline vs feedback: agents compared\n\n- pass@1 of \*\*feedback\*\* minus \*\*swe-agent\*\*: ` +
          String.raw`\+\d+\.\d pp \[[+-]\d+\.\d, [+-]\d+\.\d\] over the 12 tasks`,
      ),
    );
    assert.match(md, /## Feedback rounds/);
    assert.match(md, /\| library \| swe-agent: pass@1 \| swe-agent: pass@5 \| feedback: pass@1 \| feedback: pass@5 \| tasks \|/);

    const models = reportData(await loadRuns([baseline, otherModel]));
    assert.equal(models.kind, 'model');
    assert.deepEqual(
      models.runs.map((r) => r.run.label),
      ['model-a', 'model-b'],
    );
    assert.match(renderMarkdown(models), /## Model vs model/);
  });

  test('without pricing (and no cost from the agent) the cost is n/a, not $0', async () => {
    const unpriced = path.join(root, 'unpriced');
    await fakeRun(unpriced, 'swe-agent', 'model-c', { samples: 1, rate: 0.5, seed: 4, costUsd: 0 });
    const md = renderMarkdown(reportData(await loadRuns([unpriced, baseline])));
    const costs = md.slice(md.indexOf('## Cost and tokens'), md.indexOf('## Per task'));
    assert.match(costs, /\| model-c \| 12 \| 48 \| 12,000 \| 2,400 \| n\/a \| n\/a \|/);
    assert.doesNotMatch(costs, /\$0\.0000/);
    assert.match(costs, /\| model-a \| 64 \| [\d,]+ \| [\d,]+ \| [\d,]+ \| \$0\.07\d\d \| \$0\.00\d\d \|/, 'a run with costs shows them');
  });

  test('per sample: each failure reason (infra error, verdict, stop reason) and a link into the viewer', async () => {
    const data = reportData(await loadRuns([baseline]));
    const md = renderMarkdown(data);
    assert.match(md, /## Per sample\n\nThe links open the run viewer: start it with `benchgym view \S+baseline`/);
    const rows = sampleTable(data);
    assert.deepEqual(rows[0], ['task', 'sample', 'status', 'steps', 'failure reason', 'viewer']);
    assert.equal(rows.length - 1, 60, 'one row per (task, sample)');
    const infra = rows.find((r) => r[2] === 'error')!;
    assert.equal(infra[4], 'infrastructure error MODEL_UNAVAILABLE (agent): down');
    const failed = rows.find((r) => r[2] === 'failed')!;
    assert.equal(failed[4], 'hidden tests: 1 failed, 0 errors of 4');
    assert.equal(rows.find((r) => r[2] === 'passed')![4], '—');
    const link = rows[1]![5] as { text: string; href: string };
    assert.equal(link.href, sampleLink(runId(baseline), String(rows[1]![0]), Number(rows[1]![1])));
    assert.ok(md.includes(`[open](${link.href})`));
    const base = data.runs[0]!.run.results.find((r) => r.status === 'failed')!;
    assert.equal(
      failureReason({
        ...base,
        stopReason: 'step_limit',
        verdict: { ...base.verdict!, failToPass: { passed: 1, failed: 2 }, passToPass: { passed: 5, failed: 0 } },
      }),
      'stopped: step_limit; FAIL_TO_PASS 2 of 3 failing',
    );
    assert.equal(
      failureReason({ ...base, verdict: null, submitted: false, stopReason: 'model_error', agentError: 'HTTP 500' }),
      'stopped: model_error; agent error: HTTP 500; not submitted',
    );
  });

  test('--out: a directory, or a file name whose extension is swapped', () => {
    assert.deepEqual(reportPaths('/x/y'), { md: '/x/y/report.md', html: '/x/y/report.html' });
    assert.deepEqual(reportPaths('/x/cmp.html'), { md: '/x/cmp.md', html: '/x/cmp.html' });
  });

  test('a chart has one bar per (group, series) with a value, and marks missing values', () => {
    const svg = groupedBarChart({
      title: 't',
      groups: ['a', 'b'],
      series: [
        { name: 's1', values: [0.5, undefined] },
        { name: 's2', values: [1, 0] },
      ],
    });
    assert.equal((svg.match(/<rect class="bar"/g) ?? []).length, 3);
    assert.match(svg, /class="na"[^>]*>n\/a</);
  });

  describe(
    'report.html in Chromium',
    { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing (apt-get install chromium; .ci/run installs it)` },
    () => {
      let browser: Browser;
      before(async () => {
        browser = await chromium.launch({
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
        });
      });
      after(async () => {
        await browser?.close();
      });

      for (const n of [3, 5]) {
        test(
          `${n} runs with long names and task ids: legends and labels ` + `do not overlap, tables fit the page, links into the viewer`,
          async () => {
            const dirs: string[] = [];
            for (let i = 0; i < n; i++) {
              const dir = path.join(root, `many-${n}-${i}`);
              await fakeRun(dir, `an-agent-with-a-rather-long-name-${i}-to-test-the-legend-layout`, 'model-a', {
                samples: 2,
                rate: 0.3 + 0.1 * i,
                seed: 10 + i,
                infra: i === 0 ? 1 : 0,
                taskPrefix: 'a-very-long-task-identifier-from-some-benchmark__repository-name__issue-',
              });
              dirs.push(dir);
            }
            const { html } = await writeReport(dirs, path.join(root, `many-${n}.html`), { sections: SECTIONS });
            const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
            try {
              await page.goto(`file://${html}`);
              await page.evaluate(() => document.querySelectorAll('details').forEach((d) => (d.open = true)));
              // A string, not a function: tsx would wrap a function's inner helpers in a __name the page does not have.
              const layout = (await page.evaluate(
                `(() => {
            const box = (e) => { const b = e.getBoundingClientRect(); return { x0: b.left, x1: b.right, y0: b.top, y1: b.bottom }; };
            return {
              charts: [...document.querySelectorAll('svg.chart')].map((svg) => ({ id: svg.id, svg: box(svg), title: ` +
                  `box(svg.querySelector('.title')), legendNames: [...svg.querySelectorAll('text.legend')].map((t) => t.textContent), ` +
                  `legend: [...svg.querySelectorAll('g.legend-item')].map(box), groups: ` +
                  `[...svg.querySelectorAll('text.group')].map(box) })),
              tables: [...document.querySelectorAll('div.scroll')].map((d) => ({ scroll: d.scrollWidth, client: d.clientWidth, head: ` +
                  `d.querySelector('th')?.textContent })),
              pageOverflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
              links: [...document.querySelectorAll('table.samples a')].map((a) => a.getAttribute('href')),
            };
          })()`,
              )) as {
                charts: { id: string; svg: Box; title: Box; legendNames: string[]; legend: Box[]; groups: Box[] }[];
                tables: { scroll: number; client: number; head?: string }[];
                pageOverflow: number;
                links: string[];
              };
              const overlap = (a: Box, b: Box) => a.x0 < b.x1 - 0.5 && b.x0 < a.x1 - 0.5 && a.y0 < b.y1 - 0.5 && b.y0 < a.y1 - 0.5;
              for (const c of layout.charts) {
                assert.equal(c.legend.length, n, `${c.id}: one legend entry per run`);
                assert.equal(new Set(c.legendNames).size, n, `${c.id}: the legend tells the runs apart: ${JSON.stringify(c.legendNames)}`);
                assert.ok(c.title.x1 <= c.svg.x1 + 0.5, `${c.id}: the title fits: ${JSON.stringify([c.title, c.svg])}`);
                for (const [what, boxes] of [
                  ['legend entries', c.legend],
                  ['group labels', c.groups],
                ] as const) {
                  for (let i = 0; i < boxes.length; i++) {
                    const b = boxes[i]!;
                    assert.ok(
                      b.x0 >= c.svg.x0 - 0.5 && b.x1 <= c.svg.x1 + 0.5 && b.y1 <= c.svg.y1 + 0.5,
                      `${c.id}: ${what} ${i} inside the chart: ${JSON.stringify({ b, svg: c.svg })}`,
                    );
                    for (let j = i + 1; j < boxes.length; j++)
                      assert.ok(!overlap(b, boxes[j]!), `${c.id}: ${what} ${i} and ${j} overlap: ${JSON.stringify([b, boxes[j]])}`);
                  }
                }
              }
              for (const t of layout.tables)
                assert.ok(t.scroll <= t.client + 1, `the table headed '${t.head}' fits (${t.scroll} px in ${t.client} px)`);
              assert.ok(layout.pageOverflow <= 0, `the page does not scroll sideways (${layout.pageOverflow} px)`);
              assert.equal(layout.links.length, n * 12 * 2);
              assert.equal(
                layout.links[0],
                sampleLink(runId(dirs[0]!), 'a-very-long-task-identifier-from-some-benchmark__repository-name__issue-00', 0),
              );
              await fs.mkdir(SHOTS, { recursive: true });
              await page.screenshot({ path: path.join(SHOTS, `report-${n}-runs.png`), fullPage: true });
              await page.screenshot({ path: path.join(SHOTS, `report-${n}-runs-top.png`) });
              await (await page.$('#samples'))!.scrollIntoViewIfNeeded();
              await page.screenshot({ path: path.join(SHOTS, `report-${n}-runs-samples.png`) });
              const overall = await page.$('#chart-overall');
              await overall!.screenshot({ path: path.join(SHOTS, `report-${n}-runs-overall.png`) });
            } finally {
              await page.close();
            }
          },
        );
      }

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
                  return {
                    value: Number(r.getAttribute('data-value')),
                    series: r.getAttribute('data-series'),
                    width: box.width,
                    height: box.height,
                  };
                }),
                whiskers: svg.querySelectorAll('path.ci').length,
              })),
            );
            assert.deepEqual(
              charts.map((c) => c.id),
              ['chart-overall', 'chart-by-library'],
            );
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
    },
  );
});
