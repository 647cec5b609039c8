import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import type { AgentContext } from '../../src/agent/types.ts';
import type { Gym } from '../../src/episode/gym.ts';
import { runExperiment } from '../../src/runner/runner.ts';
import type { LocalInstanceFactory } from '../../src/sandbox/local/index.ts';
import type { Task } from '../../src/tasks/schema.ts';
import { localGym, pgrep, tempDir, TEST_CACHE_DIR } from '../helpers.ts';

/**
 * A `benchgym run` whose agent starts a long command, to be killed with -9 mid-episode. The
 * executor's commands die with it (the next test); `escape` adds one that left its group and its
 * marker (setsid env -i), which outlives the server: what the resume cleanup is for.
 */
const CHILD = (ready: string, tag: number, escape = false) => {
  const escaped = escape ? `setsid env -i sleep ${tag} </dev/null >/dev/null 2>&1 & ` : '';
  return (
    `
import { Gym } from ${JSON.stringify(new URL('../../src/episode/gym.ts', import.meta.url).href)};
import { LocalInstanceFactory } from ${JSON.stringify(new URL('../../src/sandbox/local/index.ts', import.meta.url).href)};
import { runExperiment } from ${JSON.stringify(new URL('../../src/runner/runner.ts', import.meta.url).href)};
import { builtinRegistry } from ${JSON.stringify(new URL('../../bin/builtins.ts', import.meta.url).href)};
const [dataDir, outDir, cacheDir] = process.argv.slice(2);
const registry = builtinRegistry();
const sandboxes = new LocalInstanceFactory({
  dataDir, cacheDir, isolation: 'none', privatePaths: registry.privatePaths(),
});
const gym = new Gym({ registry, dataDir, cacheDir, sandboxes });
await runExperiment({
  gym, outDir, suite: 'examples', tasks: ['roman-numerals'], model: { model: 'test-model' },
  agent: { name: 'gold', create: () => ({ run: async (ctx) => {
    void ctx.client.callTool({ name: 'run_command', ` +
    `arguments: { command: '${escaped}touch ${ready}; exec sleep ${tag}', timeout_s: 600 } });
    return new Promise(() => {});
  } }) },
});
`
  );
};

