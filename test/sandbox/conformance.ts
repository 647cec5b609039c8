import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Gym } from '../../src/episode/gym.ts';
import { GymError } from '../../src/errors.ts';
import type { SandboxFactory } from '../../src/sandbox/types.ts';
import { makeGym, startExample, testContext, waitFor } from '../helpers.ts';
import { EXAMPLES_DIR } from '../../envs/examples/index.ts';

/**
 * A backend the conformance suite runs over: how to get its factory (none: the local backend
 * makeGym builds), and why it cannot run here.
 */
export interface ConformanceBackend {
  /** The name its sandboxes report (Sandbox.backend). */
  name: string;
  skip: () => Promise<string | null>;
  factory: () => SandboxFactory | undefined | Promise<SandboxFactory | undefined>;
  /**
   * Its commands run on this machine as the local backend's do: without bubblewrap they share the
   * host's network and pid namespace, so the checks that need either are skipped there.
   */
  onHost?: boolean;
}

/**
 * Python that kills every process it may signal (kill -9 -1, then every pid in /proc), then
 * itself: code under test that tries to end the sandbox scoring it.
 */
const KILL_EVERYTHING = `import os as _os, signal as _signal
def _kill_everything():
    me = _os.getpid()
    try:
        _os.kill(-1, _signal.SIGKILL)
    except OSError:
        pass
    for name in _os.listdir('/proc'):
        if name.isdigit() and int(name) != me:
            try:
                _os.kill(int(name), _signal.SIGKILL)
            except OSError:
                pass
    _os.kill(me, _signal.SIGKILL)
_kill_everything()
`;

/** The shell version, for run_command: ends every process it may, save itself. */
const KILL_EVERYTHING_SH =
  'kill -9 -1; for p in /proc/[0-9]*; do n=${p#/proc/}; [ "$n" = $$ ] || kill -9 "$n" 2>/dev/null; done; echo done';

/**
 * A local sandbox whose commands share the host's pid namespace with a uid of others' (no
 * bubblewrap, no pid namespace per command): kill -9 -1 there would reach every process of
 * that uid on this machine, other people's tests included, so the attacks are not run.
 */
function unconfinedLocal(isolation: string): boolean {
  return !/bubblewrap|pid namespace of its own/.test(isolation);
}

async function callErr(p: Promise<unknown>): Promise<GymError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof GymError, `a GymError, got ${err}`);
    return err;
  }
  assert.fail('the call should have failed');
}

/**
 * What every sandbox backend must do alike, as tests over a gym on `backend`: run
 * `sandboxConformance(kit)` from a test file (conformance.test.ts runs the built-in backends).
 */
