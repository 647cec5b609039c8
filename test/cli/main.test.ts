import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { EXAMPLES_DIR } from '../../envs/examples/index.ts';
import { TEST_CACHE_DIR, tempDir } from '../helpers.ts';
import { BIN, runCli } from './cli.ts';

test('benchgym validate --suite examples reports every task valid', async () => {
  const dataDir = await tempDir('benchgym-cli-');
  try {
    const r = await runCli(['validate', '--suite', 'examples', '--json', '--data-dir', dataDir]);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.equal(report.suite, 'examples');
    assert.ok(report.results.length >= 6);
    for (const result of report.results) {
      assert.equal(result.status, 'valid', `${result.taskId}: ${result.reasons.join('; ')}`);
      assert.equal(result.gold.reward, 1);
      assert.equal(result.startState.reward, 0);
    }
  } finally {
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});

test('benchgym validate exits 1 on an invalid task and lists ENV_UNAVAILABLE tasks apart', async () => {
  const dataDir = await tempDir('benchgym-cli-');
  const suite = await tempDir('benchgym-cli-');
  try {
    // A copy of roman-numerals whose "gold" is the start state: invalid.
    const bad = path.join(suite, 'tasks', 'bad-gold');
    await fs.cp(path.join(EXAMPLES_DIR, 'tasks', 'roman-numerals'), bad, { recursive: true });
    await fs.cp(path.join(bad, 'workspace', 'roman.py'), path.join(bad, 'solution', 'roman.py'));
    const taskJson = JSON.parse(await fs.readFile(path.join(bad, 'task.json'), 'utf8'));
    await fs.writeFile(path.join(bad, 'task.json'), JSON.stringify({ ...taskJson, id: 'bad-gold' }));
    // The same task on a Python that no machine has: unavailable, not invalid.
    const old = path.join(suite, 'tasks', 'old-python');
    await fs.cp(path.join(EXAMPLES_DIR, 'tasks', 'roman-numerals'), old, { recursive: true });
    await fs.writeFile(
      path.join(old, 'task.json'),
      JSON.stringify({ ...taskJson, id: 'old-python', env: { kind: 'python', version: '3.2' } }),
    );

    const r = await runCli(['validate', '--suite', `mine=${suite}`, '--data-dir', dataDir]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /invalid\s+bad-gold.*gold solution fails/);
    assert.match(r.stdout, /ENV_UNAVAILABLE old-python: .*Python 3\.2/);
    assert.match(r.stdout, /: 0\/1 valid \(0\.0%\); 1 invalid, 1 unavailable here \(of 2\)/);

    const only = await runCli(['validate', '--suite', `mine=${suite}`, '--tasks', 'old-python', '--data-dir', dataDir]);
    assert.equal(only.code, 1, 'nothing could be checked');
    assert.match(only.stderr, /benchgym validate: nothing was checked: every task's env is unavailable here \(of 1 task\)/);
    assert.match(only.stdout, /ENV_UNAVAILABLE old-python: .*Python 3\.2/);
    const unknown = await runCli(['validate', '--suite', `mine=${suite}`, '--tasks', 'nope', '--data-dir', dataDir]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /TASK_NOT_FOUND.*'nope'/);
  } finally {
    await fs.rm(dataDir, { recursive: true, force: true });
    await fs.rm(suite, { recursive: true, force: true });
  }
});

test(
  'benchgym validate --out: each result written as it is known; a second ' +
    'run resumes from the file, a torn line and errors validated again',
  async () => {
    const dataDir = await tempDir('benchgym-cli-');
    try {
      const out = path.join(dataDir, 'validation.jsonl');
      const first = await runCli([
        'validate',
        '--suite',
        'examples',
        '--tasks',
        'roman-numerals,parse-duration',
        '--concurrency',
        '1',
        '--out',
        out,
        '--data-dir',
        dataDir,
      ]);
      assert.equal(first.code, 0, first.stderr);
      const lines = (await fs.readFile(out, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { taskId: string; status: string; gold: { reward: number } });
      assert.deepEqual(lines.map((l) => [l.taskId, l.status, l.gold.reward]).sort(), [
        ['parse-duration', 'valid', 1],
        ['roman-numerals', 'valid', 1],
      ]);
      // The last line cut short (a run stopped while writing it): that task is validated again, the other is not.
      const [kept, torn] = [lines[0]!.taskId, lines[1]!.taskId];
      const text = await fs.readFile(out, 'utf8');
      await fs.writeFile(out, text.slice(0, text.trimEnd().lastIndexOf('\n') + 1) + `{"taskId":"${torn.slice(0, 5)}`);
      const second = await runCli([
        'validate',
        '--suite',
        'examples',
        '--tasks',
        'roman-numerals,parse-duration',
        '--json',
        '--out',
        out,
        '--data-dir',
        dataDir,
      ]);
      assert.equal(second.code, 0, second.stderr);
      assert.match(second.stderr, new RegExp(`^valid\\s+${kept} \\([\\d.]+ s, resumed from .*validation\\.jsonl\\)$`, 'm'));
      assert.match(second.stderr, new RegExp(`^valid\\s+${torn} \\([\\d.]+ s\\)$`, 'm'));
      assert.deepEqual(
        (JSON.parse(second.stdout) as { results: { taskId: string; status: string }[] }).results.map((r) => [r.taskId, r.status]).sort(),
        [
          ['parse-duration', 'valid'],
          ['roman-numerals', 'valid'],
        ],
      );
      // The torn line stays apart; the new one is whole.
      const after = (await fs.readFile(out, 'utf8')).split('\n');
      assert.equal(after.filter((l) => l.startsWith(`{"taskId":"${torn}"`)).length, 1);
      // An error is not a verdict: validated again.
      await fs.appendFile(
        out,
        JSON.stringify({ taskId: 'roman-numerals', status: 'error', reasons: ['ENV_BUILD_FAILED: x'], durationMs: 1 }) + '\n',
      );
      const third = await runCli(['validate', '--suite', 'examples', '--tasks', 'roman-numerals', '--out', out, '--data-dir', dataDir]);
      assert.match(third.stderr, /^valid\s+roman-numerals \([\d.]+ s\)$/m);
      const misuse = await runCli(['validate', '--suite', 'examples', '--revalidate']);
      assert.equal(misuse.code, 2);
      assert.match(misuse.stderr, /--revalidate needs --out/);
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  },
);

test('benchgym tasks, usage errors and unknown suites', async () => {
  const listed = await runCli(['tasks']);
  assert.equal(listed.code, 0);
  assert.match(listed.stdout, /examples\/inventory-discount-bug\tpython\trepo-patch/);
  assert.match(listed.stdout, /examples\/java-bracket-matcher\tjava/);
  const unknownCommand = await runCli(['frobnicate']);
  assert.equal(unknownCommand.code, 2);
  assert.match(unknownCommand.stderr, /unknown command 'frobnicate'/);
  const badFlag = await runCli(['tasks', '--bogus']);
  assert.equal(badFlag.code, 2);
  assert.match(badFlag.stderr, /--bogus/);
  const badSuite = await runCli(['tasks', '--suite', 'nope']);
  assert.equal(badSuite.code, 2);
  assert.match(badSuite.stderr, /SUITE_NOT_FOUND.*'nope'/);
  const badPort = await runCli(['serve', '--port', 'eighty']);
  assert.equal(badPort.code, 2);
  assert.match(badPort.stderr, /--port/);
});

test('benchgym serve (npm start) serves MCP and stops cleanly on SIGTERM', async () => {
  const dataDir = await tempDir('benchgym-cli-');
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', dataDir, '--cache-dir', TEST_CACHE_DIR], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    let stderr = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr.on('data', (b) => {
        stderr += b;
        const m = /MCP \(Streamable HTTP\): (http:\/\/\S+)\/mcp/.exec(stderr);
        if (m) resolve(m[1]!);
      });
      child.on('exit', () => reject(new Error(`serve exited: ${stderr}`)));
    });
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const health = await (await fetch(`${url}/health`)).json();
    assert.equal(health.ok, true);
    assert.deepEqual(health.suites, ['examples']);
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  } finally {
    child.kill('SIGKILL');
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});

