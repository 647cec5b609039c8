import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { bubblewrapAvailable, LocalSandbox, LocalSandboxFactory } from '../../../src/sandbox/local/index.ts';
import { CgroupDriver } from '../../../src/sandbox/local/cgroup.ts';
import { killedByMemoryLimit, OOM_NOTE } from '../../../src/sandbox/memory_limit.ts';
import { processAlive, tempDir } from '../../helpers.ts';

/** Commands as an unprivileged user, bounded by the kernel; every process of a sandbox found and killed. */

const alive = processAlive;

async function waitDead(pids: number[], ms = 3000): Promise<number[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const left = pids.filter(alive);
    if (!left.length || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Pids a command wrote to a file in its workspace, one a line: host pids (isolation none), which
 * a command in a pid namespace of its own learns from the host's /proc it sees (HOST_PID), not $$.
 */
async function pidsIn(sb: LocalSandbox, file: string): Promise<number[]> {
  const text = await fs.readFile(path.join(sb.root, file), 'utf8').catch(() => '');
  return text.split(/\s+/).filter(Boolean).map(Number);
}

/** The shell's own pid as the host's /proc names it (a builtin read: no process of its own). */
const HOST_PID = 'read -r p _ < /proc/self/stat';

const cgroups = await CgroupDriver.detect();
const noCgroups = cgroups ? false : 'no writable cgroups on this machine (an unprivileged server without delegation)';

describe('local sandbox confinement', async () => {
  const bwrapUsable = await bubblewrapAvailable();
  let baseDir: string;
  let bwrap: LocalSandboxFactory | undefined;
  let none: LocalSandboxFactory;

  before(async () => {
    baseDir = await tempDir('benchgym-confine-');
    if (bwrapUsable) bwrap = new LocalSandboxFactory({ baseDir, isolation: 'bwrap', limits: { pids: 256, memoryBytes: 256 * 1024 ** 2 } });
    none = new LocalSandboxFactory({ baseDir, isolation: 'none', limits: { pids: 256, memoryBytes: 256 * 1024 ** 2 } });
  });
  after(async () => {
    await bwrap?.close();
    await none.close();
    await fs.rm(baseDir, { recursive: true, force: true });
  });

  const withBwrap = (name: string, fn: (t: TestContext) => Promise<void>, skip: string | false = false) =>
    test(name, { skip: !bwrapUsable ? 'bubblewrap is not usable on this machine' : skip }, fn);

  withBwrap(
    'inside bubblewrap commands run as an unprivileged uid without capabilities, and the workspace and home stay writable',
    async () => {
      const sb = (await bwrap!.create({ seed: { files: { 'a/b.txt': 'seed\n' } } })) as LocalSandbox;
      try {
        await sb.writeFile('later/new.txt', 'written by the server\n');
        const r = await sb.exec(
          'id -u; grep CapEff /proc/self/status; echo more >> a/b.txt && ' +
            'echo more >> later/new.txt && mkdir -p later/sub && echo h > "$HOME/h" && echo ok',
        );
        assert.equal(r.exitCode, 0, r.stderr);
        const [uid, capEff, ok] = r.stdout.trim().split('\n');
        assert.notEqual(uid, '0', 'commands run as root');
        assert.match(capEff!, /^CapEff:\s+0+$/);
        assert.equal(ok, 'ok');
        assert.equal((await sb.readFile('a/b.txt')).toString(), 'seed\nmore\n');
        assert.match(sb.isolation, /uid/);
      } finally {
        await sb.destroy();
      }
    },
  );

  withBwrap(
    'a fork bomb is stopped by the pids limit; the server and another sandbox stay fine',
    async () => {
      const bomb = await bwrap!.create({ seed: {} });
      const other = await bwrap!.create({ seed: {} });
      try {
        // Bounded: 5,000 sleeping children at most, and the command ends by itself.
        await bomb.exec('i=0; while [ $i -lt 5000 ]; do sleep 30 & i=$((i+1)); echo $i > count; done 2>/dev/null', { timeoutMs: 90_000 });
        const started = Number((await bomb.readFile('count')).toString().trim());
        assert.ok(started > 0 && started < 5000, `${started} of 5000 children started: no pids limit`);
        assert.equal((await other.exec('echo fine')).stdout, 'fine\n');
        assert.equal((await bomb.exec('echo recovered')).stdout, 'recovered\n');
      } finally {
        await Promise.all([bomb.destroy(), other.destroy()]);
      }
    },
    noCgroups,
  );

  withBwrap(
    "a task that asks for more pids (resources.pids) gets them: 400 children where the factory's limit is 256",
    async () => {
      const count = async (sb: import('../../../src/sandbox/types.ts').Sandbox) => {
        await sb.exec('i=0; while [ $i -lt 400 ]; do sleep 20 & i=$((i+1)); echo $i > count; done 2>/dev/null', { timeoutMs: 90_000 });
        return Number((await sb.readFile('count')).toString().trim());
      };
      const plain = await bwrap!.create({ seed: {} });
      const more = await bwrap!.create({ seed: {}, env: { pids: 512 } });
      try {
        assert.ok((await count(plain)) < 256, 'the default: 256 pids');
        assert.equal(await count(more), 400);
      } finally {
        await Promise.all([plain.destroy(), more.destroy()]);
      }
    },
    noCgroups,
  );

  withBwrap(
    'a memory hog is killed by the memory limit',
    async () => {
      const sb = await bwrap!.create({ seed: {} });
      try {
        const r = await sb.exec("python3 -c \"x = bytearray(1024**3); x[::4096] = b'x' * len(x[::4096]); print('allocated')\"", {
          timeoutMs: 60_000,
        });
        assert.notEqual(r.exitCode, 0, 'a gigabyte was allocated under a 256 MiB limit');
        assert.doesNotMatch(r.stdout, /allocated/);
        // The backend marks the result (the cgroup's OOM count, the command leaf's on v1), and says so.
        assert.equal(killedByMemoryLimit(r), true, r.stderr);
        assert.ok(r.stderr.includes(OOM_NOTE), r.stderr);
        assert.equal(killedByMemoryLimit(await sb.exec('true')), false);
        assert.equal((await sb.exec('echo alive')).stdout, 'alive\n');
      } finally {
        await sb.destroy();
      }
    },
    noCgroups,
  );

  test(
    'under --isolation none, setsid env -i, a double fork and nohup are gone after the command and after destroy()',
    { skip: noCgroups },
    async () => {
      const sb = (await none.create({ seed: {} })) as LocalSandbox;
      try {
        const r = await sb.exec(
          [
            `setsid env -i sh -c '${HOST_PID}; echo $p >> pids; exec sleep 1000' </dev/null >/dev/null 2>&1 &`,
            `sh -c 'sh -c "${HOST_PID}; echo \\$p >> pids; exec env -i sleep 1001" </dev/null >/dev/null 2>&1 &' `,
            `nohup env -i sh -c '${HOST_PID}; echo $p >> pids; exec sleep 1002' </dev/null >/dev/null 2>&1 &`,
            'sleep 0.5; echo done',
          ].join('\n'),
        );
        assert.equal(r.stdout.trim(), 'done');
        const pids = await pidsIn(sb, 'pids');
        assert.equal(pids.length, 3, `expected three escapees: ${pids}`);
        assert.deepEqual(await waitDead(pids), [], 'processes outlived their command');
        // And what a terminal started goes with destroy().
        const term = await sb.pty!({ cols: 80, rows: 24 });
        term.write("setsid env -i sh -c 'echo $$ >> tpids; exec sleep 1003' </dev/null >/dev/null 2>&1 &\n");
        const deadline = Date.now() + 5000;
        while (!(await pidsIn(sb, 'tpids')).length && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
        const tpids = await pidsIn(sb, 'tpids');
        assert.equal(tpids.length, 1);
        await sb.destroy();
        assert.deepEqual(await waitDead(tpids), [], 'a terminal process outlived destroy()');
      } finally {
        await sb.destroy();
      }
    },
  );

  test(
    'a server killed with -9 while a command runs leaves a process that the next factory init() kills',
    // A root server: its executor runs commands as the sandbox uid, in no pid namespace that would die with it.
    { skip: process.getuid?.() === 0 ? noCgroups : 'needs a root server', timeout: 60_000 },
    async () => {
      const dir = await tempDir('benchgym-crash-');
      // Reachable by the sandbox uid (else a root server keeps the commands its own, each in a pid namespace), the pid file writable.
      await fs.chmod(dir, 0o755);
      await fs.mkdir(path.join(dir, 'out'), { mode: 0o777 });
      await fs.chmod(path.join(dir, 'out'), 0o777);
      const script = path.join(dir, 'server.mts');
      const local = fileURLToPath(new URL('../../../src/sandbox/local/index.ts', import.meta.url));
      await fs.writeFile(
        script,
        [
          `import { LocalSandboxFactory } from ${JSON.stringify(local)};`,
          // setsid and env -i: out of the executor's reach once it dies with the server; only the cgroup still holds it.
          `const f = new LocalSandboxFactory({ baseDir: ${JSON.stringify(path.join(dir, 'sb'))}, isolation: 'none' });`,
          `const sb = await f.create({ seed: {} });`,
          `void sb.exec("setsid env -i sh -c 'echo $$ > ${dir}/out/pid; exec sleep 1000' </dev/null ` +
            `>/dev/null 2>&1 & sleep 1000", { timeoutMs: 600000 });`,
        ].join('\n'),
      );
      const server = spawn(process.execPath, ['--import', 'tsx', script], { stdio: 'ignore' });
      let pid = 0;
      try {
        const deadline = Date.now() + 30_000;
        while (!pid && Date.now() < deadline) {
          pid = Number(await fs.readFile(path.join(dir, 'out', 'pid'), 'utf8').catch(() => '0'));
          if (!pid) await new Promise((r) => setTimeout(r, 100));
        }
        assert.ok(pid, 'the command did not start');
        server.kill('SIGKILL');
        await new Promise((r) => server.once('exit', r));
        assert.ok(alive(pid), 'the command died with the server anyway: the test proves nothing');
        const next = new LocalSandboxFactory({ baseDir: path.join(dir, 'next'), isolation: 'none' });
        await next.init?.();
        assert.deepEqual(await waitDead([pid]), [], "the crashed server's command survived the next start");
        await next.close();
      } finally {
        server.kill('SIGKILL');
        if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
        await fs.rm(dir, { recursive: true, force: true });
      }
    },
  );
});
