import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { bubblewrapAvailable, LocalSandboxFactory } from '../../src/sandbox/local/index.ts';
import { DockerSandboxFactory } from '../../src/sandbox/docker/index.ts';
import type { PtySession, Sandbox } from '../../src/sandbox/types.ts';
import { makeGym, startExample, tempDir, waitFor, processesWithMarker } from '../helpers.ts';
import { dockerSkipReason } from './docker/skip.ts';

/** A terminal's output so far, and its exit. */
function watch(pty: PtySession): { output: () => string; exited: Promise<number | null> } {
  let out = '';
  pty.onData((b) => (out += b.toString()));
  return { output: () => out, exited: new Promise((resolve) => pty.onExit(resolve)) };
}

const hasTput = (() => {
  try {
    execFileSync('sh', ['-c', 'command -v tput'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/**
 * What every backend's terminal does: output comes back, the size is the one asked for
 * and follows resize() (stty and, where installed, tput), the exit code is reported.
 * Markers are computed by the shell ($((...))) so the echo of the typed line never matches.
 */
async function roundTrip(sandbox: Sandbox, opts: { tput: 'require' | 'if-installed' }): Promise<void> {
  const pty = await sandbox.pty!({ cols: 100, rows: 30 });
  const { output, exited } = watch(pty);
  pty.write('echo round-$((20+1))-trip\r');
  await waitFor(output, /round-21-trip\r\n/);
  pty.write('echo size-$((1+1)) $(stty size)\r');
  await waitFor(output, /size-2 30 100\r\n/);

  await pty.resize(132, 40);
  pty.write('echo size-$((2+1)) $(stty size)\r');
  await waitFor(output, /size-3 40 132\r\n/);
  if (opts.tput === 'require') {
    pty.write('echo cols-$((3+1)) $(tput cols) $(tput lines)\r');
    await waitFor(output, /cols-4 132 40\r\n/);
  } else {
    pty.write('if command -v tput >/dev/null; then echo cols-$((3+1)) $(tput cols); else echo cols-$((3+1)) 132 no-tput; fi\r');
    await waitFor(output, /cols-4 132( no-tput)?\r\n/);
  }

  pty.write('exit 3\r');
  assert.equal(await exited, 3);
}

async function gone(name: string, value: string, ms = 5000): Promise<number[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const left = await processesWithMarker(value, name);
    if (!left.length || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 100));
  }
}

for (const isolation of ['none', 'bwrap'] as const) {
  describe(`local PTY (isolation ${isolation})`, async () => {
    const skip =
      isolation === 'bwrap' && !(await bubblewrapAvailable()) ? 'bubblewrap is missing or cannot create namespaces here' : undefined;
    const baseDir = await tempDir('benchgym-pty-');
    const factory = new LocalSandboxFactory({
      baseDir,
      isolation: isolation === 'bwrap' && skip ? 'none' : isolation,
      limits: { openFiles: 1234 },
    });
    const sandbox = () => factory.create({ seed: { files: { 'hello.txt': 'hi\n' } }, env: { vars: { FROM_ENV: 'env-value' } } });

    after(async () => {
      await factory.close();
      await fs.rm(baseDir, { recursive: true, force: true });
    });

    test('echo round trip, size and resize (stty, tput), exit code', { skip }, async () => {
      const sb = await sandbox();
      await roundTrip(sb, { tput: hasTput ? 'require' : 'if-installed' });
    });

    test('runs in the workspace with the sandbox environment and limits', { skip }, async () => {
      const sb = await sandbox();
      process.env.BENCHGYM_PTY_HOST_SECRET = 'host-only';
      let pty: PtySession;
      try {
        pty = await sb.pty!({ cols: 80, rows: 24, env: { EXTRA: 'extra-value' } });
      } finally {
        delete process.env.BENCHGYM_PTY_HOST_SECRET;
      }
      const { output, exited } = watch(pty);
      pty.write(
        'echo "pwd=$(pwd) files=$(ls) term=$TERM env=$FROM_ENV extra=$EXTRA secret=[$BENCHGYM_PTY_HOST_SECRET] nofile=$(ulimit -n)"\r',
      );
      const m = await waitFor(output, /pwd=(\S+) files=(\S+) term=(\S+) env=(\S+) extra=(\S+) secret=(\S+) nofile=(\d+)\r\n/);
      assert.equal(m[1], sb.workdir);
      assert.equal(m[2], 'hello.txt');
      assert.equal(m[3], 'xterm-256color');
      assert.equal(m[4], 'env-value');
      assert.equal(m[5], 'extra-value');
      assert.equal(m[6], '[]', 'the host environment is not passed on');
      assert.equal(m[7], '1234', 'the prlimit limits apply');
      if (isolation === 'bwrap') {
        pty.write('touch /usr/benchgym-pty-probe 2>/dev/null && echo probe-$((1+1))=writable || echo probe-$((1+1))=read-only\r');
        await waitFor(output, /probe-2=read-only\r\n/);
        // Private paths (here the sandboxes' base directory) are hidden, save the workspace.
        await fs.writeFile(`${baseDir}/host-secret.txt`, 'secret');
        pty.write(`[ -e ${baseDir}/host-secret.txt ] && echo seen-$((2+2))=yes || echo seen-$((2+2))=no\r`);
        await waitFor(output, /seen-4=no\r\n/);
      }
      pty.write('exit\r');
      assert.equal(await exited, 0);
    });

    test('kill() ends the shell and what it started, even after setsid', { skip }, async () => {
      const sb = await sandbox();
      const pty = await sb.pty!({ cols: 80, rows: 24 });
      const { output, exited } = watch(pty);
      pty.write('sleep 300 & setsid sleep 301 & echo "pty-$((1+1))=$BENCHGYM_PTY"\r');
      const marker = (await waitFor(output, /pty-2=(\S+)\r\n/))[1]!;
      assert.match(marker, new RegExp(`^${sb.id}-pty-`));
      assert.ok((await processesWithMarker(marker, 'BENCHGYM_PTY')).length >= 3, 'the shell and both sleeps carry the marker');
      await pty.kill();
      assert.equal(await exited, null, 'a killed terminal has no exit code');
      assert.deepEqual(await gone('BENCHGYM_PTY', marker), []);
    });

    test('a command run by exec() meanwhile does not end the terminal; destroy() does', { skip }, async () => {
      const sb = await sandbox();
      const pty = await sb.pty!({ cols: 80, rows: 24 });
      const { output, exited } = watch(pty);
      pty.write('sleep 302 & echo "pty-$((1+1))=$BENCHGYM_PTY"\r');
      const marker = (await waitFor(output, /pty-2=(\S+)\r\n/))[1]!;
      const r = await sb.exec('echo from-exec');
      assert.equal(r.stdout, 'from-exec\n');
      pty.write('echo still-$((5+5))\r');
      await waitFor(output, /still-10\r\n/);
      await sb.destroy();
      assert.equal(await exited, null);
      assert.deepEqual(await gone('BENCHGYM_PTY', marker), []);
    });
  });
}

test('Docker PTY: echo round trip, size and resize, exit code', async (t) => {
  const skip = await dockerSkipReason();
  if (skip) return t.skip(skip);
  const { gym, cleanup } = await makeGym({ sandboxes: new DockerSandboxFactory({ serverId: `test-${randomBytes(4).toString('hex')}` }) });
  try {
    const id = await startExample(gym, 'roman-numerals');
    await roundTrip(gym.episode(id).sandbox, { tput: 'if-installed' });
  } finally {
    await cleanup();
  }
});