test('benchgym serve exits within seconds of SIGTERM while episodes run sleep 1000 and read FIFOs', async () => {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const dataDir = await tempDir('benchgym-cli-');
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', dataDir, '--cache-dir', TEST_CACHE_DIR], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<{ code: number | null; signal: string | null; at: number }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  const client = new Client({ name: 'sigterm-test', version: '0' });
  try {
    let stderr = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr.on('data', (b) => {
        stderr += b;
        const m = /MCP \(Streamable HTTP\): (http:\/\/\S+)\/mcp/.exec(stderr);
        if (m) resolve(m[1]!);
      });
      child.on('exit', () => reject(new Error(`serve exited: ${stderr}`)));
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
    const call = (name: string, args: Record<string, unknown>) =>
      client.callTool({ name, arguments: args }, undefined, { timeout: 600_000 });
    const start = async () =>
      ((await call('start_episode', { task_id: 'roman-numerals' })).structuredContent as { episodeId: string }).episodeId;
    const episodes = [await start(), await start(), await start(), await start(), await start()];
    for (const ep of episodes) await call('run_command', { episode_id: ep, command: 'mkfifo pipe' });
    void call('run_command', { episode_id: episodes[0], command: 'sleep 1000', timeout_s: 600 }).catch(() => {});
    // FIFO reads with no writer: each may hold a thread of libuv's pool of four, which fs calls at shutdown need.
    for (const ep of episodes.slice(1)) void call('view_file', { episode_id: ep, path: 'pipe' }).catch(() => {});
    await new Promise((r) => setTimeout(r, 1000));
    const t0 = Date.now();
    child.kill('SIGTERM');
    const guard = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const { at } = await exited;
    clearTimeout(guard);
    assert.ok(at - t0 < 8000, `serve exited ${at - t0} ms after SIGTERM`);
  } finally {
    child.kill('SIGKILL');
    await client.close().catch(() => {});
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});

test('benchgym serve on a port in use says so, naming the port, and exits 2', async () => {
  const net = await import('node:net');
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const port = (holder.address() as { port: number }).port;
  const dataDir = await tempDir('benchgym-cli-');
  try {
    const r = await runCli(['serve', '--port', String(port), '--data-dir', dataDir]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use`));
    assert.doesNotMatch(r.stderr, /Cannot read properties/);
  } finally {
    holder.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});

test('benchgym --version prints the version package.json holds', async () => {
  const pkg = JSON.parse(await fs.readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  for (const flag of ['--version', '-V']) {
    const r = await runCli([flag]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `benchgym ${pkg.version}\n`);
  }
});
