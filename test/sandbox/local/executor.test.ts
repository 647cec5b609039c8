import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import { promisify } from 'node:util';
import path from 'node:path';
import { bubblewrapAvailable, LocalSandbox, LocalSandboxFactory } from '../../../src/sandbox/local/index.ts';
import { findGo } from '../../../src/sandbox/executor/build.ts';
import { expectGymError, markerSurvivors, processAlive, tempDir } from '../../helpers.ts';

/** One executor per local sandbox: what its death, its channel and concurrency look like from outside. */

const hasGo = findGo() !== null;
const uniqueSleep = () => 5000 + Math.floor(Math.random() * 90000);

for (const mode of ['none', 'bwrap'] as const) {
  describe(`local executor (isolation '${mode}')`, async () => {
    const usable = hasGo && (mode === 'none' || (await bubblewrapAvailable()));
    let baseDir: string;
    let factory: LocalSandboxFactory;

    before(async () => {
      baseDir = await tempDir('benchgym-lexec-');
      // Reachable by the sandbox's uid: without bubblewrap a root server drops to it only then.
      await fs.chmod(baseDir, 0o755);
      factory = new LocalSandboxFactory({ baseDir, isolation: mode });
    });
    after(async () => {
      await factory.close();
      await fs.rm(baseDir, { recursive: true, force: true });
    });

    const it = (name: string, fn: (t: TestContext) => Promise<void>) =>
      test(
        name,
        { skip: usable ? false : hasGo ? 'bubblewrap is not usable on this machine' : 'no Go toolchain to build the executor' },
        fn,
      );
    const create = async () => (await factory.create({ seed: { files: { 'README.md': 'hello\n' } } })) as LocalSandbox;

    it('commands go through one executor process', async () => {
      const sb = await create();
      try {
        assert.match(sb.isolation, /one executor process per sandbox/);
        const { host } = await sb.executorPids();
        await sb.exec('true');
        await sb.exec('echo $$');
        assert.equal((await sb.executorPids()).host, host, 'the executor was started again');
        assert.ok(processAlive(host));
      } finally {
        await sb.destroy();
      }
    });

    it(
      'killing the executor mid-command: SANDBOX_UNAVAILABLE for the pending call and the next ones, ' + 'never a hang; destroy() is clean',
      async () => {
        const sb = await create();
        const dir = path.dirname(sb.root);
        const s = uniqueSleep();
        const pending = sb.exec(`sleep ${s}`, { timeoutMs: 600_000 });
        pending.catch(() => {});
        await new Promise((r) => setTimeout(r, 300));
        const { host } = await sb.executorPids();
        process.kill(host, 'SIGKILL');
        const started = Date.now();
        await expectGymError(pending, 'SANDBOX_UNAVAILABLE', /executor of sandbox/);
        assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
        await expectGymError(sb.exec('true'), 'SANDBOX_UNAVAILABLE', /executor of sandbox/);
        await expectGymError(sb.exec('echo again', { timeoutMs: 1000 }), 'SANDBOX_UNAVAILABLE');
        await sb.destroy();
        assert.equal(existsSync(dir), false);
        assert.deepEqual(await markerSurvivors(sb.id), []);
        await expectGymError(sb.exec('true'), 'SANDBOX_UNAVAILABLE', /destroyed/);
      },
    );

    it("a command cannot read or write the executor's channel (/proc/<executor>/fd)", async () => {
      const sb = await create();
      try {
        const { inside } = await sb.executorPids();
        const frame = `{"id":1,"ok":true,"result":{}}`;
        const r = await sb.exec(
          [
            `P=${inside}`,
            'id -u',
            '[ -d /proc/$P ] && echo sees-the-executor',
            'ls /proc/$P/fd/ >/dev/null 2>&1 && echo listed',
            'readlink /proc/$P/fd/0 /proc/$P/fd/1 /proc/$P/fd/3 >/dev/null 2>&1 && echo resolved',
            `for fd in 0 1 2 3 4 5 6 7 8 9; do (echo '${frame}' > /proc/$P/fd/$fd) 2>/dev/null && echo "wrote $fd"; done`,
            'for fd in 0 1 3 4 5; do timeout 1 head -c 1 /proc/$P/fd/$fd >/dev/null 2>&1 && echo "read $fd"; done',
            'echo done',
          ].join('\n'),
        );
        const lines = r.stdout.trim().split('\n');
        assert.notEqual(lines[0], '0', 'commands run as root, who may open anything');
        assert.equal(lines[1], 'sees-the-executor', 'the test looks at the right process');
        assert.deepEqual(lines.slice(2), ['done'], r.stdout + r.stderr);
        // The channel still speaks only for the executor.
        assert.equal((await sb.exec('echo fine')).stdout, 'fine\n');
      } finally {
        await sb.destroy();
      }
    });

    it('20 commands at once on one sandbox, each with its own result; nothing left after', async () => {
      const sb = await create();
      try {
        const started = Date.now();
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) => sb.exec(`sleep 0.5; echo out-${i}; echo err-${i} >&2; exit ${i % 3}`)),
        );
        const elapsed = Date.now() - started;
        results.forEach((r, i) => {
          assert.equal(r.stdout, `out-${i}\n`);
          assert.equal(r.stderr, `err-${i}\n`);
          assert.equal(r.exitCode, i % 3);
        });
        assert.ok(elapsed < 8000, `20 half-second commands took ${elapsed} ms: not concurrent`);
        // A leftover of one command waits for the last to end, then goes.
        const s = uniqueSleep();
        const [a] = await Promise.all([
          sb.exec(`setsid sleep ${s} >/dev/null 2>&1 </dev/null & echo started`),
          sb.exec('sleep 0.5; echo later'),
        ]);
        assert.equal(a.stdout, 'started\n');
        assert.deepEqual(await markerSurvivors(sb.id), []);
      } finally {
        await sb.destroy();
      }
    });
  });
}

