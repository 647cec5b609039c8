import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { baseImageName } from '../../src/env/images.ts';
import { GymError } from '../../src/errors.ts';
import { PROJECT_ROOT } from '../../src/tasks/registry.ts';
import type { Sandbox, SandboxCreateOptions } from '../../src/sandbox/types.ts';
import type { ContainerSandbox } from '../../src/sandbox/container/index.ts';
import { expectGymError, makeGym, startExample, TEST_CACHE_DIR, tempDir, waitFor } from '../helpers.ts';
import {
  checkFuzz,
  checkGitDirRefused,
  checkLinkIntoGitDir,
  checkLinksOut,
  checkNestedRepository,
  checkPlantedRepository,
  checkResetBetweenTries,
  checkThreeWay,
} from './patch_apply.cases.ts';
import { type ContainerBackendKit } from './container_backends.ts';

/**
 * What every container backend (Docker, Kubernetes) must do the same way, run over each:
 * the executor, patch application, terminals, `benchgym validate`, and a restart after kill -9.
 * What one backend alone has (Docker's OOM count, the pod's watch) stays in its own folder.
 */

const IMAGE = baseImageName('python', '3.11');

/** Within `ms`, or a rejection naming what hung. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms))]);
}

/** The call fails with SANDBOX_UNAVAILABLE and says the sandbox is lost. */
async function lostError(p: Promise<unknown>, what: string): Promise<GymError> {
  try {
    await within(p, 20_000, what);
  } catch (err) {
    assert.ok(err instanceof GymError, `${what}: a GymError, got ${err}`);
    assert.equal(err.code, 'SANDBOX_UNAVAILABLE', `${what}: ${err.message}`);
    assert.equal(err.details?.sandboxLost, true, `${what}: sandboxLost in ${JSON.stringify(err.details)}`);
    return err;
  }
  assert.fail(`${what} should have failed`);
}

/** `benchgym <args>` to its end. */
function benchgym(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'bin', 'benchgym.js'), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b) => (stdout += b));
    child.stderr.on('data', (b) => (stderr += b));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `benchgym serve` on a free port, and its MCP URL once it listens. */
function serve(kit: ContainerBackendKit, serverId: string, dataDir: string): { child: ChildProcess; url: Promise<string> } {
  const args = [
    path.join(PROJECT_ROOT, 'bin', 'benchgym.js'),
    'serve',
    ...kit.cli.args,
    '--server-id',
    serverId,
    '--pool',
    '1',
    '--port',
    '0',
    '--data-dir',
    dataDir,
    '--cache-dir',
    TEST_CACHE_DIR,
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], env: kit.cli.env });
  let stderr = '';
  const url = new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (b) => {
      stderr += b;
      const m = /MCP \(Streamable HTTP\): (http:\/\/\S+)\/mcp/.exec(stderr);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
  return { child, url };
}

