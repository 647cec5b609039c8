import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { existsSync, promises as fs } from 'node:fs';
import type { ResultRecord } from '../../src/runner/results.ts';
import { PROJECT_ROOT } from '../../src/project.ts';
import { startHttpServer } from '../../src/server/http.ts';
import { startScriptedOpenAI } from '../agents/scripted_openai.ts';
import { TEST_CACHE_DIR, tempDir } from '../helpers.ts';
import { gymWithEndingSandboxes } from '../runner/ending_sandboxes.ts';
import { startCli } from './cli.ts';

const EXAMPLES_TASKS = path.join(PROJECT_ROOT, 'envs', 'examples', 'tasks');

async function lines(file: string): Promise<string[]> {
  const text = await fs.readFile(file, 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean);
}

test('benchgym run, kill -9 midway, --resume: exactly the full set of (task, sample); then benchgym report', async () => {
  const root = await tempDir('benchgym-cli-run-');
  const out = path.join(root, 'run');
  const results = path.join(out, 'results.jsonl');
  const common = ['--data-dir', path.join(root, 'data'), '--cache-dir', TEST_CACHE_DIR];
  const runArgs = [
    'run',
    '--suite',
    'examples',
    '--agent',
    'replay',
    '--gold',
    '--samples',
    '2',
    '--concurrency',
    '4',
    '--out',
    out,
    ...common,
  ];
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
    const other = await startCli([
      ...runArgs.filter((a, i) => !(runArgs[i - 1] === '--samples' || a === '--samples')),
      '--samples',
      '3',
      '--resume',
    ]).done;
    assert.equal(other.code, 2, other.stderr);
    assert.match(other.stderr, /benchgym run: INVALID_ARGUMENT: --resume with different options .*samples: 2 → 3/);
    const noResume = await startCli(runArgs).done;
    assert.equal(noResume.code, 2);
    assert.match(noResume.stderr, /already holds a run .*--resume/);

    const resumed = await startCli([...runArgs, '--resume']).done;
    assert.equal(resumed.code, 0, resumed.stderr);
    const failedLines = (await lines(results)).filter((l) => l.includes('"reward":0') || l.includes('"infraError"'));
    assert.match(
      resumed.stdout,
      /12\/12 results \(\d+ from before the resume\); 12\/12 samples passed \(100\.0%\)\n/,
      `results that did not pass:\n${failedLines.join('\n').slice(0, 6000)}`,
    );
    assert.match(resumed.stderr, /run: 12 episodes, \d+ already done \(resumed\)/);

    const records = (await lines(results)).map(
      (l) => JSON.parse(l) as { task: string; sample: number; attempt: number; final: boolean; status: string; runId: string },
    );
    const finals = records.filter((r) => r.final);
    const keys = finals.map((r) => `${r.task}#${r.sample}`);
    const tasks = [
      'inventory-discount-bug',
      'java-bracket-matcher',
      'median-edge-cases',
      'parse-duration',
      'roman-numerals',
      'semver-pinned',
    ];
    assert.deepEqual([...keys].sort(), tasks.flatMap((t) => [`${t}#0`, `${t}#1`]).sort(), 'the full set');
    assert.equal(new Set(keys).size, keys.length, 'no duplicates');
    assert.equal(new Set(records.map((r) => `${r.task}#${r.sample}#${r.attempt}`)).size, records.length, 'no attempt written twice');
    assert.ok(
      finals.every((r) => r.status === 'passed'),
      'the gold solutions pass',
    );
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
    assert.match(
      md,
      /\| replay · none \| 6 \| 2 \| 12\/12 passed \(100\.0%\) \| 100\.0% \[100\.0%, 100\.0%\] \| 100\.0% \[100\.0%, 100\.0%\] \| 0 \|/,
    );
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
    const gold = await startCli([
      'run',
      '--suite',
      'examples',
      '--agent',
      'swe-agent',
      '--model',
      'm',
      '--gold',
      '--out',
      path.join(root, 'c'),
    ]).done;
    assert.equal(gold.code, 2);
    assert.match(gold.stderr, /--gold .* replay agent/);
    const badTask = await startCli([
      'run',
      '--suite',
      'examples',
      '--agent',
      'replay',
      '--tasks',
      'nope',
      '--out',
      path.join(root, 'd'),
      '--data-dir',
      path.join(root, 'data'),
      '--cache-dir',
      TEST_CACHE_DIR,
    ]).done;
    assert.equal(badTask.code, 2);
    assert.match(badTask.stderr, /TASK_NOT_FOUND: no task 'nope'/);
    const badOptions = await startCli([
      'run',
      '--suite',
      'examples',
      '--agent',
      'replay',
      '--agent-options',
      '{"patch": 3}',
      '--out',
      path.join(root, 'e'),
    ]).done;
    assert.equal(badOptions.code, 2);
    assert.match(badOptions.stderr, /invalid --agent-options for 'replay': patch/);
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
});