test('without a prebuilt executor or a Go toolchain no sandbox starts: SANDBOX_UNAVAILABLE saying how to get one', async () => {
  const baseDir = await tempDir('benchgym-lexec-nogo-');
  const saved = process.env.BENCHGYM_GO;
  process.env.BENCHGYM_GO = '/no/such/go';
  const noGo = new LocalSandboxFactory({ baseDir, isolation: 'none', executorCacheDir: path.join(baseDir, 'empty-cache') });
  try {
    for (let i = 0; i < 2; i++) {
      const err = await expectGymError(
        noGo.create({ seed: {} }),
        'SANDBOX_UNAVAILABLE',
        /no sandbox can start without the in-sandbox executor/,
      );
      assert.match(err.message, /Go 1\.\d+ or later/);
      assert.match(err.message, /not found at \/no\/such\/go|\$BENCHGYM_GO/);
      assert.match(err.message, /npm package, which ships the executor prebuilt for linux amd64 and arm64/);
      assert.equal(err.details?.executorMissing, true);
    }
    // Nothing was laid out for a sandbox that could not start.
    assert.deepEqual(
      (await fs.readdir(baseDir)).filter((n) => n.startsWith('lsb-')),
      [],
    );
  } finally {
    if (saved === undefined) delete process.env.BENCHGYM_GO;
    else process.env.BENCHGYM_GO = saved;
    await noGo.close();
    await fs.rm(baseDir, { recursive: true, force: true });
  }
});

test(
  'a server that is not root: each command in a pid namespace of its own, ' +
    'so kill -9 -1 ends neither the executor nor the server, bubblewrap or not',
  { skip: process.getuid?.() === 0 && hasGo ? false : 'needs root (to start a server as another uid) and Go' },
  async () => {
    // A uid no one else here runs as: were the namespace missing, the kill would reach only this test's server.
    const user = { uid: 64997, gid: 64997 };
    const isolations = (await bubblewrapAvailable()) ? ['bwrap', 'none'] : ['none'];
    const dir = await tempDir('benchgym-lexec-unprivileged-');
    try {
      await fs.chmod(dir, 0o755);
      await fs.chown(dir, user.uid, user.gid);
      // Built here (the test cache is root's): the server only finds it.
      const { executorBinary } = await import('../executor/fixture.ts');
      const binary = await executorBinary();
      const script = path.join(dir, 'server.mts');
      const local = new URL('../../../src/sandbox/local/index.ts', import.meta.url).pathname;
      await fs.writeFile(
        script,
        [
          `import { LocalSandboxFactory } from ${JSON.stringify(local)};`,
          'const out = {};',
          `for (const isolation of ${JSON.stringify(isolations)}) {`,
          `  const f = new LocalSandboxFactory({ baseDir: ${JSON.stringify(path.join(dir, 'sb'))} + '-' + isolation, ` +
            `isolation, executorCacheDir: ${JSON.stringify(path.dirname(path.dirname(path.dirname(binary))))} });`,
          '  const sb = await f.create({ seed: { files: { "a.txt": "x" } } });',
          `  const attack = await sb.exec('kill -9 -1; for p in /proc/[0-9]*; do ` +
            `n=\${p#/proc/}; [ "$n" = $$ ] || kill -9 "$n" 2>/dev/null; done; echo done');`,
          "  const next = await sb.exec('id -u; cat a.txt');",
          '  out[isolation] = { isolation: sb.isolation, attack: attack.stdout, next: next.stdout };',
          '  await f.close();',
          '}',
          'console.log(JSON.stringify(out));',
        ].join('\n'),
      );
      const { stdout } = await promisify(execFile)(
        'setpriv',
        [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--', process.execPath, '--import', 'tsx', script],
        {
          cwd: process.cwd(),
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir },
          timeout: 120_000,
        },
      );
      const out = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, { isolation: string; attack: string; next: string }>;
      for (const isolation of isolations) {
        const r = out[isolation]!;
        assert.match(r.isolation, /each command in a user and pid namespace of its own/, isolation);
        assert.equal(r.attack, 'done\n', isolation);
        assert.equal(r.next, `${user.uid}\nx`, isolation);
      }
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  },
);