async function until(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function connect(url: string, name: string): Promise<Client> {
  const client = new Client({ name, version: '0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  return client;
}

/** The sandbox's own cases, or the CLI's (`benchgym validate`, a restart after kill -9). */
export type ConformancePart = 'sandbox' | 'cli';

/**
 * One part of one backend's cases: a test file each (conformance_<backend>_<part>.test.ts),
 * so each runs beside the others and within its own time limit.
 */
export function containerConformance(kit: ContainerBackendKit, part: ConformancePart): void {
  describe(`container conformance: ${kit.name} (${part === 'sandbox' ? 'the sandbox' : 'the CLI'})`, async () => {
    const skip = await kit.skip();
    if (skip) {
      test(`skipped: ${skip}`, { skip }, () => {});
      return;
    }
    const factory = kit.factory();
    const create: SandboxCreateOptions = { seed: {}, env: { image: IMAGE, vars: { GREETING: 'hi' } } };
    const sandboxes: Sandbox[] = [];
    const fresh = async () => {
      const sb = (await factory.create(create)) as ContainerSandbox;
      sandboxes.push(sb);
      return sb;
    };
    before(async () => kit.load(IMAGE));
    after(async () => {
      await Promise.all(sandboxes.map((s) => s.destroy()));
      await factory.close();
    });

    if (part === 'sandbox') {
      describe('the in-sandbox executor', () => {
        test('runs as a process of its own, never PID 1, with the workspace as its root', async () => {
          const sb = await fresh();
          assert.ok(sb.executor.info, 'the sandbox has a connected executor');
          assert.notEqual(sb.executor.info.pid, 1);
          assert.equal(sb.executor.info.root, '/workspace');
          assert.equal((await sb.exec('echo "$GREETING $(pwd)"')).stdout, 'hi /workspace\n');
        });

        test(
          'killed mid-command: SANDBOX_UNAVAILABLE with sandboxLost for the pending call and every later one, never a hang',
          { timeout: 90_000 },
          async () => {
            const sb = await fresh();
            const pending = sb.exec('sleep 30; echo done', { timeoutMs: 60_000 });
            pending.catch(() => {}); // it may reject before the kill returns: checked below
            await new Promise((r) => setTimeout(r, 300));
            const killed = await kit.asRoot(sb, ['kill', '-9', String(sb.executor.info!.pid)]);
            assert.equal(killed.exitCode, 0, killed.stderr.text());
            assert.match((await lostError(pending, 'the pending command')).message, /executor/);
            await lostError(sb.exec('true'), 'a later command');
            await lostError(sb.readFile('x'), 'a later read');
            await lostError(sb.writeFile('x.txt', 'x'), 'a later write');
          },
        );

        test(
          "what a running command double-forked is not another command's leftover; it goes when its command ends",
          { timeout: 60_000 },
          async () => {
            const sb = await fresh();
            const count = async () => Number((await sb.exec("ps -eo args | grep -c '^sleep 2107' || true")).stdout.trim());
            let settled = false;
            const running = sb.exec('(sleep 2107 >/dev/null 2>&1 &); sleep 10', { timeoutMs: 60_000 }).finally(() => (settled = true));
            await new Promise((r) => setTimeout(r, 1000));
            await sb.exec('true');
            const during = await count();
            assert.equal(settled, false, 'the machine was too slow: the command ended before the check');
            assert.equal(during, 1, 'killed while its command still ran');
            assert.equal((await running).exitCode, 0);
            assert.equal(await count(), 0, 'outlived its command');
          },
        );

        test('20 concurrent commands on one sandbox, each with its own output', { timeout: 120_000 }, async () => {
          const sb = await fresh();
          const results = await Promise.all(
            Array.from({ length: 20 }, (_, i) => sb.exec(`sleep 0.$((RANDOM % 5)); echo out-${i}; echo err-${i} >&2; exit ${i % 3}`)),
          );
          results.forEach((r, i) => {
            assert.equal(r.stdout, `out-${i}\n`);
            assert.equal(r.stderr, `err-${i}\n`);
            assert.equal(r.exitCode, i % 3);
          });
          assert.equal((await sb.exec('echo after')).stdout, 'after\n');
        });

        test(
          'without a prebuilt executor or a Go toolchain no sandbox starts: SANDBOX_UNAVAILABLE saying how to get one, each time',
          { timeout: 120_000 },
          async () => {
            const saved = process.env.BENCHGYM_GO;
            process.env.BENCHGYM_GO = '/nonexistent/go';
            // A cache with no binary in it: the build is tried, and fails.
            const noGo = kit.factory({ images: { cacheDir: await tempDir('benchgym-nogo-') } });
            try {
              for (let i = 0; i < 2; i++) {
                const err = await expectGymError(
                  noGo.create(create),
                  'SANDBOX_UNAVAILABLE',
                  /no sandbox can start without the in-sandbox executor/,
                );
                assert.match(err.message, /Go 1\.\d+ or later/);
                assert.match(err.message, /\$BENCHGYM_GO/);
                assert.match(err.message, /npm package, which ships the executor prebuilt/);
                assert.equal(err.details?.executorMissing, true);
              }
              assert.equal(noGo.stats().live, 0);
            } finally {
              if (saved === undefined) delete process.env.BENCHGYM_GO;
              else process.env.BENCHGYM_GO = saved;
              await noGo.close();
            }
          },
        );
      });

      describe('applyPatch by a chain (the baseline in reach: a workspace without a repository resets to it)', () => {
        const it = (name: string, check: (sb: Sandbox) => Promise<void>) =>
          test(name, { timeout: 5 * 60_000 }, async () => {
            const sb = await factory.create({ seed: {}, env: { image: IMAGE } });
            try {
              await check(sb);
            } finally {
              await sb.destroy();
            }
          });
        it('a patch only --3way applies: a chain without it fails, one with it applies', checkThreeWay);
        it('a patch only fuzz applies: a chain without enough fuzz fails, one with it applies', checkFuzz);
        it('resetBetweenTries puts the start state back after each failed try', checkResetBetweenTries);
        it('the 3-way try and the resets run nothing planted in the workspace repository or home', (sb) =>
          checkPlantedRepository(sb, '/tmp/marks'));
        it('no method writes inside a .git, in any format: refused by the names, and by the script alone', checkGitDirRefused);
        it('a start-state link into .git is out of reach during the tries: the patch is refused', checkLinkIntoGitDir);
        it("nothing is written through a link out of the workspace, the start state's or the patch's own", checkLinksOut);
        it(
          'a repository nested in the start state is put aside and back: a patch beside it applies, one into it is refused',
          checkNestedRepository,
        );
        it('without a repository in the workspace, the resets go back to the baseline', async (sb) => {
          await sb.writeFile('a.txt', 'one\ntwo\nthree\n');
          await sb.commitBaseline();
          await sb.writeFile('a.txt', 'one\nTWO\nthree\n');
          const patch =
            '--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-bee\n+BEE\n';
          const r = await sb.applyPatch(patch, { chain: [{ kind: 'git-apply' }, { kind: 'patch', fuzz: 0 }], resetBetweenTries: true });
          assert.equal(r.ok, false, r.log);
          assert.equal((await sb.readFile('a.txt')).toString(), 'one\ntwo\nthree\n', r.log);
          assert.equal(await sb.stat('a.txt.rej'), null);
        });
      });

      test('a PTY into the episode: commands, resize, exit, background jobs gone', { timeout: 5 * 60_000 }, async () => {
        const { gym, cleanup } = await makeGym({ sandboxes: kit.factory() });
        try {
          const id = await startExample(gym, 'roman-numerals');
          const sandbox = gym.episode(id).sandbox;
          const pty = await sandbox.pty!({ cols: 100, rows: 30 });
          let out = '';
          pty.onData((b) => (out += b.toString()));
          const exited = new Promise<number | null>((resolve) => pty.onExit(resolve));
          pty.write('stty size; ls; sleep 913 &\r');
          await waitFor(() => out, /30 100/);
          await waitFor(() => out, /roman\.py/);
          await pty.resize(132, 40);
          // Kubernetes applies a resize asynchronously (its channel is not ordered with stdin's): ask until it shows.
          const deadline = Date.now() + 15_000;
          while (!/40 132/.test(out)) {
            assert.ok(Date.now() < deadline, `the resize never reached the terminal: ${JSON.stringify(out.slice(-400))}`);
            pty.write('stty size\r');
            await new Promise((r) => setTimeout(r, 500));
          }
          pty.write('exit 3\r');
          assert.equal(await exited, 3);
          // The job went with the shell: seen from a second terminal, in the same terminal container (commands never see it).
          const again = await sandbox.pty!({ cols: 80, rows: 24 });
          let seen = '';
          again.onData((b) => (seen += b.toString()));
          again.write('echo left-$(ps -eo args | grep -c "^sleep 91[3]")-$((6*7))\r');
          await waitFor(() => seen, /left-0-42/);
          await again.kill();
        } finally {
          await cleanup();
        }
      });
    }

    if (part === 'cli') {
      test(`benchgym validate --suite examples --sandbox ${kit.name} reports every task valid`, { timeout: 20 * 60_000 }, async (t) => {
        const missing = await kit.skip([IMAGE, baseImageName('java', '17')]);
        if (missing) return t.skip(missing);
        const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-cvalidate-'));
        try {
          const serverId = `test-validate-${randomBytes(4).toString('hex')}`;
          const { code, stdout, stderr } = await benchgym(
            ['validate', '--suite', 'examples', ...kit.cli.args, '--server-id', serverId, '--json', '--data-dir', dataDir],
            kit.cli.env,
          );
          assert.equal(code, 0, stderr + stdout);
          const report = JSON.parse(stdout);
          assert.ok(report.results.length >= 6);
          for (const r of report.results) assert.equal(r.status, 'valid', `${r.taskId}: ${r.reasons.join('; ')}`);
        } finally {
          await fs.rm(dataDir, { recursive: true, force: true });
        }
      });

      test(
        'kill -9 of a server with live episodes and a warm pool, then a restart, leaves nothing of ours; a live neighbour keeps its own',
        { timeout: 10 * 60_000 },
        async () => {
          const serverId = `test-reap-${randomBytes(4).toString('hex')}`;
          const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-creap-'));
          const first = serve(kit, serverId, dataDir);
          let second: ReturnType<typeof serve> | undefined;
          try {
            const client = await connect(await first.url, 'reaper-test');
            for (let i = 0; i < 3; i++) {
              const r = await client.callTool({ name: 'start_episode', arguments: { task_id: 'roman-numerals' } }, undefined, {
                timeout: 300_000,
              });
              assert.equal(r.isError, undefined, JSON.stringify(r.content));
            }
            // A claimed pool container keeps its pool label (labels are fixed): wait for the refill too.
            await until(
              'the pool of the first server filled',
              120_000,
              async () =>
                (await kit.sandboxesOf(serverId, 'benchgym.pool=true')).length >= 1 && (await kit.sandboxesOf(serverId)).length >= 4,
            );
            const live = (await kit.sandboxesOf(serverId)).length;
            assert.ok(live >= 4, `${live} sandboxes live: 3 episodes and the pool's`);

            // A second process with the same server id, started while the first lives, leaves the
            // first's episodes alone (two `benchgym` commands on one engine must not reap each other).
            const neighbour = serve(kit, serverId, await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-creap-')));
            try {
              const other = await connect(await neighbour.url, 'reaper-test-2');
              const r = await other.callTool({ name: 'start_episode', arguments: { task_id: 'roman-numerals' } }, undefined, {
                timeout: 300_000,
              });
              assert.equal(r.isError, undefined, JSON.stringify(r.content));
              assert.ok((await kit.sandboxesOf(serverId)).length >= live + 1, "the live server's sandboxes are still there");
              assert.equal((await client.callTool({ name: 'list_tasks', arguments: {} })).isError, undefined);
              await other.close().catch(() => {});
            } finally {
              const gone = new Promise((r) => neighbour.child.once('exit', r));
              neighbour.child.kill('SIGTERM');
              await gone;
            }
            assert.ok((await kit.sandboxesOf(serverId)).length >= 3, 'the neighbour removed only its own');

            first.child.kill('SIGKILL');
            await new Promise((r) => first.child.once('exit', r));
            await client.close().catch(() => {});
            assert.ok((await kit.sandboxesOf(serverId)).length >= 3, 'a killed server cannot clean up after itself');

            second = serve(kit, serverId, dataDir);
            await second.url;
            assert.deepEqual(await kit.sandboxesOf(serverId), [], 'the restarted server reaped the episodes and the pool');
            assert.deepEqual(await kit.volumesOf(serverId), []);
            const exited = new Promise((r) => second!.child.once('exit', r));
            second.child.kill('SIGTERM');
            await exited;
          } finally {
            first.child.kill('SIGKILL');
            second?.child.kill('SIGKILL');
            await kit.purge(serverId);
            await fs.rm(dataDir, { recursive: true, force: true });
          }
        },
      );
    }
  });
}
