import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import { bubblewrapAvailable, LocalSandbox, LocalSandboxFactory } from '../../../src/sandbox/local/index.ts';
import { GymError } from '../../../src/errors.ts';
import type { ExecResult } from '../../../src/sandbox/types.ts';
import { expectGymError, tempDir } from '../../helpers.ts';

/** A directory outside /tmp (bubblewrap mounts a private /tmp), so commands in the sandbox see it. */
async function hostDir(prefix: string): Promise<string> {
  const parent = existsSync('/var/tmp') ? '/var/tmp' : os.homedir();
  return fs.mkdtemp(path.join(parent, prefix));
}

/**
 * Swaps two names atomically (renameat2 RENAME_EXCHANGE) until a file `stop` appears: a real
 * directory one moment, a symlink out the next. With `lenient`, a missing name is waited for.
 */
const SWAPPER = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
one, two, lenient = sys.argv[1].encode(), sys.argv[2].encode(), sys.argv[3] == '1'
open('swapping', 'w').close()
n = 0
while not os.path.exists('stop') and n < 5_000_000:
    if libc.renameat2(AT_FDCWD, one, AT_FDCWD, two, RENAME_EXCHANGE) == 0:
        n += 1
    elif not lenient:
        sys.exit('renameat2: ' + os.strerror(ctypes.get_errno()))