/**
 * An agent that launders two of three tasks into infrastructure failures cannot take them out of
 * the count. The real `benchgym run` (the CLI in a child process, swe-agent against a real
 * OpenAI-compatible HTTP server, the scripted one) drives its episodes on a real benchgym server
 * (`--server`) in this process, whose sandboxes end as the laundering happens: since the sandboxes
 * resist `kill -9 -1`, the server's backend (ending_sandboxes.ts) destroys a sandbox from the host
 * as the command starts that killed it before: the agent's `kill -9 -1` in its episode, and the
 * hidden test run of a candidate whose code carries the mark of one that kills the scorer's executor.
 * roman-numerals is solved; parse-duration's candidate code ends its scoring sandbox; median-edge-cases's
 * agent ends its episode's sandbox.
 */
test(
  'benchgym run with an agent that launders two of three tasks: 1/3, with 2 errors (faithful) or 2 failed (strict)',
  { timeout: 900_000 },
  async () => {
    const root = await tempDir('benchgym-cli-launder-');
    const MARK = '# benchgym-test: this code kills the scoring sandbox';
    const roman = await fs.readFile(path.join(EXAMPLES_TASKS, 'roman-numerals', 'solution', 'roman.py'), 'utf8');
    const wrongDuration = `${MARK}\ndef parse_duration(text):\n    return 0\n`;
    // The model's moves per task, one per tool result so far.
    const moves: Record<string, { name: string; arguments: Record<string, unknown> }[]> = {
      'roman.py': [{ name: 'create_file', arguments: { path: 'roman.py', content: roman, overwrite: true } }],
      'duration.py': [{ name: 'create_file', arguments: { path: 'duration.py', content: wrongDuration, overwrite: true } }],
      'stats.py': [{ name: 'run_command', arguments: { command: 'kill -9 -1' } }],
    };
    const model = await startScriptedOpenAI(
      (req) => {
        const prompt = String(req.messages[1]?.content ?? '');
        const file = Object.keys(moves).find((f) => prompt.includes(`\`${f}\``));
        if (!file) return { status: 400, errorMessage: `no script for this prompt: ${prompt.slice(0, 200)}` };
        const step = req.messages.filter((m) => m.role === 'tool').length;
        const call = moves[file]![step] ?? { name: 'submit', arguments: {} };
        return { content: `step ${step}`, tool_calls: [call] };
      },
      { models: ['scripted-model'] },
    );
    const ends = async (role: 'scorer' | 'episode', op: string, arg: string, sandbox: { readFile(p: string): Promise<Buffer> }) => {
      if (op !== 'exec') return false;
      if (role === 'episode') return arg.includes('kill -9 -1');
      // The hidden test run (its JUnit report) of a candidate whose code carries the mark.
      return (
        arg.includes('--junitxml') &&
        (await sandbox.readFile('duration.py').then(
          (b) => b.toString('utf8').includes(MARK),
          () => false,
        ))
      );
    };
    const runWith = async (scoring: 'faithful' | 'strict') => {
      const bed = await gymWithEndingSandboxes(ends, { scoring });
      const server = await startHttpServer(bed.gym, { port: 0, token: 'launder-token' });
      const out = path.join(root, scoring);
      try {
        const env: NodeJS.ProcessEnv = { ...process.env, OPENAI_API_KEY: 'sk-test' };
        delete env.OPENAI_BASE_URL;
        const args = [
          ...[
            'run',
            '--suite',
            'examples',
            '--tasks',
            'roman-numerals,parse-duration,median-edge-cases',
            '--retries',
            '1',
            '--scoring',
            scoring,
            '--out',
            out,
          ],
          ...[
            '--agent',
            'swe-agent',
            '--model',
            'scripted-model',
            '--base-url',
            model.baseURL,
            '--server',
            server.url,
            '--server-token',
            'launder-token',
          ],
          ...['--data-dir', path.join(root, `data-${scoring}`), '--cache-dir', TEST_CACHE_DIR],
        ];
        const r = await startCli(args, 600_000, env).done;
        const records = (await lines(path.join(out, 'results.jsonl'))).map((l) => JSON.parse(l) as ResultRecord);
        const report = await startCli(['report', out]).done;
        return { r, records, report, ended: [...bed.ended] };
      } finally {
        await server.close();
        await bed.cleanup();
      }
    };
    try {
      const faithful = await runWith('faithful');
      const of = (records: ResultRecord[], task: string) => records.filter((x) => x.task === task);
      assert.equal(faithful.r.code, 1, `infrastructure failures exit 1\n${faithful.r.stdout}\n${faithful.r.stderr.slice(-4000)}`);
      assert.match(
        faithful.r.stdout,
        /: 3\/3 results; 1\/3 samples passed \(33\.3%\), 2 errors; over the 1 scored: 100\.0%\n/,
        faithful.r.stderr.slice(-4000),
      );
      assert.deepEqual(
        of(faithful.records, 'roman-numerals').map((x) => [x.status, x.final]),
        [['passed', true]],
      );
      // The candidate's code ended the scoring sandbox twice in each episode's scoring: a faithful error, the episode retried once.
      const duration = of(faithful.records, 'parse-duration');
      assert.deepEqual(
        duration.map((x) => [x.status, x.infra, x.final, x.infraError?.code, x.infraError?.source]),
        [
          ['error', true, false, 'SANDBOX_UNAVAILABLE', 'verdict'],
          ['error', true, true, 'SANDBOX_UNAVAILABLE', 'verdict'],
        ],
      );
      const faithfulNote = /^HARNESS_FAILED_AFTER_CANDIDATE: .*an infrastructure error \(faithful scoring/;
      assert.ok(
        duration.every((x) => x.verdict?.notes.some((n) => faithfulNote.test(n))),
        JSON.stringify(duration.map((x) => x.verdict)),
      );
      const median = of(faithful.records, 'median-edge-cases');
      assert.deepEqual(
        median.map((x) => [x.status, x.infra, x.final, x.infraError?.code, x.infraError?.afterAgentCode]),
        [
          ['error', true, false, 'SANDBOX_UNAVAILABLE', true],
          ['error', true, true, 'SANDBOX_UNAVAILABLE', true],
        ],
      );
      assert.equal(faithful.ended.filter((e) => e.startsWith('scorer exec')).length, 4, faithful.ended.join('\n'));
      assert.equal(faithful.ended.filter((e) => e === 'episode exec: kill -9 -1').length, 2, faithful.ended.join('\n'));
      assert.equal(faithful.report.code, 0, faithful.report.stderr);
      assert.match(
        faithful.report.stdout,
        /^swe-agent · scripted-model: 1\/3 samples passed \(33\.3%\), 2 errors; over the 1 scored: 100\.0%\n/,
      );

      const strict = await runWith('strict');
      assert.equal(strict.r.code, 0, `${strict.r.stdout}\n${strict.r.stderr.slice(-4000)}`);
      assert.match(strict.r.stdout, /: 3\/3 results; 1\/3 samples passed \(33\.3%\)\n/);
      const strictDuration = of(strict.records, 'parse-duration');
      assert.deepEqual(
        strictDuration.map((x) => [x.status, x.infra, x.final]),
        [['failed', false, true]],
        'failed at the first episode: the scorer retried once itself',
      );
      const strictNote = /^HARNESS_FAILED_AFTER_CANDIDATE: .*counted against the solution \(strict scoring\)/;
      assert.ok(
        strictDuration[0]!.verdict?.notes.some((n) => strictNote.test(n)),
        JSON.stringify(strictDuration[0]!.verdict),
      );
      const strictMedian = of(strict.records, 'median-edge-cases');
      assert.deepEqual(
        strictMedian.map((x) => [x.status, x.infra, x.final]),
        [
          ['error', true, false],
          ['failed', false, true],
        ],
      );
      assert.ok(
        strictMedian[1]!.notes?.some((n) => n.startsWith('SANDBOX_FAILED_AFTER_AGENT_CODE: ')),
        JSON.stringify(strictMedian[1]),
      );
      // The report: no final infrastructure failure, one retried attempt, and that retry recovered nothing.
      const md = await fs.readFile(path.join(root, 'strict', 'report.md'), 'utf8');
      assert.match(md, /\| swe-agent · scripted-model \| 0 \| 1 \| 0 \| — \|/);
      assert.match(md, /\| median-edge-cases \| 0 \| failed \| \d+ \| SANDBOX_FAILED_AFTER_AGENT_CODE: /, 'the per-sample reason');
    } finally {
      await model.close();
      await fs.rm(root, { recursive: true, force: true });
    }
  },
);
