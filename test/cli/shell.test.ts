import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { spawn as spawnPty, type IPty } from 'node-pty';
import { startHttpServer, type RunningServer } from '../../src/server/http.ts';
import { terminalExtension } from '../../src/server/pty.ts';
import { PROJECT_ROOT } from '../../src/project.ts';
import type { Gym } from '../../src/episode/gym.ts';
import { makeGym, startExample, trajectoryRecords, waitFor } from '../helpers.ts';
import { episodePath } from '../../src/protocol/capability.ts';

const BIN = path.join(PROJECT_ROOT, 'bin', 'benchgym.js');

/** Runs `benchgym shell ...` in a local pseudo-terminal, then reports its exit code and the terminal's mode. */
function runShellCli(args: string[]): { term: IPty; output: () => string } {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = `${[process.execPath, BIN, 'shell', ...args].map(quote).join(' ')}; echo "[cli-exit=$?]"; stty -a; sleep 0.2`;
  const env: Record<string, string> = { ...(process.env as Record<string, string>), TERM: 'xterm-256color' };
  delete env.BENCHGYM_TOKEN;
  const term = spawnPty('/bin/bash', ['--norc', '--noprofile', '-c', command], {
    name: 'xterm-256color',
    cols: 100,
    rows: 30,
    cwd: PROJECT_ROOT,
    env,
  });
  let out = '';
  term.onData((d) => (out += d));
  return { term, output: () => out };
}

function exited(term: IPty): Promise<number> {
  return new Promise((resolve) => term.onExit(({ exitCode }) => resolve(exitCode)));
}