print(n)
`;

/** Starts the swapper in the sandbox and waits until it runs; `done` is its command's result. */
async function startSwapper(sb: LocalSandbox, one: string, two: string, lenient: boolean): Promise<{ done: Promise<ExecResult> }> {
  const done = sb.exec(`python3 -c "$SWAPPER" ${one} ${two} ${lenient ? 1 : 0}`, { env: { SWAPPER }, timeoutMs: 500_000 });
  for (let i = 0; i < 200 && !existsSync(path.join(sb.root, 'swapping')); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(existsSync(path.join(sb.root, 'swapping')), 'the swapping loop started');
  return { done };
}

/**
 * Releases whatever FIFOs hold blocked (openers waiting for the other end) for a while, in
 * the background: opening both ends at once never blocks. Keeps a failing run from hanging.
 */
function unblockFifos(fifos: string[]): () => void {
  const script =
    'end=$(( $(date +%s) + 20 )); while [ "$(date +%s)" -lt "$end" ]; do for f; do : 3<>"$f"; done 2>/dev/null; sleep 0.02; done';
  const child = spawn('sh', ['-c', script, 'sh', ...fifos], { stdio: 'ignore' });
  return () => void child.kill('SIGKILL');
}

for (const mode of ['none', 'bwrap'] as const) {
  describe(`local file tools without a check-then-use gap (isolation '${mode}')`, () => {
    let baseDir: string;
    let outside: string;
    let factory: LocalSandboxFactory | undefined;
    let skip: string | false = false;

    before(async () => {
      if (mode === 'bwrap' && !(await bubblewrapAvailable())) skip = 'bubblewrap is missing or cannot create namespaces here';
      baseDir = await tempDir('benchgym-files-');
      outside = await hostDir('benchgym-files-out-');
      factory = new LocalSandboxFactory({ baseDir, isolation: mode, limits: { killGraceMs: 500 } });
    });
    after(async () => {
      await factory?.close();
      await fs.rm(baseDir, { recursive: true, force: true });
      await fs.rm(outside, { recursive: true, force: true });
    });
    const create = async () => (await factory!.create({ seed: { files: { 'README.md': 'hello\n' } } })) as LocalSandbox;

    test('a symlink swapped in while reading and writing never leads outside (2,000 tries each)', { timeout: 540_000 }, async (t) => {
      if (skip) return t.skip(skip);
      const secretDir = path.join(outside, 'race');
      await fs.mkdir(secretDir);
      await fs.writeFile(path.join(secretDir, 'file'), 'SECRET');
      const sb = await create();
      try {
        await sb.writeFile('a/link/file', 'inside');
        await fs.symlink(secretDir, path.join(sb.root, 'a', 'spare'));
        const swapper = await startSwapper(sb, 'a/link', 'a/spare', false);
        let read = 0;
        let written = 0;
        let refused = 0;
        for (let i = 0; i < 2000; i++) {
          const got = await sb.readFile('a/link/file').then(
            (b) => b.toString(),
            (e: unknown) => e,
          );
          if (typeof got === 'string') {
            assert.notEqual(got, 'SECRET', `try ${i}: read the file outside the workspace`);
            read++;
          } else {
            assert.ok(
              got instanceof GymError && ['PATH_OUTSIDE_WORKSPACE', 'FILE_NOT_FOUND'].includes(got.code),
              `try ${i}: ${String(got)}`,
            );
            if (got.code === 'PATH_OUTSIDE_WORKSPACE') refused++;
          }
          const wrote = await sb.writeFile('a/link/file', 'inside').then(
            () => null,
            (e: unknown) => e,
          );
          if (wrote === null) written++;
          else
            assert.ok(
              wrote instanceof GymError && ['PATH_OUTSIDE_WORKSPACE', 'FILE_NOT_FOUND', 'NOT_A_DIRECTORY'].includes(wrote.code),
              `try ${i}: ${String(wrote)}`,
            );
        }
        await sb.writeFile('stop', '');
        const r = await swapper.done;
        assert.equal(r.exitCode, 0, r.stderr);
        assert.ok(Number(r.stdout) > 100, `the link was swapped ${r.stdout.trim()} times`);
        assert.equal(await fs.readFile(path.join(secretDir, 'file'), 'utf8'), 'SECRET', 'nothing was written outside');
        assert.deepEqual(await fs.readdir(secretDir), ['file']);
        // Both sides of the swap were met: the race was real.
        assert.ok(read > 0 && written > 0 && refused > 0, `read ${read}, written ${written}, refused ${refused}`);
      } finally {
        await sb.writeFile('stop', '').catch(() => {});
        await sb.destroy();
      }
    });

    test('a hard link to a file outside is refused for reading and writing', async (t) => {
      if (skip) return t.skip(skip);
      if (mode === 'bwrap')
        return t.skip('commands under bubblewrap cannot link across the workspace mount (EXDEV); the check is the same code');
      const secret = path.join(baseDir, 'secret.txt');
      await fs.writeFile(secret, 'SECRET');
      const sb = await create();
      try {
        await fs.link(secret, path.join(sb.root, 'hl.txt'));
        const e = await expectGymError(sb.readFile('hl.txt'), 'PATH_OUTSIDE_WORKSPACE', /hard link/);
        assert.doesNotMatch(e.message, new RegExp(baseDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), 'no host path in the message');
        assert.match(e.message, /'hl\.txt'/);
        await expectGymError(sb.writeFile('hl.txt', 'owned'), 'PATH_OUTSIDE_WORKSPACE', /hard link/);
        assert.equal(await fs.readFile(secret, 'utf8'), 'SECRET');
      } finally {
        await sb.destroy();
      }
    });

    test('FIFOs are refused before any read, and cannot pin the thread pool', { timeout: 60_000 }, async (t) => {
      if (skip) return t.skip(skip);
      const sb = await create();
      const fifo = path.join(sb.root, 'pipe');
      try {
        const made = await sb.exec('mkfifo pipe && mkdir -p sub && mkfifo sub/pipe2');
        assert.equal(made.exitCode, 0, made.stderr);
        const reads = Array.from({ length: 8 }, () =>
          sb.readFile('pipe').then(
            () => null,
            (e: unknown) => e,
          ),
        );
        const writes = Array.from({ length: 4 }, () =>
          sb.writeFile('sub/pipe2', 'x').then(
            () => null,
            (e: unknown) => e,
          ),
        );
        const t0 = Date.now();
        const normal = await Promise.race([
          sb.readFile('README.md'),
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error('a normal read waited behind the FIFO reads')), 5000)),
        ]);
        assert.equal(normal.toString(), 'hello\n');
        assert.ok(Date.now() - t0 < 5000);
        for (const e of await Promise.all([...reads, ...writes])) {
          assert.ok(e instanceof GymError, `a GymError, got ${String(e)}`);
          assert.equal(e.code, 'NOT_A_FILE');
          assert.match(e.message, /FIFO/);
          assert.match(e.message, /'(sub\/)?pipe2?'/);
        }
        assert.equal((await sb.stat('pipe'))?.type, 'other');
        // start_episode lists the workspace: a FIFO there is listed, never opened.
        const { entries } = await sb.list('.', { depth: 2 });
        assert.ok(entries.some((x) => x.path === 'pipe' && x.type === 'other'));
      } finally {
        const stop = unblockFifos([fifo, path.join(sb.root, 'sub', 'pipe2')]);
        await sb.destroy();
        stop();
      }
    });

    test('sockets and devices are refused, naming the kind', async (t) => {
      if (skip) return t.skip(skip);
      const sb = await create();
      const server = net.createServer();
      try {
        await new Promise<void>((resolve, reject) => server.once('error', reject).listen(path.join(sb.root, 'sock'), resolve));
        await expectGymError(sb.readFile('sock'), 'NOT_A_FILE', /socket/);
        await expectGymError(sb.writeFile('sock', 'x'), 'NOT_A_FILE', /socket/);
        if (mode === 'none' && process.getuid?.() === 0) {
          execFileSync('mknod', [path.join(sb.root, 'null'), 'c', '1', '3']);
          await expectGymError(sb.readFile('null'), 'NOT_A_FILE', /character device/);
          await expectGymError(sb.writeFile('null', 'x'), 'NOT_A_FILE', /character device/);
        }
      } finally {
        server.close();
        await sb.destroy();
      }
    });

    test(
      'removing a tree while a directory in it is swapped for a symlink out never deletes outside (100 tries)',
      { timeout: 540_000 },
      async (t) => {
        if (skip) return t.skip(skip);
        const keep = path.join(outside, 'keep');
        await fs.mkdir(keep, { recursive: true });
        const precious = Array.from({ length: 20 }, (_, i) => `p${i}`);
        for (const name of precious) await fs.writeFile(path.join(keep, name), 'x');
        const sb = await create();
        try {
          const swapper = await startSwapper(sb, 'tree/sub', 'tree/spare', true);
          for (let i = 0; i < 100; i++) {
            // Built beside, then renamed into place: the test itself never writes through the swapped link.
            const stage = path.join(sb.root, 'stage');
            await fs.mkdir(path.join(stage, 'sub'), { recursive: true });
            for (let f = 0; f < 5; f++) await fs.writeFile(path.join(stage, 'sub', `f${f}`), 'x');
            await fs.symlink(keep, path.join(stage, 'spare'));
            // The swapper may run as another uid (a root server under bubblewrap): it renames in here.
            await fs.chmod(stage, 0o777);
            await fs.rename(stage, path.join(sb.root, 'tree'));
            // Under the swapping a removal may give up (a GymError naming the path), never fail otherwise.
            for (let again = 0; again < 5; again++) {
              const e = await sb.remove('tree').then(
                () => null,
                (err: unknown) => err,
              );
              if (e === null) break;
              assert.ok(e instanceof GymError && /'tree'/.test(e.message), `try ${i}: ${String(e)}`);
            }
            assert.equal(await sb.stat('tree'), null);
            assert.deepEqual((await fs.readdir(keep)).sort(), [...precious].sort(), `try ${i}: a file outside was deleted`);
          }
          await sb.writeFile('stop', '');
          const r = await swapper.done;
          assert.equal(r.exitCode, 0, r.stderr);
          assert.ok(Number(r.stdout) > 50, `swapped ${r.stdout.trim()} times`);
        } finally {
          await sb.writeFile('stop', '').catch(() => {});
          await sb.destroy();
        }
      },
    );
  });
}
