/** benchgym run's checks before any episode: the model endpoint, the agent's options, the selection flags. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import { existsSync, promises as fs } from 'node:fs';
import { startScriptedOpenAI } from '../agents/scripted_openai.ts';
import { TEST_CACHE_DIR, tempDir } from '../helpers.ts';
import { startCli } from './cli.ts';

let root: string;
before(async () => {
  root = await tempDir('benchgym-cli-checks-');
});
after(() => fs.rm(root, { recursive: true, force: true }));

/** The environment without any model endpoint or key configured. */
function bareEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  for (const k of ['OPENAI_BASE_URL', 'OPENAI_API_KEY', 'BENCHGYM_API_KEY']) if (!(k in extra)) delete env[k];
  return env;
}

const common = () => ['--data-dir', path.join(root, 'data'), '--cache-dir', TEST_CACHE_DIR];
const run = (args: string[], env = bareEnv()) => startCli(['run', '--suite', 'examples', ...args, ...common()], 300_000, env).done;

test('run with no endpoint configured says so and stops before any episode', async () => {
  const out = path.join(root, 'none');
  const r = await run(['--agent', 'swe-agent', '--model', 'm', '--out', out]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /benchgym run: MODEL_UNAVAILABLE: no model endpoint is configured: pass --base-url URL \(or \$OPENAI_BASE_URL\)/);
  assert.ok(!existsSync(path.join(out, 'results.jsonl')) && !existsSync(path.join(out, 'run.json')), 'nothing started');
});

test(
  'run against an endpoint that is down fails at once, naming ' + 'the URL; $OPENAI_BASE_URL is the one checked when no --base-url',
  async () => {
    const s = net.createServer();
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    const port = (s.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => s.close(() => resolve()));
    const url = `http://127.0.0.1:${port}/v1`;
    const out = path.join(root, 'down');
    const t0 = Date.now();
    const r = await run(['--agent', 'single-shot', '--model', 'm', '--base-url', url, '--out', out]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`MODEL_UNAVAILABLE: the model endpoint http://127\\.0\\.0\\.1:${port}/v1 is not reachable`));
    assert.ok(Date.now() - t0 < 60_000);
    assert.ok(!existsSync(path.join(out, 'results.jsonl')), 'no episode ran');
    const viaEnv = await run(
      ['--agent', 'single-shot', '--model', 'm', '--out', path.join(root, 'down-env')],
      bareEnv({ OPENAI_BASE_URL: url }),
    );
    assert.equal(viaEnv.code, 2);
    assert.match(viaEnv.stderr, new RegExp(`127\\.0\\.0\\.1:${port}/v1 is not reachable`));
  },
);

test('run against an endpoint that is up checks it once (GET /models) and runs the episodes', async () => {
  const server = await startScriptedOpenAI([{ content: 'I cannot help with that.' }], { models: ['scripted-model'], repeatLast: true });
  try {
    const out = path.join(root, 'up');
    const r = await run(
      ['--agent', 'single-shot', '--model', 'scripted-model', '--base-url', server.baseURL, '--tasks', 'roman-numerals', '--out', out],
      bareEnv({ OPENAI_API_KEY: 'sk-local' }),
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`model endpoint ${server.baseURL.replace(/[.]/g, '\\.')} answers \\(1 models listed\\)`));
    assert.match(r.stdout, /1\/1 results; 0\/1 samples passed/);
    assert.equal(server.requests.length, 1, "one completion: the agent's; the check listed models");
    assert.deepEqual(server.authorizations, ['Bearer sk-local', 'Bearer sk-local']);
  } finally {
    await server.close();
  }
});

test('run refuses unknown agent options by name (with the known ones) and bad selection flags', async () => {
  const unknown = await run([
    '--agent',
    'swe-agent',
    '--model',
    'm',
    '--agent-options',
    '{"max_step": 3}',
    '--out',
    path.join(root, 'opts'),
  ]);
  assert.equal(unknown.code, 2);
  assert.match(
    unknown.stderr,
    /invalid --agent-options for 'swe-agent': unknown option 'max_step' \(known: max_steps, cost_limit_usd, .*system_prompt\)/,
  );
  const replay = await run(['--agent', 'replay', '--agent-options', '{"gold": true}', '--out', path.join(root, 'opts2')]);
  assert.match(
    replay.stderr,
    /invalid --agent-options for 'replay': unknown option 'gold' \(known: predictions, patch, files, goldFiles, goldPatch\)/,
  );
  const rerun = await run(['--agent', 'replay', '--gold', '--rerun-errors', '--out', path.join(root, 'rerun')]);
  assert.equal(rerun.code, 2);
  assert.match(rerun.stderr, /--rerun-errors .* add --resume/);
  const limit = await run(['--agent', 'replay', '--gold', '--limit', '0', '--out', path.join(root, 'limit')]);
  assert.match(limit.stderr, /invalid --limit: '0'/);
});

test('run --gold --limit 2 --shuffle S: two seeded tasks; --resume with only --out keeps them', async () => {
  const out = path.join(root, 'sample');
  const r = await run(['--agent', 'replay', '--gold', '--limit', '2', '--shuffle', 'abc', '--out', out]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /2\/2 results; 2\/2 samples passed/);
  const manifest = JSON.parse(await fs.readFile(path.join(out, 'run.json'), 'utf8')) as {
    taskIds: string[];
    options: { limit: number; shuffle: string };
  };
  assert.equal(manifest.taskIds.length, 2);
  assert.equal(manifest.options.shuffle, 'abc');
  const again = await startCli(['run', '--out', out, '--resume', ...common()], 300_000, bareEnv()).done;
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /2\/2 results \(2 from before the resume\)/);
  const other = await startCli(['run', '--out', out, '--resume', '--shuffle', 'xyz', ...common()], 300_000, bareEnv()).done;
  assert.equal(other.code, 2);
  assert.match(other.stderr, /--resume with different options .*shuffle: "abc" → "xyz"/);
});