async function waitFor(what: string, ok: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('benchgym run --resume after kill -9', () => {
  const dirs: string[] = [];
  const gyms: Gym[] = [];
  after(async () => {
    for (const g of gyms) await g.close();
    for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
  });

  test(
    "removes the killed run's sandbox folders and what its commands left running, even when its pid is in use again; never a live one's",
    // Only a root server's commands can outlive it: an unprivileged one's each have a pid namespace that dies with the executor.
    { skip: process.getuid?.() === 0 ? false : 'needs a root server' },
    async (t) => {
      const work = await tempDir('benchgym-resume-');
      dirs.push(work);
      const dataDir = path.join(work, 'data');
      const outDir = path.join(work, 'run');
      // Reachable by the sandbox uid (else a root server keeps commands its own, each in a pid namespace that dies with it);
      // the ready file in a folder that uid can write.
      await fs.chmod(work, 0o755);
      await fs.mkdir(path.join(work, 'out'), { mode: 0o777 });
      await fs.chmod(path.join(work, 'out'), 0o777);
      const ready = path.join(work, 'out', 'ready');
      const tag = 9000 + Math.floor(Math.random() * 900);
      await fs.writeFile(path.join(work, 'child.mts'), CHILD(ready, tag, true));
      // A live server on the same data dir, in this very process: its sandbox must survive.
      const live = localGym({ dataDir, cacheDir: TEST_CACHE_DIR, isolation: 'none' });
      gyms.push(live);
      await (live.sandboxes as LocalInstanceFactory).staleSwept;
      const liveEpisode = await live.startEpisode({ suite: 'examples', taskId: 'roman-numerals' });
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(work, 'child.mts'), dataDir, outDir, TEST_CACHE_DIR], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
      try {
        await waitFor('the killed run to start its command', () => existsSync(ready) || child.exitCode !== null, 300_000);
        assert.ok(existsSync(ready), `the run ended early: ${stderr}`);
        // A crash of the whole server, its executors with it (an executor that outlives its server for a moment
        // kills what it runs: the next test): the executors first, so none of them cleans up.
        const executors = spawnSync('pgrep', ['-P', String(child.pid)], { encoding: 'utf8' })
          .stdout.split('\n')
          .filter(Boolean);
        for (const pid of executors) process.kill(Number(pid), 'SIGKILL');
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await exited;
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      const root = path.join(dataDir, 'sandboxes');
      const liveDir = path.dirname(path.dirname(liveEpisode.sandbox.workdir));
      const [dead] = (await fs.readdir(root))
        .filter((n) => n.endsWith('.pid'))
        .map((n) => n.slice(0, -'.pid'.length))
        .filter((n) => path.join(root, n) !== liveDir);
      assert.ok(dead, 'the killed run left its sandboxes folder');
      assert.ok(
        (await fs.readdir(path.join(root, dead))).some((n) => n.startsWith('lsb-')),
        'the killed run left a sandbox',
      );
      // It outlives the run where the killed server ran commands as the sandbox uid with no pid namespace of their own
      // (a root server whose paths that uid can pass); in a pid namespace per command it died with the run's executor.
      const outlived = pgrep(`^sleep ${tag}$`).length > 0;
      if (!outlived) t.diagnostic('the escaped command died with its pid namespace: only the folders are left to clean');
      // In a container the resumed run often gets the killed run's pid: here, this test process's.
      await fs.writeFile(path.join(root, `${dead}.pid`), String(process.pid));
      const gym = localGym({ dataDir, cacheDir: TEST_CACHE_DIR, isolation: 'none' });
      gyms.push(gym);
      try {
        const gold = {
          name: 'gold',
          create: (task: Task) => ({
            run: async (ctx: AgentContext) => {
              for (const [file, content] of Object.entries(task.solution?.files ?? {}))
                await ctx.client.callTool({ name: 'create_file', arguments: { path: file, content, overwrite: true } });
              const r = await ctx.client.callTool({ name: 'submit', arguments: {} });
              return {
                verdict: (r.structuredContent ?? null) as Record<string, unknown> | null,
                submitted: !r.isError,
                stopReason: 'submitted',
                steps: 1,
                usage: { promptTokens: 0, completionTokens: 0, costUsd: 0, calls: 0 },
              };
            },
          }),
        };
        const outcome = await runExperiment({
          gym,
          outDir,
          suite: 'examples',
          tasks: ['roman-numerals'],
          model: { model: 'test-model' },
          agent: gold,
          resume: true,
          retryDelayMs: () => 0,
        });
        assert.equal(outcome.results.length, 1);
        await (gym.sandboxes as LocalInstanceFactory).staleSwept;
        assert.equal(existsSync(path.join(root, dead)), false, "the killed run's sandboxes folder is still there");
        assert.equal(existsSync(path.join(root, `${dead}.pid`)), false);
        if (outlived) await waitFor('the leftover command to be killed', () => pgrep(`^sleep ${tag}$`).length === 0, 5000);
        assert.ok(existsSync(liveEpisode.sandbox.workdir), "a live server's sandbox was removed");
        assert.equal((await liveEpisode.sandbox.exec('echo alive')).stdout, 'alive\n');
      } finally {
        for (const pid of pgrep(`^sleep ${tag}$`)) process.kill(pid, 'SIGKILL');
      }
    },
  );

  test('with the executor, a kill -9 of the server takes its commands with it', async () => {
    const work = await tempDir('benchgym-resume-');
    dirs.push(work);
    const ready = path.join(work, 'ready');
    const tag = 9000 + Math.floor(Math.random() * 900);
    await fs.writeFile(path.join(work, 'child.mts'), CHILD(ready, tag));
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(work, 'child.mts'), path.join(work, 'data'), path.join(work, 'run'), TEST_CACHE_DIR],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    try {
      await waitFor('the killed run to start its command', () => existsSync(ready) || child.exitCode !== null, 300_000);
      assert.ok(existsSync(ready), `the run ended early: ${stderr}`);
      assert.ok(pgrep(`^sleep ${tag}$`).length > 0, 'the command runs');
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
      // The executor sees its channel close and kills what it runs.
      await waitFor('the command to die with the server', () => pgrep(`^sleep ${tag}$`).length === 0, 5000);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      for (const pid of pgrep(`^sleep ${tag}$`)) process.kill(pid, 'SIGKILL');
    }
  });
});
