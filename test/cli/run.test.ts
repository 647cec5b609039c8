import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { existsSync, promises as fs } from 'node:fs';
import { TEST_CACHE_DIR, tempDir } from '../helpers.ts';
import { startCli } from './cli.ts';

async function lines(file: string): Promise<string[]> {
  const text = await fs.readFile(file, 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean);
}

test('benchgym run, kill -9 midway, --resume: exactly the full set of (task, sample); then benchgym report', async () => {
  const root = await tempDir('benchgym-cli-run-');
  const out = path.join(root, 'run');
  const results = path.join(out, 'results.jsonl');
  const common = ['--data-dir', path.join(root, 'data'), '--cache-dir', TEST_CACHE_DIR];
  const runArgs = ['run', '--suite', 'examples', '--agent', 'replay', '--gold', '--samples', '2', '--concurrency', '4', '--out', out, ...common];
  try {
    // The examples suite has 6 tasks: 12 (task, sample) pairs.
    const first = startCli(runArgs);
    const deadline = Date.now() + 120_000;
    let seen = 0;
    let exited = false;
    void first.done.then(() => (exited = true));
    while (!exited && Date.now() < deadline) {
      seen = (await lines(results)).length;
      if (seen >= 2) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    if (exited) assert.fail(`the run ended before it could be killed: ${(await first.done).stderr}`);
    first.kill('SIGKILL');
    const killed = await first.done;
    assert.equal(killed.signal, 'SIGKILL', `code ${killed.code}, lines ${(await lines(results)).length}: ${killed.stderr.slice(-2000)}`);
    const before = await lines(results);
    assert.ok(before.length >= 2 && before.length < 12, `killed midway: ${before.length} lines`);
    // A write cut short by the kill (appends are whole lines, so make one torn line on purpose).
    await fs.appendFile(results, '{"runId":"run-x","suite":"examples","task":"roman-num');

    // Other options than the run was started with are refused.
    const other = await startCli([...runArgs.filter((a, i) => !(runArgs[i - 1] === '--samples' || a === '--samples')), '--samples', '3', '--resume']).done;
    assert.equal(other.code, 2, other.stderr);
    assert.match(other.stderr, /benchgym run: INVALID_ARGUMENT: --resume with different options .*samples: 2 → 3/);
    const noResume = await startCli(runArgs).done;
    assert.equal(noResume.code, 2);
    assert.match(noResume.stderr, /already holds a run .*--resume/);

    const resumed = await startCli([...runArgs, '--resume']).done;
    assert.equal(resumed.code, 0, resumed.stderr);
    const failedLines = (await lines(results)).filter((l) => l.includes('"reward":0') || l.includes('"infraError"'));
    assert.match(resumed.stdout, /12\/12 results \(\d+ from before the resume\); 12\/12 samples passed \(100\.0%\)\n/, `results that did not pass:\n${failedLines.join('\n').slice(0, 6000)}`);
    assert.match(resumed.stderr, /run: 12 episodes, \d+ already done \(resumed\)/);

    const records = (await lines(results)).map((l) => JSON.parse(l) as { task: string; sample: number; attempt: number; final: boolean; status: string; runId: string });
    const finals = records.filter((r) => r.final);
    const keys = finals.map((r) => `${r.task}#${r.sample}`);
    const tasks = ['inventory-discount-bug', 'java-bracket-matcher', 'median-edge-cases', 'parse-duration', 'roman-numerals', 'semver-pinned'];
    assert.deepEqual([...keys].sort(), tasks.flatMap((t) => [`${t}#0`, `${t}#1`]).sort(), 'the full set');
    assert.equal(new Set(keys).size, keys.length, 'no duplicates');
    assert.equal(new Set(records.map((r) => `${r.task}#${r.sample}#${r.attempt}`)).size, records.length, 'no attempt written twice');
    assert.ok(finals.every((r) => r.status === 'passed'), 'the gold solutions pass');
    assert.equal(new Set(records.map((r) => r.runId)).size, 1, 'one run id across the kill');
    // The lines written before the kill are kept as they were.
    assert.deepEqual((await lines(results)).slice(0, before.length), before);

    // Resuming a finished run with only --out: the options come from run.json; nothing runs.
    const again = await startCli(['run', '--out', out, '--resume', ...common]).done;
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /12\/12 results \(12 from before the resume\)/);
    assert.equal((await lines(results)).length, records.length);

    const report = await startCli(['report', out]).done;
    assert.equal(report.code, 0, report.stderr);
    assert.ok(existsSync(path.join(out, 'report.md')) && existsSync(path.join(out, 'report.html')));
    const md = await fs.readFile(path.join(out, 'report.md'), 'utf8');
    assert.match(md, /\| replay · none \| 6 \| 2 \| 12\/12 passed \(100\.0%\) \| 100\.0% \[100\.0%, 100\.0%\] \| 100\.0% \[100\.0%, 100\.0%\] \| 0 \|/);
    assert.match(md, /## By language/);
    const html = await fs.readFile(path.join(out, 'report.html'), 'utf8');
    assert.match(html, /<svg[^>]*class="chart"/);
    // Self-contained: nothing loaded from anywhere; the only addresses are the links into `benchgym view` on loopback.
    const withoutViewerLinks = html.replace(/http:\/\/127\.0\.0\.1:\d+\/[^"<\s)]*/g, '');
    assert.match(html, /href="http:\/\/127\.0\.0\.1:\d+\/#\/run\//, 'links into the viewer');
    assert.doesNotMatch(withoutViewerLinks, /<script|<link|https?:\/\/(?!www\.w3\.org)/, 'self-contained');

    const missing = await startCli(['report', path.join(root, 'nope')]).done;
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /not a run directory/);
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
});

test('benchgym run refuses bad flags with a clear error', async () => {
  const root = await tempDir('benchgym-cli-run-');
  try {
    const noOut = await startCli(['run', '--suite', 'examples', '--agent', 'replay']).done;
    assert.equal(noOut.code, 2);
    assert.match(noOut.stderr, /missing --out/);
    const noModel = await startCli(['run', '--suite', 'examples', '--agent', 'swe-agent', '--out', path.join(root, 'a')]).done;
    assert.equal(noModel.code, 2);
    assert.match(noModel.stderr, /missing --model/);
    const unknown = await startCli(['run', '--suite', 'examples', '--agent', 'nobody', '--model', 'm', '--out', path.join(root, 'b')]).done;
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown agent 'nobody' \(known: .*replay/);
    const gold = await startCli(['run', '--suite', 'examples', '--agent', 'swe-agent', '--model', 'm', '--gold', '--out', path.join(root, 'c')]).done;
    assert.equal(gold.code, 2);
    assert.match(gold.stderr, /--gold .* replay agent/);
    const badTask = await startCli(['run', '--suite', 'examples', '--agent', 'replay', '--tasks', 'nope', '--out', path.join(root, 'd'), '--data-dir', path.join(root, 'data'), '--cache-dir', TEST_CACHE_DIR]).done;
    assert.equal(badTask.code, 2);
    assert.match(badTask.stderr, /TASK_NOT_FOUND: no task 'nope'/);
    const badOptions = await startCli(['run', '--suite', 'examples', '--agent', 'replay', '--agent-options', '{"patch": 3}', '--out', path.join(root, 'e')]).done;
    assert.equal(badOptions.code, 2);
    assert.match(badOptions.stderr, /invalid --agent-options for 'replay': patch/);
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
});
