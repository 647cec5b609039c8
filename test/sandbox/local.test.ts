import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { bubblewrapAvailable, LocalSandbox, LocalSandboxFactory } from '../../src/sandbox/local/index.ts';
import type { SandboxCreateOptions } from '../../src/sandbox/types.ts';
import { expectGymError, markerSurvivors, pgrep, processesWithMarker, tempDir, waitGone } from '../helpers.ts';

const MODES = ['none', 'bwrap'] as const;
type Mode = (typeof MODES)[number];

/** A directory outside /tmp (bubblewrap mounts a private /tmp), for probing the host file system. */
async function hostDir(prefix: string): Promise<string> {
  const parent = existsSync('/var/tmp') ? '/var/tmp' : os.homedir();
  return fs.mkdtemp(path.join(parent, prefix));
}

/** A sleep duration no other test uses, so pgrep finds only this test's process. */
const uniqueSleep = () => 5000 + Math.floor(Math.random() * 90000);

for (const mode of MODES) {
  describe(`LocalSandbox with isolation '${mode}'`, () => {
    let baseDir: string;
    let factory: LocalSandboxFactory | undefined;
    let usable = false;

    before(async () => {
      usable = mode === 'none' || (await bubblewrapAvailable());
      baseDir = await tempDir('benchgym-lsb-');
      if (usable) factory = new LocalSandboxFactory({ baseDir, isolation: mode, limits: { killGraceMs: 1000 } });
    });
    after(async () => {
      await factory?.close();
      await fs.rm(baseDir, { recursive: true, force: true });
    });

    const create = async (opts: Partial<SandboxCreateOptions> = {}): Promise<LocalSandbox> =>
      (await factory!.create({ seed: { files: { 'README.md': 'hello\n' } }, ...opts })) as LocalSandbox;

    /** A test that needs this mode's sandbox; skipped when bubblewrap cannot run here. */
    const it = (name: string, fn: (t: TestContext) => Promise<void>) =>
      test(name, async (t) => {
        if (!usable) return t.skip('bubblewrap is not usable on this machine');
        await fn(t);
      });

    it('reports exit codes, stdout and stderr separately', async () => {
      const sb = await create();
      try {
        const r = await sb.exec('echo out; echo err >&2; exit 3');
        assert.equal(r.exitCode, 3);
        assert.equal(r.stdout, 'out\n');
        assert.equal(r.stderr, 'err\n');
        assert.equal(r.timedOut, false);
        assert.deepEqual(r.truncated, { stdout: 0, stderr: 0 });
        assert.deepEqual(r.totalBytes, { stdout: 4, stderr: 4 });
        const ok = await sb.exec('true');
        assert.equal(ok.exitCode, 0);
        assert.equal(ok.stdout, '');
      } finally {
        await sb.destroy();
      }
    });

    it('runs in the workspace (or cwd below it), with stdin, extra env and the env PATH first', async () => {
      const binDir = await tempDir('benchgym-envbin-');
      // Readable by everyone, as env directories are (commands may run as an unprivileged uid).
      await fs.chmod(binDir, 0o755);
      await fs.writeFile(path.join(binDir, 'envtool'), '#!/bin/sh\necho from-env-path\n', { mode: 0o755 });
      const sb = await create({ env: { path: [binDir], vars: { FROM_ENV: 'env-var' }, readOnlyPaths: [binDir] } });
      try {
        assert.equal((await sb.exec('pwd')).stdout.trim(), sb.root);
        assert.equal((await sb.exec('cat README.md')).stdout, 'hello\n');
        await sb.writeFile('sub/dir/x.txt', 'x');
        assert.equal((await sb.exec('pwd', { cwd: 'sub/dir' })).stdout.trim(), path.join(sb.root, 'sub', 'dir'));
        assert.equal((await sb.exec('cat', { stdin: 'piped in' })).stdout, 'piped in');
        assert.equal((await sb.exec('echo "$EXTRA $FROM_ENV"', { env: { EXTRA: 'extra-var' } })).stdout, 'extra-var env-var\n');
        assert.equal((await sb.exec('envtool')).stdout, 'from-env-path\n');
        assert.equal((await sb.exec('echo $BENCHGYM_SANDBOX')).stdout.trim(), sb.id);
      } finally {
        await sb.destroy();
        await fs.rm(binDir, { recursive: true, force: true });
      }
    });

    it('refuses a cwd outside the workspace or one that does not exist', async () => {
      const sb = await create();
      try {
        await expectGymError(sb.exec('pwd', { cwd: '../..' }), 'PATH_OUTSIDE_WORKSPACE');
        await expectGymError(sb.exec('pwd', { cwd: 'no/such/dir' }), 'FILE_NOT_FOUND');
        await expectGymError(sb.exec('pwd', { cwd: 'README.md' }), 'NOT_A_DIRECTORY');
      } finally {
        await sb.destroy();
      }
    });

    it('streams output through onOutput as it arrives', async () => {
      const sb = await create();
      try {
        const chunks: [string, string][] = [];
        await sb.exec('echo one; echo two >&2', { onOutput: (c, s) => chunks.push([c, s]) });
        assert.equal(
          chunks
            .filter(([, s]) => s === 'stdout')
            .map(([c]) => c)
            .join(''),
          'one\n',
        );
        assert.equal(
          chunks
            .filter(([, s]) => s === 'stderr')
            .map(([c]) => c)
            .join(''),
          'two\n',
        );
      } finally {
        await sb.destroy();
      }
    });

    it('drains a gigabyte of output in bounded memory, keeping head and tail and counting the rest', async () => {
      const sb = await create();
      try {
        global.gc?.();
        const before = process.memoryUsage().rss;
        let peak = before;
        const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
        let r;
        try {
          r = await sb.exec('head -c 1000000000 /dev/zero; echo done >&2', { timeoutMs: 120_000 });
        } finally {
          clearInterval(sampler);
        }
        peak = Math.max(peak, process.memoryUsage().rss);
        assert.equal(r.exitCode, 0);
        assert.equal(r.timedOut, false);
        assert.equal(r.totalBytes.stdout, 1_000_000_000);
        assert.ok(r.truncated.stdout > 999_000_000, `truncated ${r.truncated.stdout}`);
        assert.ok(r.stdout.length < 300 * 1024, `kept ${r.stdout.length} characters`);
        assert.match(r.stdout, /bytes omitted \(1000000000 in all\)/);
        assert.equal(r.stderr, 'done\n');
        assert.ok(peak - before < 200 * 1024 * 1024, `RSS grew by ${Math.round((peak - before) / 1024 / 1024)} MB`);
      } finally {
        await sb.destroy();
      }
    });

    it('honours maxOutputBytes per call', async () => {
      const sb = await create();
      try {
        const r = await sb.exec('seq 1 100000', { maxOutputBytes: 100 });
        assert.ok(r.stdout.startsWith('1\n2\n3\n'));
        assert.ok(r.stdout.endsWith('99999\n100000\n'));
        assert.equal(r.totalBytes.stdout, 588895);
        assert.equal(r.truncated.stdout, 588895 - 100);
      } finally {
        await sb.destroy();
      }
    });

    it('kills a command at its timeout and returns promptly', async () => {
      const sb = await create();
      try {
        const started = Date.now();
        const r = await sb.exec('echo before; sleep 1000', { timeoutMs: 2000 });
        const elapsed = Date.now() - started;
        assert.equal(r.timedOut, true);
        assert.ok(elapsed < 5000, `took ${elapsed} ms`);
        assert.equal(r.stdout, 'before\n');
        assert.deepEqual(await markerSurvivors(sb.id), []);
      } finally {
        await sb.destroy();
      }
    });

    it('at a timeout also kills a process that ignores SIGTERM and a setsid child holding the pipes', async () => {
      const sb = await create();
      const a = uniqueSleep();
      const b = a + 1;
      try {
        const started = Date.now();
        const r = await sb.exec(`trap '' TERM; setsid sleep ${a} & sleep ${b}`, { timeoutMs: 2000 });
        assert.equal(r.timedOut, true);
        assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
        assert.deepEqual(await markerSurvivors(sb.id), []);
        assert.deepEqual(await waitGone(`sleep ${a}`), []);
        assert.deepEqual(await waitGone(`sleep ${b}`), []);
      } finally {
        await sb.destroy();
      }
    });

    it('at a timeout also kills a setsid child that let go of the pipes and ignores SIGTERM', async () => {
      const sb = await create();
      const a = uniqueSleep();
      try {
        const started = Date.now();
        const r = await sb.exec(`setsid bash -c "trap '' TERM; sleep ${a}" >/dev/null 2>&1 </dev/null & sleep 1000`, { timeoutMs: 2000 });
        assert.equal(r.timedOut, true);
        assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
        assert.deepEqual(await markerSurvivors(sb.id), []);
        assert.deepEqual(await waitGone(`sleep ${a}`), []);
      } finally {
        await sb.destroy();
      }
    });

    it('nothing a command started outlives it, even a detached daemon', async () => {
      const sb = await create();
      const a = uniqueSleep();
      try {
        const r = await sb.exec(`setsid sleep ${a} >/dev/null 2>&1 </dev/null & echo started`);
        assert.equal(r.exitCode, 0);
        assert.equal(r.stdout, 'started\n');
        assert.deepEqual(await markerSurvivors(sb.id), []);
        assert.deepEqual(await waitGone(`sleep ${a}`), []);
      } finally {
        await sb.destroy();
      }
    });

    it('does not pass the host environment to commands', async () => {
      const secret = `s3cr3t-${randomBytes(6).toString('hex')}`;
      process.env.BENCHGYM_TEST_SECRET = secret;
      const sb = await create();
      try {
        const r = await sb.exec('env; echo "value=${BENCHGYM_TEST_SECRET:-unset}"');
        assert.ok(!r.stdout.includes(secret), 'the secret leaked into the command environment');
        assert.match(r.stdout, /^value=unset$/m);
        assert.ok(!/^BENCHGYM_TEST_SECRET=/m.test(r.stdout));
        assert.doesNotMatch(r.stdout, new RegExp(`^HOME=${os.homedir()}$`, 'm'));
      } finally {
        delete process.env.BENCHGYM_TEST_SECRET;
        await sb.destroy();
      }
    });

    it('applies the process rlimits', async () => {
      const limited = new LocalSandboxFactory({ baseDir, isolation: mode, limits: { openFiles: 256, fileSizeBytes: 1024 * 1024 } });
      const sb = (await limited.create({ seed: {} })) as LocalSandbox;
      try {
        assert.equal((await sb.exec('ulimit -n')).stdout.trim(), '256');
        const big = await sb.exec('head -c 2000000 /dev/zero > big.bin');
        assert.notEqual(big.exitCode, 0);
        assert.ok((await sb.stat('big.bin'))!.size <= 1024 * 1024);
      } finally {
        await limited.close();
      }
    });

    it('cancels a running command through its AbortSignal', async () => {
      const sb = await create();
      try {
        const ac = new AbortController();
        const started = Date.now();
        setTimeout(() => ac.abort(), 300);
        await expectGymError(sb.exec('sleep 1000', { signal: ac.signal }), 'CANCELLED');
        assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
        assert.deepEqual(await markerSurvivors(sb.id), []);
        await expectGymError(sb.exec('sleep 1000', { signal: AbortSignal.abort() }), 'CANCELLED');
        // The sandbox stays usable after a cancellation.
        assert.equal((await sb.exec('echo still here')).stdout, 'still here\n');
      } finally {
        await sb.destroy();
      }
    });

    it('destroy kills what still runs and removes the directory', async () => {
      const sb = await create();
      const dir = path.dirname(sb.root);
      const a = uniqueSleep();
      const running = sb.exec(`sleep ${a}`, { timeoutMs: 600_000 });
      running.catch(() => {});
      const deadline = Date.now() + 5000;
      while (!(await processesWithMarker(sb.id)).length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.ok((await processesWithMarker(sb.id)).length > 0, 'the command did not start');
      await sb.destroy();
      assert.equal(existsSync(dir), false);
      const r = await running;
      assert.equal(r.exitCode === 0, false);
      assert.deepEqual(await markerSurvivors(sb.id), []);
      assert.deepEqual(await waitGone(`sleep ${a}`), []);
      await expectGymError(sb.exec('true'), 'SANDBOX_UNAVAILABLE');
      await expectGymError(sb.readFile('README.md'), 'SANDBOX_UNAVAILABLE');
      await sb.destroy();
    });

    it('factory.close destroys every live sandbox', async () => {
      const closing = new LocalSandboxFactory({ baseDir, isolation: mode });
      const one = (await closing.create({ seed: {} })) as LocalSandbox;
      const two = (await closing.create({ seed: {} })) as LocalSandbox;
      await closing.close();
      assert.equal(existsSync(path.dirname(one.root)), false);
      assert.equal(existsSync(path.dirname(two.root)), false);
    });

    it('reads, writes, lists and removes files, refusing paths outside', async () => {
      const sb = await create();
      try {
        await sb.writeFile('pkg/mod.py', 'x = 1\n');
        await sb.writeFile('pkg/__pycache__/mod.cpython-311.pyc', Buffer.from([0, 1, 2]));
        assert.equal((await sb.readFile('pkg/mod.py')).toString(), 'x = 1\n');
        assert.deepEqual(await sb.stat('pkg'), { type: 'dir', size: (await sb.stat('pkg'))!.size });
        assert.equal((await sb.stat('pkg/mod.py'))!.type, 'file');
        assert.equal(await sb.stat('nope'), null);
        const { entries, truncated } = await sb.list('.', { depth: 3 });
        assert.equal(truncated, false);
        assert.deepEqual(
          entries.map((e) => `${e.type}:${e.path}`),
          ['dir:pkg', 'file:README.md', 'file:pkg/mod.py'],
        );
        assert.equal((await sb.list('.', { depth: 3, limit: 2 })).truncated, true);
        await expectGymError(sb.readFile('nope.txt'), 'FILE_NOT_FOUND');
        await expectGymError(sb.readFile('pkg'), 'NOT_A_FILE');
        await expectGymError(sb.list('README.md'), 'NOT_A_DIRECTORY');
        await expectGymError(sb.writeFile('../escape.txt', 'x'), 'PATH_OUTSIDE_WORKSPACE');
        await expectGymError(sb.readFile('/etc/hostname'), 'PATH_OUTSIDE_WORKSPACE');
        await expectGymError(sb.remove('.'), 'INVALID_ARGUMENT');
        assert.equal(existsSync(path.join(path.dirname(sb.root), 'escape.txt')), false);
        await sb.remove('pkg');
        assert.equal(await sb.stat('pkg'), null);
      } finally {
        await sb.destroy();
      }
    });

    it('writing through a symlink the command made cannot leave the workspace', async () => {
      const sb = await create();
      const outside = await hostDir('benchgym-out-');
      try {
        const r = await sb.exec(`ln -s ${outside}/planted.txt link.txt && ln -s ${outside} dirlink`);
        assert.equal(r.exitCode, 0);
        await expectGymError(sb.writeFile('link.txt', 'owned'), 'PATH_OUTSIDE_WORKSPACE');
        await expectGymError(sb.writeFile('dirlink/new.txt', 'owned'), 'PATH_OUTSIDE_WORKSPACE');
        assert.deepEqual(await fs.readdir(outside), []);
      } finally {
        await sb.destroy();
        await fs.rm(outside, { recursive: true, force: true });
      }
    });

    it('seeds from a directory, skipping caches', async () => {
      const seed = await tempDir('benchgym-seed-');
      await fs.mkdir(path.join(seed, 'pkg', '__pycache__'), { recursive: true });
      await fs.writeFile(path.join(seed, 'pkg', 'a.py'), 'a = 1\n');
      await fs.writeFile(path.join(seed, 'pkg', '__pycache__', 'a.pyc'), 'junk');
      const sb = await create({ seed: { dir: seed, files: { 'extra.txt': 'extra' } } });
      try {
        assert.equal((await sb.readFile('pkg/a.py')).toString(), 'a = 1\n');
        assert.equal((await sb.readFile('extra.txt')).toString(), 'extra');
        assert.equal(await sb.stat('pkg/__pycache__'), null);
      } finally {
        await sb.destroy();
        await fs.rm(seed, { recursive: true, force: true });
      }
    });

    it('diff shows added, changed and deleted files since the baseline, ignoring caches', async () => {
      const sb = await create({ seed: { files: { 'keep.txt': 'same\n', 'change.py': 'x = 1\n', 'gone.txt': 'bye\n' } } });
      try {
        await sb.commitBaseline();
        assert.equal(await sb.diff(), '');
        await sb.writeFile('change.py', 'x = 2\n');
        await sb.remove('gone.txt');
        await sb.writeFile('new/added.txt', 'hi\n');
        await sb.writeFile('new/blob.bin', Buffer.from([0, 1, 2, 3, 255]));
        const made = await sb.exec(
          'mkdir -p pkg/__pycache__ .pytest_cache && echo c > pkg/__pycache__/m.cpython-311.pyc && ' +
            'echo c > .pytest_cache/x && echo c > stray.pyc',
        );
        assert.equal(made.exitCode, 0);
        const diff = await sb.diff();
        assert.match(diff, /^diff --git a\/change\.py b\/change\.py$/m);
        assert.match(diff, /^-x = 1$/m);
        assert.match(diff, /^\+x = 2$/m);
        assert.match(diff, /^diff --git a\/gone\.txt b\/gone\.txt\ndeleted file mode/m);
        assert.match(diff, /^diff --git a\/new\/added\.txt b\/new\/added\.txt\nnew file mode/m);
        assert.match(diff, /GIT binary patch/);
        assert.doesNotMatch(diff, /keep\.txt/);
        assert.doesNotMatch(diff, /__pycache__|pytest_cache|\.pyc/);
      } finally {
        await sb.destroy();
      }
    });

    it('applyPatch reproduces a diff in a fresh copy and reports a patch that does not apply', async () => {
      const files = { 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'bee\n' };
      const source = await create({ seed: { files } });
      const target = await create({ seed: { files } });
      const other = await create({ seed: { files: { 'a.txt': 'completely\ndifferent\n' } } });
      try {
        await source.commitBaseline();
        await source.writeFile('a.txt', 'one\n2\nthree\n');
        await source.remove('b.txt');
        await source.writeFile('c/new.bin', Buffer.from([0, 200, 0, 100]));
        const patch = await source.diff();

        const applied = await target.applyPatch(patch);
        assert.equal(applied.ok, true, applied.log);
        assert.equal((await target.readFile('a.txt')).toString(), 'one\n2\nthree\n');
        assert.equal(await target.stat('b.txt'), null);
        assert.deepEqual([...(await target.readFile('c/new.bin'))], [0, 200, 0, 100]);

        const empty = await target.applyPatch('');
        assert.equal(empty.ok, true);

        const failed = await other.applyPatch(patch);
        assert.equal(failed.ok, false);
        assert.match(failed.log, /git apply/);
        assert.equal((await other.readFile('a.txt')).toString(), 'completely\ndifferent\n');
      } finally {
        await Promise.all([source.destroy(), target.destroy(), other.destroy()]);
      }
    });
  });
}

describe('bubblewrap isolation', () => {
  let baseDir: string;
  let probeDir: string;
  let secretDir: string;
  let bwrap: LocalSandboxFactory | undefined;
  let plain: LocalSandboxFactory;
  let usable = false;

  before(async () => {
    usable = await bubblewrapAvailable();
    baseDir = await tempDir('benchgym-lsb-');
    probeDir = await hostDir('benchgym-ro-');
    secretDir = await hostDir('benchgym-private-');
    await fs.writeFile(path.join(probeDir, 'existing.txt'), 'original\n');
    // Open to every uid, so that only the read-only mount stops the writes below.
    await fs.chmod(probeDir, 0o777);
    await fs.chmod(path.join(probeDir, 'existing.txt'), 0o666);
    await fs.writeFile(path.join(secretDir, 'answers.txt'), 'the hidden answer\n');
    // A private file beside readable ones (a task file in a user's folder).
    await fs.writeFile(path.join(probeDir, 'tasks.jsonl'), '{"gold": "the hidden answer"}\n');
    const opts = { baseDir, privatePaths: [secretDir, path.join(probeDir, 'tasks.jsonl')] };
    if (usable) bwrap = new LocalSandboxFactory({ ...opts, isolation: 'bwrap' });
    plain = new LocalSandboxFactory({ ...opts, isolation: 'none' });
  });
  after(async () => {
    await bwrap?.close();
    await plain.close();
    for (const d of [baseDir, probeDir, secretDir]) await fs.rm(d, { recursive: true, force: true });
  });

  const it = (name: string, fn: () => Promise<void>) =>
    test(name, async (t) => {
      if (!usable) return t.skip('bubblewrap is not usable on this machine');
      await fn();
    });

  it('asking for bwrap gives a sandbox that says so', async () => {
    const sb = await bwrap!.create({ seed: {} });
    assert.match(sb.isolation, /bubblewrap/);
    await sb.destroy();
  });

  it('commands have no network, not even to a listener on the host loopback', async () => {
    let connections = 0;
    const server = net.createServer((s) => {
      connections++;
      s.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    const probe = `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected`;
    const open = await plain.create({ seed: {} });
    const closed = await bwrap!.create({ seed: {} });
    try {
      const control = await open.exec(probe, { timeoutMs: 10_000 });
      assert.equal(control.stdout.trim(), 'connected', 'the probe itself does not work');
      const before = connections;
      const r = await closed.exec(probe, { timeoutMs: 10_000 });
      assert.notEqual(r.exitCode, 0);
      assert.doesNotMatch(r.stdout, /connected/);
      await new Promise((res) => setTimeout(res, 100));
      assert.equal(connections, before);
    } finally {
      await open.destroy();
      await closed.destroy();
      server.close();
    }
  });

  it('the file system outside the workspace is read-only, the workspace, home and /tmp writable', async () => {
    const sb = (await bwrap!.create({ seed: {} })) as LocalSandbox;
    try {
      const r = await sb.exec(`echo x > ${probeDir}/new.txt; echo x >> ${probeDir}/existing.txt; rm -f ${probeDir}/existing.txt; true`);
      assert.equal(existsSync(path.join(probeDir, 'new.txt')), false);
      assert.equal(await fs.readFile(path.join(probeDir, 'existing.txt'), 'utf8'), 'original\n');
      assert.match(r.stderr, /Read-only file system/);
      const tmpName = `benchgym-probe-${randomBytes(4).toString('hex')}`;
      const w = await sb.exec(
        `echo ws > in-workspace.txt && echo home > "$HOME/h.txt" && echo tmp > /tmp/${tmpName} && cat /tmp/${tmpName}`,
      );
      assert.equal(w.exitCode, 0, w.stderr);
      assert.equal(w.stdout, 'tmp\n');
      assert.equal((await sb.readFile('in-workspace.txt')).toString(), 'ws\n');
      // The sandbox's /tmp is its own.
      assert.equal(existsSync(path.join('/tmp', tmpName)), false);
    } finally {
      await sb.destroy();
    }
  });

  it('private paths (suites, hidden tests) and other sandboxes are hidden', async () => {
    const control = await plain.create({ seed: {} });
    const mine = (await bwrap!.create({ seed: { files: { 'mine.txt': 'mine\n' } } })) as LocalSandbox;
    const other = (await bwrap!.create({ seed: { files: { 'other-secret.txt': 'other episode\n' } } })) as LocalSandbox;
    try {
      const read = `cat ${secretDir}/answers.txt`;
      assert.equal((await control.exec(read)).stdout, 'the hidden answer\n', 'the probe itself does not work');
      const r = await mine.exec(read);
      assert.notEqual(r.exitCode, 0);
      assert.doesNotMatch(r.stdout, /hidden answer/);
      assert.equal((await mine.exec(`ls -A ${secretDir}`)).stdout, '');
      // A private file cannot be read (/dev/null on a nodev mount); its folder's other files stay readable.
      assert.match((await control.exec(`cat ${probeDir}/tasks.jsonl`)).stdout, /hidden answer/, 'the probe itself does not work');
      const file = await mine.exec(`cat ${probeDir}/tasks.jsonl; echo "rc=$?"; cat ${probeDir}/existing.txt`);
      assert.doesNotMatch(file.stdout, /hidden answer/);
      assert.match(file.stdout, /original\n$/);
      const o = await mine.exec(`cat ${other.root}/other-secret.txt; echo x > ${other.root}/planted.txt`);
      assert.doesNotMatch(o.stdout, /other episode/);
      assert.equal(await other.stat('planted.txt'), null);
      assert.equal((await mine.exec('cat mine.txt')).stdout, 'mine\n');
    } finally {
      await Promise.all([control.destroy(), mine.destroy(), other.destroy()]);
    }
  });
});