export function sandboxConformance(backend: ConformanceBackend): void {
  describe(`sandbox conformance: ${backend.name}`, async () => {
    const skip = await backend.skip();
    if (skip) {
      test(`skipped: ${skip}`, { skip }, () => {});
      return;
    }
    let gym: Gym;
    let cleanup: () => Promise<void>;
    let id: string;
    const ctx = () => testContext();
    const run = async (command: string, timeout_s = 60) =>
      (await gym.callTool('run_command', { command, timeout_s }, { ...ctx(), onOutput: undefined }, id)).data as Record<string, any>;

    before(async () => {
      ({ gym, cleanup } = await makeGym({ sandboxes: await backend.factory() }));
      id = await startExample(gym, 'roman-numerals');
    });
    after(async () => cleanup());

    test('episodes run in sandboxes of this backend', () => {
      assert.equal(gym.sandboxes.backend, backend.name);
      assert.equal(gym.episode(id).sandbox.backend, backend.name);
    });

    test('exit codes, stdout and stderr', async () => {
      const r = await run('echo out; echo err >&2; exit 3');
      assert.equal(r.exitCode, 3);
      assert.equal(r.stdout, 'out\n');
      assert.equal(r.stderr, 'err\n');
      assert.equal(r.timedOut, false);
    });

    test('commands run in the workspace with the task env', async () => {
      const r = await run('ls; python -c "import pytest, sys; print(pytest.__version__)"');
      assert.match(r.stdout, /roman\.py/);
      assert.match(r.stdout, /8\.3\.5/);
    });

    test('a timeout returns partial output in about the time given', async () => {
      const t0 = Date.now();
      const r = await run('echo before; sleep 1000', 2);
      assert.equal(r.timedOut, true);
      assert.match(r.stdout, /before/);
      assert.ok(Date.now() - t0 < 8000, `took ${Date.now() - t0} ms`);
    });

    test('a process ignoring SIGTERM and its setsid child are gone after the timeout', async () => {
      const tag = 700 + Math.floor(Math.random() * 200);
      const r = await run(`trap '' TERM; (setsid sleep ${tag}.5 &); sleep 1000`, 2);
      assert.equal(r.timedOut, true);
      await new Promise((res) => setTimeout(res, 500));
      const left = await run(`ps -eo args | grep -c '^sleep ${tag}.5' || true`);
      assert.equal(left.stdout.trim(), '0');
    });

    test('an output flood is capped while drained', async () => {
      const r = await run("head -c 200000000 /dev/zero | tr '\\0' a", 120);
      assert.equal(r.totalBytes.stdout, 200_000_000);
      assert.ok(r.truncated.stdout > 199_000_000);
      assert.ok(r.stdout.length < 1_000_000);
    });

    test('paths stay inside the workspace, through symlinks too', async () => {
      await run('ln -s / rootlink; ln -s /etc/passwd pw');
      for (const p of ['../../etc/passwd', '/etc/passwd', 'rootlink/etc/passwd', 'pw', '../x']) {
        const e = await callErr(gym.callTool('view_file', { path: p }, ctx(), id));
        assert.equal(e.code, 'PATH_OUTSIDE_WORKSPACE', p);
        const w = await callErr(gym.callTool('create_file', { path: p, content: 'x', overwrite: true }, ctx(), id));
        assert.equal(w.code, 'PATH_OUTSIDE_WORKSPACE', p);
      }
      await run('rm rootlink pw');
    });

    test('file tools, diff and undo behave alike', async () => {
      await gym.callTool('create_file', { path: 'pkg/notes.txt', content: 'alpha\nbeta\n' }, ctx(), id);
      await gym.callTool('edit_file', { path: 'pkg/notes.txt', old_str: 'beta', new_str: 'gamma' }, ctx(), id);
      const viewed = await gym.callTool('view_file', { path: 'pkg/notes.txt' }, ctx(), id);
      assert.match(viewed.text, /2\tgamma/);
      const listed = await gym.callTool('list_dir', { path: '.', depth: 2 }, ctx(), id);
      assert.match(listed.text, /pkg\/\n\s+notes\.txt/);
      const found = await gym.callTool('find_files', { pattern: '**/*.txt' }, ctx(), id);
      assert.deepEqual((found.data as { files: string[] }).files, ['pkg/notes.txt']);
      const searched = await gym.callTool('search', { query: 'gamma' }, ctx(), id);
      assert.match(searched.text, /pkg\/notes\.txt:2: gamma/);
      const diff = (await gym.callTool('get_diff', {}, ctx(), id)).data as { files: string[]; diff: string };
      assert.deepEqual(diff.files, ['pkg/notes.txt']);
      await gym.callTool('undo_edit', { path: 'pkg/notes.txt' }, ctx(), id);
      await gym.callTool('undo_edit', { path: 'pkg/notes.txt' }, ctx(), id);
      assert.equal((await gym.callTool('get_diff', {}, ctx(), id)).text, 'No changes.');
      const e = await callErr(gym.callTool('view_file', { path: 'pkg/notes.txt' }, ctx(), id));
      assert.equal(e.code, 'FILE_NOT_FOUND');
      const under = await callErr(gym.callTool('create_file', { path: 'roman.py/inner.txt', content: 'x' }, ctx(), id));
      assert.equal(under.code, 'NOT_A_DIRECTORY');
    });

    test('readFile with maxBytes refuses a larger file unread, in one call', async () => {
      const sandbox = gym.episode(id).sandbox;
      await sandbox.writeFile('big.txt', 'x'.repeat(5000));
      const err = await callErr(sandbox.readFile('big.txt', { maxBytes: 1000 }));
      assert.equal(err.code, 'FILE_TOO_LARGE');
      assert.equal(err.details?.size, 5000);
      assert.equal((await sandbox.readFile('big.txt', { maxBytes: 5000 })).length, 5000);
      assert.equal((await callErr(sandbox.readFile('.', { maxBytes: 10 }))).code, 'NOT_A_FILE');
      await sandbox.remove('big.txt');
    });

    test('commands have no network', async () => {
      const episode = gym.episode(id);
      if (backend.onHost && !/bubblewrap/.test(episode.sandbox.isolation)) return;
      const server = net.createServer((s) => s.end('hello')).listen(0, '127.0.0.1');
      await new Promise((r) => server.once('listening', r));
      const port = (server.address() as net.AddressInfo).port;
      try {
        const r = await run(`python -c "import socket; socket.create_connection(('127.0.0.1', ${port}), timeout=3); print('CONNECTED')"`);
        assert.doesNotMatch(r.stdout, /CONNECTED/);
        assert.notEqual(r.exitCode, 0);
      } finally {
        server.close();
      }
    });

    test('loopback inside the sandbox works and `localhost` resolves (tests may serve to themselves)', async () => {
      const episode = gym.episode(id);
      if (backend.onHost && !/bubblewrap/.test(episode.sandbox.isolation)) return;
      const r = await run(`python -c "
import socket, threading
srv = socket.socket(); srv.bind(('localhost', 0)); srv.listen(1)
threading.Thread(target=lambda: srv.accept()[0].sendall(b'pong'), daemon=True).start()
print(socket.create_connection(('localhost', srv.getsockname()[1]), timeout=5).recv(4).decode())"`);
      assert.equal(r.stdout.trim(), 'pong', r.stderr);
    });

    test("the sandbox's own host name resolves without DNS (code that looks itself up: cloudmesh's is_local)", async (t) => {
      // The local backend has the host's /etc/hosts, whatever the host put there; the kubelet writes a pod's.
      if (backend.name !== 'docker')
        return t.skip(`the ${backend.name} backend resolves names as ${backend.onHost ? 'the host' : 'the kubelet'} sets them up`);
      const r = await run(`python -c "import socket; print(socket.gethostbyaddr(socket.gethostname())[2])"`);
      assert.equal(r.exitCode, 0, r.stderr);
      assert.match(r.stdout, /'\d+\.\d+\.\d+\.\d+'/);
    });

    const killAll = 'a command that kills every process it may (kill -9 -1, then each pid in /proc) ends only its own: the episode goes on';
    test(killAll, async (t) => {
      const episode = gym.episode(id);
      if (backend.onHost && unconfinedLocal(episode.sandbox.isolation))
        return t.skip(`commands share the host's pid namespace here: ${episode.sandbox.isolation}`);
      const r = await run(KILL_EVERYTHING_SH);
      assert.equal(r.stdout, 'done\n', JSON.stringify(r));
      assert.equal((await run('echo still-usable')).stdout, 'still-usable\n');
      assert.match((await gym.callTool('view_file', { path: 'roman.py' }, ctx(), id)).text, /def /);
      assert.equal(episode.state, 'running');
    });

    const terminal = "a person's terminal is out of the commands' reach: its pty cannot be found, written, read, nor its shell signalled";
    test(terminal, async (t) => {
      const sandbox = gym.episode(id).sandbox;
      if (!sandbox.pty) return t.skip(`the ${backend.name} sandbox has no terminals`);
      if (backend.onHost && unconfinedLocal(sandbox.isolation))
        return t.skip(`commands share the host's pid namespace here: ${sandbox.isolation}`);
      const pty = await sandbox.pty({ cols: 80, rows: 24 });
      let seen = '';
      pty.onData((b) => (seen += b.toString()));
      try {
        pty.write('echo "tty-$((1+1))=$(tty)"\r');
        const tty = (await waitFor(() => seen, /tty-2=(\S+)/))[1]!;
        // The agent looks for the terminal: every pty, the terminal's own device by name, every interactive bash.
        const attack = run(
          [
            'ls -l /dev/pts/',
            `for f in /dev/pts/* ${tty}; do`,
            '  [ "$f" = /dev/pts/ptmx ] && continue',
            '  (printf "spoof-%s\\n" $((6*7)) > "$f") 2>/dev/null && echo "wrote $f"',
            '  (timeout 3 cat "$f" > "/tmp/grab-${f##*/}") 2>/dev/null &',
            'done',
            'for p in /proc/[0-9]*; do',
            '  [ "${p#/proc/}" = $$ ] && continue',
            "  case \"$(tr '\\0' ' ' 2>/dev/null < $p/cmdline)\" in bash\\ --norc*|/bin/bash\\ --norc*) ;; *) continue;; esac",
            '  echo "found ${p#/proc/}"',
            '  for fd in 0 1 2; do (printf "spoof-%s\\n" $((6*7)) > $p/fd/$fd) 2>/dev/null && echo "wrote $p/fd/$fd"; done',
            '  kill -9 ${p#/proc/} 2>/dev/null && echo "killed ${p#/proc/}"',
            'done',
            'sleep 3.5; cat /tmp/grab-* 2>/dev/null; rm -f /tmp/grab-*; echo end',
          ].join('\n'),
        );
        // Meanwhile the person types a line.
        await new Promise((r) => setTimeout(r, 1000));
        pty.write('echo typed-by-a-person-$((3*3))\r');
        const r = await attack;
        assert.match(r.stdout, /end\n$/, JSON.stringify(r));
        assert.doesNotMatch(r.stdout, /wrote|killed|found|typed-by-a-person/, r.stdout);
        await waitFor(() => seen, /typed-by-a-person-9/);
        pty.write('echo alive-$((2+3))\r');
        await waitFor(() => seen, /alive-5/);
        assert.doesNotMatch(seen, /spoof-42/);
      } finally {
        await pty.kill();
      }
    });

    const scorer =
      'a submission whose code kills every process it may while its tests run is scored failed, not error: ' +
      'the scoring sandbox outlives it';
    test(scorer, async (t) => {
      if (backend.onHost && unconfinedLocal(gym.episode(id).sandbox.isolation))
        return t.skip(`commands share the host's pid namespace here: ${gym.episode(id).sandbox.isolation}`);
      const gold = await fs.readFile(path.join(EXAMPLES_DIR, 'tasks', 'roman-numerals', 'solution', 'roman.py'), 'utf8');
      const ep = await startExample(gym, 'roman-numerals');
      // The gold solution, save that importing it ends every process it may: its own tests included.
      await gym.callTool('create_file', { path: 'roman.py', content: KILL_EVERYTHING + gold, overwrite: true }, ctx(), ep);
      const verdict = (await gym.callTool('submit', {}, ctx(), ep)).data as { status: string; reward: number; error?: unknown };
      assert.equal(verdict.status, 'failed', JSON.stringify(verdict));
      assert.equal(verdict.reward, 0);
      assert.equal(verdict.error, undefined);
    });

    test('visible tests report per-test status, submit scores gold 1 and the start state 0', async () => {
      const tests = (await gym.callTool('run_tests', {}, ctx(), id)).data as { counts: Record<string, number> };
      assert.equal(tests.counts.passed, 0);
      assert.ok(tests.counts.failed >= 5);
      const gold = await fs.readFile(path.join(EXAMPLES_DIR, 'tasks', 'roman-numerals', 'solution', 'roman.py'), 'utf8');
      await gym.callTool('create_file', { path: 'roman.py', content: gold, overwrite: true }, ctx(), id);
      const passing = (await gym.callTool('run_tests', {}, ctx(), id)).data as { counts: Record<string, number> };
      assert.equal(passing.counts.failed, 0);
      const verdict = (await gym.callTool('submit', {}, ctx(), id)).data as { reward: number; status: string };
      assert.equal(verdict.reward, 1, JSON.stringify(verdict));
      const untouched = await startExample(gym, 'roman-numerals');
      assert.equal(((await gym.callTool('submit', {}, ctx(), untouched)).data as { reward: number }).reward, 0);
      id = await startExample(gym, 'roman-numerals');
    });
  });

  test(`fork_episode copies a running episode: ${backend.name}`, async (t) => {
    const skip = await backend.skip();
    if (skip) return t.skip(skip);
    const { gym, cleanup } = await makeGym({ sandboxes: await backend.factory() });
    try {
      const ctx = () => ({ ...testContext(), onOutput: undefined });
      const id = await startExample(gym, 'roman-numerals');
      await gym.callTool('create_file', { path: 'notes.txt', content: 'one\n' }, ctx(), id);
      const forked = (await gym.callTool('fork_episode', {}, ctx(), id)).data as { episodeId: string; atStep: number };
      assert.notEqual(forked.episodeId, id);
      // The fork has the same changes and diverges from here on.
      assert.deepEqual(((await gym.callTool('get_diff', {}, ctx(), forked.episodeId)).data as { files: string[] }).files, ['notes.txt']);
      await gym.callTool('edit_file', { path: 'notes.txt', old_str: 'one', new_str: 'two' }, ctx(), forked.episodeId);
      assert.match((await gym.callTool('view_file', { path: 'notes.txt' }, ctx(), id)).text, /1\tone/);
      assert.match((await gym.callTool('view_file', { path: 'notes.txt' }, ctx(), forked.episodeId)).text, /1\ttwo/);
      // The edit history came along: undo in the fork goes back to the created file, then to nothing.
      await gym.callTool('undo_edit', { path: 'notes.txt' }, ctx(), forked.episodeId);
      assert.match((await gym.callTool('view_file', { path: 'notes.txt' }, ctx(), forked.episodeId)).text, /1\tone/);
      const gold = await fs.readFile(path.join(EXAMPLES_DIR, 'tasks', 'roman-numerals', 'solution', 'roman.py'), 'utf8');
      await gym.callTool('create_file', { path: 'roman.py', content: gold, overwrite: true }, ctx(), forked.episodeId);
      assert.equal(((await gym.callTool('submit', {}, ctx(), forked.episodeId)).data as { reward: number }).reward, 1);
      assert.equal(((await gym.callTool('submit', {}, ctx(), id)).data as { reward: number }).reward, 0);
    } finally {
      await cleanup();
    }
  });
}