describe('benchgym shell', () => {
  let gym: Gym;
  let dataDir: string;
  let cleanup: () => Promise<void>;
  let server: RunningServer;

  before(async () => {
    ({ gym, dataDir, cleanup } = await makeGym());
    server = await startHttpServer(gym, { port: 0, extensions: [terminalExtension()] });
  });

  after(async () => {
    await server.close();
    await cleanup();
  });

  test('starts an episode for a task id, forwards keys and resizes, exits with the remote exit code, restores the terminal', async () => {
    const { term, output } = runShellCli(['roman-numerals', '--url', server.url]);
    const done = exited(term);
    try {
      const episodeId = (await waitFor(output, /started episode (ep-[0-9a-f]{16}) \(examples\/roman-numerals\)/))[1]!;
      assert.equal(gym.episode(episodeId).state, 'running');
      await waitFor(output, /connected to ep-[0-9a-f]{16} \(Ctrl-\] detaches\)/);

      term.write('echo hi-shell\r');
      await waitFor(output, /\rhi-shell\r\n/);
      term.write('stty size; ls\r');
      await waitFor(output, /\r30 100\r\n/);
      await waitFor(output, /roman\.py/);

      // SIGWINCH in the CLI → a resize message → the remote terminal's size.
      term.resize(120, 40);
      const deadline = Date.now() + 10_000;
      while (!/\r40 120\r\n/.test(output())) {
        assert.ok(Date.now() < deadline, `the remote size never became 40 120: ${JSON.stringify(output().slice(-400))}`);
        term.write('stty size\r');
        await new Promise((r) => setTimeout(r, 300));
      }

      term.write('exit 7\r');
      await waitFor(output, /\[cli-exit=(\d+)\]/);
      await done;
      const out = output();
      if (process.env.BENCHGYM_SHOW_TERMINAL) process.stderr.write(JSON.stringify(out) + '\n');
      assert.match(out, /\[cli-exit=7\]/, 'the CLI exits with the remote exit code');
      // The remote shell's own "exit" is the last thing before the CLI ends: nothing else printed.
      assert.match(out, /\rexit\r\n\[cli-exit=7\]/);
      assert.doesNotMatch(out, /benchgym shell: (?!started|connected)/);
      const mode = out.slice(out.indexOf('[cli-exit=7]'));
      assert.match(mode, /(^|\s)icanon(\s|;|$)/m, 'canonical mode is back');
      assert.match(mode, /(^|\s)echo(\s|;|$)/m, 'echo is back');
      assert.match(mode, /(^|\s)isig(\s|;|$)/m, 'signals are back');
      assert.match(mode, /(^|\s)opost(\s|;|$)/m, 'output processing is back');

      // The shell is gone, the episode is not; the typed lines are in its trajectory.
      assert.equal(gym.episode(episodeId).state, 'running');
      await gym.episode(episodeId).trajectory.flush();
      const records = await trajectoryRecords(dataDir, episodeId, 'terminal');
      const inputs = records.filter((r) => r.event === 'input').map((r) => r.input);
      assert.deepEqual(inputs.slice(0, 3), ['echo hi-shell', 'stty size; ls', 'stty size']);
      assert.equal(inputs.at(-1), 'exit 7');
      assert.ok(records.some((r) => r.event === 'close' && r.by === 'exit' && r.exitCode === 7));
    } finally {
      term.kill();
    }
  });

  test('Ctrl-] detaches and leaves the episode running', async () => {
    const episodeId = await startExample(gym, 'roman-numerals');
    const { term, output } = runShellCli([episodeId, '--url', server.url]);
    const done = exited(term);
    try {
      await waitFor(output, /connected to ep-/);
      assert.doesNotMatch(output(), /started episode/, 'an episode id attaches, it starts nothing');
      term.write('echo still-$((40+2))\r');
      await waitFor(output, /\rstill-42\r\n/);
      term.write('\x1d');
      await waitFor(output, /\[cli-exit=(\d+)\]/);
      await done;
      const out = output();
      assert.match(out, /\[cli-exit=0\]/);
      assert.match(out, new RegExp(`detached; episode ${episodeId} keeps running`));
      assert.match(out.slice(out.indexOf('[cli-exit=0]')), /(^|\s)icanon(\s|;|$)/m);
      assert.equal(gym.episode(episodeId).state, 'running');
      await gym.episode(episodeId).trajectory.flush();
      const records = await trajectoryRecords(dataDir, episodeId, 'terminal');
      assert.ok(records.some((r) => r.event === 'input' && r.input === 'echo still-$((40+2))'));
      const deadline = Date.now() + 5000;
      for (;;) {
        await gym.episode(episodeId).trajectory.flush();
        if ((await trajectoryRecords(dataDir, episodeId, 'terminal')).some((r) => r.event === 'close' && r.by === 'disconnect')) break;
        assert.ok(Date.now() < deadline, 'the terminal close is recorded');
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      term.kill();
    }
  });

  test("piped input: forwarded, then an end-of-file; the exit code is the last command's", async () => {
    const episodeId = await startExample(gym, 'roman-numerals');
    const child = spawn(process.execPath, [BIN, 'shell', episodeId, '--url', server.url], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b) => (stdout += b));
    child.stderr.on('data', (b) => (stderr += b));
    child.stdin.end('echo piped-$((1+1))\nsleep 1\nfalse\n');
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 1, stderr);
    assert.match(stdout, /piped-2\r\n/);
    assert.doesNotMatch(stderr, /connected|detached/, 'nothing is said when stdin is not a terminal');
    assert.equal(gym.episode(episodeId).state, 'running');
  });

  test("an episode's URL opens its terminal on a server with a token, without the token; a wrong key is refused", async () => {
    const locked = await startHttpServer(gym, { port: 0, token: 'shell-token', extensions: [terminalExtension()] });
    try {
      const episode = gym.episode(await startExample(gym, 'roman-numerals'));
      const env = { ...process.env };
      delete env.BENCHGYM_TOKEN;
      const run = async (...args: string[]) => {
        const child = spawn(process.execPath, [BIN, 'shell', ...args], { stdio: ['pipe', 'pipe', 'pipe'], env });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (b) => (stdout += b));
        child.stderr.on('data', (b) => (stderr += b));
        child.stdin.end('echo by-key-$((2+3))\n');
        const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
        return { code, stdout, stderr };
      };
      const ok = await run(`${locked.url}${episodePath(episode, 'mcp')}`);
      assert.equal(ok.code, 0, ok.stderr);
      assert.match(ok.stdout, /by-key-5\r\n/);
      const wrong = await run(`${locked.url}/episodes/${episode.id}/${'A'.repeat(32)}/mcp`);
      assert.equal(wrong.code, 2);
      assert.match(wrong.stderr, /the server refused the terminal \(HTTP 404\): EPISODE_NOT_FOUND: no episode endpoint at this address/);
      assert.doesNotMatch(wrong.stdout, /by-key/);
      // The operator's terminal (an episode id) still needs the token.
      const operator = await run(episode.id, '--url', locked.url);
      assert.equal(operator.code, 2);
      assert.match(operator.stderr, /HTTP 401/);
    } finally {
      await locked.close();
    }
  });

  test('an unknown episode: a clear error, exit code 2, the terminal untouched', async () => {
    const { term, output } = runShellCli(['ep-0000000000000000', '--url', server.url]);
    await exited(term);
    const out = output();
    assert.match(out, /benchgym shell: EPISODE_NOT_FOUND: no episode 'ep-0000000000000000'/);
    assert.match(out, /\[cli-exit=2\]/);
    assert.match(out.slice(out.indexOf('[cli-exit=2]')), /(^|\s)icanon(\s|;|$)/m);
  });
});
