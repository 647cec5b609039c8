import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { RunStore, discoverRuns } from '../../src/viewer/runs.ts';
import { startViewerServer, type RunningViewer } from '../../src/viewer/server.ts';
import { expectGymError, tempDir } from '../helpers.ts';
import { taskName, writeFixtureRun, XSS } from './fixture.ts';

async function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string; body: string; json: any }> {
  const r = await fetch(url, { headers });
  const body = await r.text();
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    json = undefined;
  }
  return { status: r.status, type: r.headers.get('content-type') ?? '', body, json };
}

/** A raw request with any Host header (fetch sets its own). */
function rawGet(port: number, pathName: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: pathName, headers: { host } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .on('error', reject);
  });
}

describe('the viewer API over run directories', () => {
  let root: string;
  let viewer: RunningViewer;
  let base: string;

  before(async () => {
    root = await tempDir('benchgym-view-');
    await writeFixtureRun(path.join(root, 'baseline'), { tasks: 30, samples: 2, longSteps: 120 });
    await writeFixtureRun(path.join(root, 'feedback'), {
      agent: 'feedback',
      tasks: 30,
      samples: 1,
      pricing: { prompt: 1, completion: 2 },
      status: (i) => (i % 2 ? 'passed' : 'failed'),
    });
    const runs = new RunStore(await discoverRuns([root]));
    viewer = await startViewerServer({ runs }, { port: 0 });
    base = viewer.url;
  });
  after(async () => {
    await viewer?.close();
    await fs.rm(root, { recursive: true, force: true });
  });

  test('a directory of runs is found one level down; a directory without runs is refused', async () => {
    assert.deepEqual(
      (await discoverRuns([root])).map((d) => path.basename(d)),
      ['baseline', 'feedback'],
    );
    const empty = await tempDir('benchgym-view-empty-');
    await expectGymError(discoverRuns([empty]), 'INVALID_ARGUMENT', /not a run directory.*holds none/);
    await fs.rm(empty, { recursive: true });
  });

  test(
    'the run list: counts, pass rate over every result (errors did ' + 'not pass) and over the scored ones, cost n/a without pricing',
    async () => {
      const { json } = await get(`${base}api/runs`);
      const [a, b] = json.runs;
      assert.equal(a.id, 'baseline');
      assert.equal(a.results, 60);
      assert.equal(a.expected, 60);
      assert.equal(a.passed + a.failed + a.errors, 60);
      assert.ok(a.errors > 0);
      assert.equal(a.passRate, a.passed / (a.passed + a.failed + a.errors));
      assert.equal(a.scoredPassRate, a.passed / (a.passed + a.failed));
      assert.equal(a.costUsd, null, 'no pricing: no cost');
      assert.equal(b.id, 'feedback');
      assert.equal(typeof b.costUsd, 'number');
      assert.equal(a.complete, true);
    },
  );

  test('a run table pages, sorts and filters by status and by task metadata', async () => {
    const page1 = (await get(`${base}api/runs/baseline/results?limit=25`)).json;
    assert.equal(page1.total, 60);
    assert.equal(page1.matched, 60);
    assert.equal(page1.rows.length, 25);
    assert.deepEqual([page1.rows[0].task, page1.rows[0].sample, page1.rows[1].sample], [taskName(0), 0, 1]);
    const page3 = (await get(`${base}api/runs/baseline/results?limit=25&offset=50`)).json;
    assert.equal(page3.rows.length, 10);
    assert.equal(page3.rows.at(-1).task, taskName(29));

    const bySteps = (await get(`${base}api/runs/baseline/results?sort=steps&dir=desc&limit=500`)).json.rows.map(
      (r: { steps: number }) => r.steps,
    );
    assert.deepEqual(
      bySteps,
      [...bySteps].sort((x, y) => y - x),
    );

    const failed = (await get(`${base}api/runs/baseline/results?status=error&limit=500`)).json;
    assert.ok(failed.matched > 0 && failed.matched < 60);
    assert.ok(
      failed.rows.every(
        (r: { status: string; infraError: string }) => r.status === 'error' && r.infraError.startsWith('SANDBOX_UNAVAILABLE: '),
      ),
    );

    const lib1 = (await get(`${base}api/runs/baseline/results?m.library=lib1&m.level=2&limit=500`)).json;
    assert.equal(lib1.matched, 10, 'tasks 1, 7, 13, 19, 25 (lib1 and level 2) × 2 samples');
    assert.ok(lib1.rows.every((r: { metadata: Record<string, unknown> }) => r.metadata.library === 'lib1' && r.metadata.level === 2));
    const search = (await get(`${base}api/runs/baseline/results?q=TASK-02&limit=500`)).json;
    assert.equal(search.matched, 20);

    const row = page1.rows[0];
    assert.deepEqual(row.failToPass, { passed: 1, failed: 0 });
    assert.deepEqual(row.passToPass, { passed: 1, failed: 0 });
    assert.equal(row.costUsd, null);

    const info = (await get(`${base}api/runs/baseline`)).json;
    assert.deepEqual(
      info.facets.library.map((f: { value: string; count: number }) => [f.value, f.count]),
      [
        ['lib0', 20],
        ['lib1', 20],
        ['lib2', 20],
      ],
    );
    assert.equal(info.options.baseURL, undefined, 'the endpoint address is not shown');
  });

  test('a bad table query is refused naming the parameter; an unknown run is named', async () => {
    const bad = await get(`${base}api/runs/baseline/results?sort=nope`);
    assert.equal(bad.status, 400);
    assert.match(bad.json.error.message, /sort/);
    const big = await get(`${base}api/runs/baseline/results?limit=100000`);
    assert.equal(big.status, 400);
    const unknown = await get(`${base}api/runs/nope`);
    assert.equal(unknown.status, 400);
    assert.match(unknown.json.error.message, /no run 'nope'.*baseline, feedback/);
    const noPair = await get(`${base}api/runs/baseline/tasks/${taskName(0)}/7`);
    assert.equal(noPair.status, 404);
  });

  test(
    "a transcript: the prompt, the model's messages, each tool call " +
      "once (the gym's, whole), the verdict with failing tests and the diff",
    async () => {
      const pair = (await get(`${base}api/runs/baseline/tasks/${taskName(1)}/0`)).json;
      assert.equal(pair.row.task, taskName(1));
      assert.deepEqual(pair.samples, [0, 1]);
      const t = (await get(`${base}api/runs/baseline/tasks/${taskName(1)}/0/items`)).json;
      const kinds = t.items.map((i: { kind: string; tool?: string }) => (i.tool ? `${i.kind}:${i.tool}` : i.kind));
      assert.deepEqual(kinds, [
        'attempt',
        'prompt',
        'assistant',
        'tool:run_command',
        'assistant',
        'tool:edit_file',
        'assistant',
        'tool:view_file',
        'assistant',
        'tool:submit',
        'result',
      ]);
      const run = t.items[3];
      assert.equal(run.step, 1);
      assert.match(run.observation, /line 59/, "the gym's whole observation, not the agent's cut one");
      assert.deepEqual(t.items[5].args, { path: 'lib.py', old_str: 'return a - b', new_str: 'return a + b' });
      assert.equal(t.done, true);
      assert.equal(t.verdict.status, 'failed');
      assert.deepEqual(t.verdict.failing, [{ name: 'test_add', status: 'failed', message: `AssertionError: ${XSS}` }]);
      assert.deepEqual(t.verdict.failToPass, { passed: [], failed: ['test_add'] });
      assert.match(t.verdict.diff, /^\+return a \+ b/m);
    },
  );

  test("a (task, sample) downloads as ATIF: an attachment holding its turns, the gym's observations and the reward", async () => {
    const r = await fetch(`${base}api/runs/baseline/tasks/${taskName(0)}/0/atif`);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-disposition'), `attachment; filename=${taskName(0)}__0__1.json`);
    assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
    const t = (await r.json()) as any;
    assert.equal(t.schema_version, 'ATIF-v1.7');
    assert.deepEqual(
      t.steps.slice(0, 2).map((s: any) => s.source),
      ['system', 'user'],
    );
    assert.equal(t.steps.length, 2 + 120, 'the prompt, then one step per model turn of the long trajectory');
    assert.equal(
      t.steps[2].observation.results[0].content.split('\n').length,
      62,
      "the gym's whole observation, not the agent's 50-character copy",
    );
    assert.equal(t.final_metrics.extra.reward, 1);
    assert.equal((await get(`${base}api/runs/baseline/tasks/${taskName(0)}/0/atif?attempt=7`)).status, 404);
    assert.equal((await get(`${base}api/runs/baseline/tasks/no-such-task/0/atif`)).status, 404);
  });

  test('a long trajectory is read a page at a time', async () => {
    const first = (await get(`${base}api/runs/baseline/tasks/${taskName(0)}/0/items?limit=50`)).json;
    assert.equal(first.total, 3 + 120 * 2, 'attempt, prompt, result and an assistant message and a step per step');
    assert.equal(first.items.length, 50);
    const last = (await get(`${base}api/runs/baseline/tasks/${taskName(0)}/0/items?from=200&limit=50`)).json;
    assert.equal(last.items.length, 43);
    assert.equal(last.items.at(-1).kind, 'result');
    assert.equal(last.items.at(-2).step, 120);
  });

  test('agent output stays data: JSON answers, a page with nothing from a run in it, a CSP without inline scripts', async () => {
    const page = await get(base);
    assert.equal(page.status, 200);
    assert.match(page.type, /text\/html/);
    assert.ok(!page.body.includes('__xss') && !page.body.includes('baseline'), 'the page shell holds no run data');
    const csp = (await fetch(base)).headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline/);
    const items = await get(`${base}api/runs/baseline/tasks/${taskName(1)}/0/items`);
    assert.match(items.type, /application\/json/);
    assert.ok(items.body.includes('\\u003cscript') || items.body.includes('<script'), 'the observation is carried as a JSON string');
    const js = await get(`${base}assets/viewer.js`);
    assert.match(js.type, /javascript/);
    assert.doesNotMatch(js.body, /innerHTML|outerHTML|insertAdjacentHTML|document\.write/, 'the page never parses data as HTML');
    assert.equal((await get(`${base}assets/../../../etc/passwd`)).status, 404);
  });

  test(
    'the access rules of serve: a foreign Host header is refused; ' + 'binding beyond loopback needs a token; a token is checked',
    async () => {
      assert.equal(await rawGet(viewer.port, '/api/runs', `127.0.0.1:${viewer.port}`), 200);
      assert.equal(await rawGet(viewer.port, '/api/runs', 'evil.example'), 403);
      const runs = new RunStore([path.join(root, 'baseline')]);
      await expectGymError(startViewerServer({ runs }, { host: '0.0.0.0', port: 0 }), 'UNAUTHORIZED', /token/);
      const locked = await startViewerServer({ runs }, { port: 0, token: 'sekrit' });
      try {
        assert.equal((await get(`${locked.url}api/runs`)).status, 401);
        assert.equal((await get(`${locked.url}api/runs`, { authorization: 'Bearer sekrit' })).status, 200);
        const page = await get(`${locked.url}?token=sekrit`);
        assert.equal(page.status, 200);
        assert.match(page.body, /assets\/viewer\.js\?token=sekrit/);
      } finally {
        await locked.close();
      }
    },
  );

  test('a run being written: a pair under way shows as running and its transcript grows; results appear on the next request', async () => {
    const dir = path.join(root, 'growing');
    await writeFixtureRun(dir, { tasks: 4, samples: 1 });
    const resultsFile = path.join(dir, 'results.jsonl');
    const all = (await fs.readFile(resultsFile, 'utf8')).trim().split('\n');
    // task-000 is under way: its trajectory is being written, its result line is not there yet.
    await fs.writeFile(resultsFile, all.slice(1).join('\n') + '\n');
    const traj = path.join(dir, 'trajectories', `${taskName(0)}__0.jsonl`);
    const lines = (await fs.readFile(traj, 'utf8')).trim().split('\n');
    const result = lines.pop()!;
    await fs.writeFile(traj, lines.join('\n') + '\n' + result.slice(0, 20));
    const growing = await startViewerServer({ runs: new RunStore([dir]) }, { port: 0 });
    try {
      const before = (await get(`${growing.url}api/runs`)).json.runs[0];
      assert.deepEqual([before.results, before.running, before.complete], [3, 1, false]);
      const running = (await get(`${growing.url}api/runs/growing/results?status=running`)).json.rows;
      assert.deepEqual(
        running.map((r: { task: string; status: string }) => [r.task, r.status]),
        [[taskName(0), 'running']],
      );
      const partial = (await get(`${growing.url}api/runs/growing/tasks/${taskName(0)}/0/items`)).json;
      assert.equal(partial.done, false, 'no result line yet (the last line is still being written)');
      assert.ok(partial.items.some((i: { kind: string }) => i.kind === 'tool'));
      await fs.appendFile(traj, result.slice(20) + '\n');
      const whole = (await get(`${growing.url}api/runs/growing/tasks/${taskName(0)}/0/items`)).json;
      assert.equal(whole.done, true);
      assert.equal(whole.total, partial.total + 1);

      await fs.writeFile(resultsFile, all.join('\n') + '\n');
      const after = (await get(`${growing.url}api/runs`)).json.runs[0];
      assert.deepEqual([after.results, after.running, after.complete], [4, 0, true]);
    } finally {
      await growing.close();
    }
  });
});
