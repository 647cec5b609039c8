/**
 * `benchgym run` on GitChameleon: the feedback agent (the paper's error-feedback loop)
 * against a scripted OpenAI-compatible endpoint, over three light v2 problems with two
 * samples each; then `benchgym report` with pass@k by library, type of change and year,
 * and the feedback rounds apart (baseline = passed in round 1, + feedback = later rounds).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { runCli, startCli } from '../../cli/cli.ts';
import { startScriptedOpenAI, type ChatRequest, type ScriptedServer } from '../../agents/scripted_openai.ts';
import { tempDir } from '../../helpers.ts';
import { SKIP_WITHOUT_DATA, V2_DIR } from './data.ts';

/** sympy 1.13 (3.9), jinja2 3.1 (3.10), tqdm 4.28 (3.7): light pins the e2e tests cache too. */
const TASKS = ['187', '156', '323'];

function fenced(code: string): string {
  return `Here is the solution.\n\n\`\`\`python\n${code}\n\`\`\``;
}

describe('benchgym run on GitChameleon (feedback agent, scripted model)', { skip: SKIP_WITHOUT_DATA }, () => {
  let server: ScriptedServer;
  let root: string;
  const gold = new Map<string, string>();
  const starter = new Map<string, string>();

  before(async () => {
    for (const line of (await fs.readFile(path.join(V2_DIR, 'ground_truth_solutions.jsonl'), 'utf8')).split('\n').filter(Boolean)) {
      const row = JSON.parse(line) as { example_id: string; answer: string };
      if (TASKS.includes(String(row.example_id))) gold.set(String(row.example_id), row.answer);
    }
    for (const line of (await fs.readFile(path.join(V2_DIR, 'dataset.jsonl'), 'utf8')).split('\n').filter(Boolean)) {
      const row = JSON.parse(line) as { example_id: string; starting_code: string };
      if (TASKS.includes(String(row.example_id))) starter.set(String(row.example_id), row.starting_code);
    }
    // The model: on sympy it first answers the starter code (failing the visible test), then
    // the reference solution once the error log comes back; on jinja2 it is right at once;
    // on tqdm it never is.
    server = await startScriptedOpenAI((req: ChatRequest) => {
      const prompt = String(req.messages[1]?.content ?? '');
      const id = /sample_(\d+)\.py/.exec(prompt)?.[1] ?? '';
      const round = req.messages.filter((m) => m.role === 'assistant').length + 1;
      if (id === '187') return { content: fenced(round === 1 ? starter.get(id)! : gold.get(id)!) };
      if (id === '156') return { content: fenced(gold.get(id)!) };
      return { content: fenced(`${starter.get(id) ?? ''}\nraise SystemExit(1)\n`) };
    });
    root = await tempDir('benchgym-gitchameleon-run-');
  });
  after(async () => {
    await server?.close();
    if (root) await fs.rm(root, { recursive: true, force: true });
  });

  test('pass@k by library, type of change and year; rounds of feedback reported apart', async () => {
    const out = path.join(root, 'run');
    const run = await runCli(
      [
        'run',
        '--suite',
        `gitchameleon=${V2_DIR}`,
        '--tasks',
        TASKS.join(','),
        '--agent',
        'feedback',
        '--agent-options',
        '{"rounds":2}',
        '--model',
        'scripted',
        '--base-url',
        server.baseURL,
        '--samples',
        '2',
        '--concurrency',
        '2',
        '--out',
        out,
        '--data-dir',
        path.join(root, 'data'),
      ],
      600_000,
    );
    assert.equal(run.code, 0, run.stderr.slice(-3000));
    const records = (await fs.readFile(path.join(out, 'results.jsonl'), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map(
        (l) =>
          JSON.parse(l) as {
            task: string;
            status: string;
            final: boolean;
            rounds?: number;
            passedRound?: number;
            metadata?: Record<string, unknown>;
          },
      );
    const finals = records.filter((r) => r.final);
    assert.equal(finals.length, 6);
    const of = (id: string) => finals.filter((r) => r.task === id);
    assert.deepEqual(
      of('187').map((r) => [r.status, r.passedRound, r.rounds]),
      [
        ['passed', 2, 2],
        ['passed', 2, 2],
      ],
      'sympy: passes after one round of feedback',
    );
    assert.deepEqual(
      of('156').map((r) => [r.status, r.passedRound, r.rounds]),
      [
        ['passed', 1, 1],
        ['passed', 1, 1],
      ],
      'jinja2: passes at once',
    );
    assert.deepEqual(
      of('323').map((r) => [r.status, r.passedRound, r.rounds]),
      [
        ['failed', undefined, 2],
        ['failed', undefined, 2],
      ],
      'tqdm: never',
    );
    assert.equal(of('187')[0]!.metadata?.library, 'sympy');
    // The feedback round carried the visible test's failure back to the model.
    const feedback = server.requests.find((r) => /sample_187\.py/.test(String(r.messages[1]?.content)) && r.messages.length === 4);
    assert.ok(feedback, 'a second round for sympy');
    assert.match(String(feedback.messages[3]!.content), /fails the visible tests \(attempt 1 of 2\)/);

    const report = await startCli(['report', out, '--by', 'library,typeOfChange,releaseYear']).done;
    assert.equal(report.code, 0, report.stderr);
    const md = await fs.readFile(path.join(out, 'report.md'), 'utf8');
    const row = (value: string) => md.split('\n').find((l) => l.startsWith(`| ${value} |`)) ?? '';
    // pass@1 per library: 2/2, 2/2 and 0/2 samples.
    assert.match(row('sympy'), /^\| sympy \| 100\.0%/, md);
    assert.match(row('jinja2'), /^\| jinja2 \| 100\.0%/, md);
    assert.match(row('tqdm'), /^\| tqdm \| 0\.0%/, md);
    assert.match(md, /library/);
    assert.match(md, /typeOfChange/);
    assert.match(md, /releaseYear/);
    // Baseline vs + feedback: two samples first passed in round 1, two in round 2.
    assert.match(md, /\| mean rounds \| visible tests first passed in round 1 \| visible tests first passed in round 2 \|/);
    assert.match(md, /\| 1\.67 \| 2 \| 2 \|/);
  });
});
