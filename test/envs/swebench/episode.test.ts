import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Gym } from '../../../src/episode/gym.ts';
import { git } from '../../../src/repo/index.ts';
import { bubblewrapAvailable } from '../../../src/sandbox/local/index.ts';
import { startHttpServer, type RunningServer } from '../../../src/server/http.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { makeGym, tempDir, testContext } from '../../helpers.ts';
import { call, data, text } from '../../server/scenario.ts';
import { assertNoFutureVisible, buildSwebenchFixture, historyInEpisode, type SwebenchFixture } from './fixture.ts';
import { builtinSuites } from '../../../bin/builtins.ts';

describe('swe-bench-java: episodes on the fixture', () => {
  let root: string;
  let fx: SwebenchFixture;
  let gym: Gym;
  let cleanup: () => Promise<void>;
  let baseHistory: string[];
  let mirrors: string | undefined;
  before(async () => {
    root = await tempDir('benchgym-swebench-ep-');
    // Mirrors outside /tmp (which bubblewrap replaces anyway), so hiding them is the suite's doing.
    mirrors = await fs.mkdtemp('/var/tmp/benchgym-swebench-mirrors-').catch(() => undefined);
    fx = await buildSwebenchFixture(root, { ...(mirrors ? { reposDir: mirrors } : {}) });
    baseHistory = (await git(['log', '--format=%H', fx.base], { cwd: fx.origin })).trim().split('\n');
    const registry = new SuiteRegistry(builtinSuites({ reposDir: fx.reposDir }));
    registry.enable(`swe-bench-java=${fx.dataset}`);
    ({ gym, cleanup } = await makeGym({ registry }));
  });
  after(async () => {
    await cleanup();
    await fs.rm(root, { recursive: true, force: true });
    if (mirrors) await fs.rm(mirrors, { recursive: true, force: true });
  });

  test('git log --all, git tag, git reflog, git branch -a show nothing after the base commit', async () => {
    // The mirror has the future: the fix, a tag on it, a later branch.
    assert.match(await git(['log', '--all', '--format=%H'], { cwd: path.join(fx.reposDir, 'acme+calc.git') }), new RegExp(fx.fix));
    const started = await gym.callTool('start_episode', { suite: 'swe-bench-java', task_id: fx.instanceId }, testContext());
    const id = (started.data as { episodeId: string }).episodeId;
    assert.equal(baseHistory[0], fx.base);
    assertNoFutureVisible(await historyInEpisode(gym, id), fx, baseHistory);
    // Under bubblewrap the mirrors (which hold the fix) are out of reach as well.
    if (await bubblewrapAvailable()) {
      const peek = await gym.callTool(
        'run_command',
        { command: `git --git-dir=${fx.reposDir}/acme+calc.git log --all --format=%H 2>&1; ls -A ${fx.reposDir}` },
        testContext(),
        id,
      );
      assert.ok(!JSON.stringify(peek.data).includes(fx.fix), JSON.stringify(peek.data));
    }
    const words = await gym.callTool('view_file', { path: 'core/src/main/java/com/acme/core/Words.java' }, testContext(), id);
    assert.match(words.text, /text\.split\(" "\)\.length/, 'the workspace is the base commit');
    await gym.callTool('end_episode', {}, testContext(), id);
  });

  test(
    'an agent over MCP: reproduce the issue (failing test), a compile error in view_error_log, fix, passing test, submit: resolved',
    { timeout: 10 * 60_000 },
    async () => {
      const server: RunningServer = await startHttpServer(gym, { port: 0 });
      const client = new Client({ name: 'benchgym-test', version: '0.0.0' });
      try {
        await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
        const started = await call(client, 'start_episode', { suite: 'swe-bench-java', task_id: fx.instanceId });
        const args = { episode_id: data(started).episodeId as string };
        assert.match(text(started), /Words\.count miscounts text with repeated or surrounding spaces/);

        const repro = 'core/src/test/java/com/acme/core/WordsReproTest.java';
        await call(client, 'create_file', {
          ...args,
          path: repro,
          content:
            'package com.acme.core;\n\nimport static org.junit.jupiter.api.Assertions.assertEquals;\n\nimport ' +
            'org.junit.jupiter.api.Test;\n\nclass WordsReproTest {\n  @Test\n  ' +
            'void repeatedSpaces() {\n    assertEquals(2, Words.count("one   two"));\n  }\n}\n',
        });
        const failing = await call(client, 'run_tests', { ...args, tests: ['core:com.acme.core.WordsReproTest'] });
        assert.deepEqual(data(failing).counts, { passed: 0, failed: 1, error: 0, skipped: 0 }, text(failing));
        assert.match(text(failing), /FAILED\s+core:com\.acme\.core\.WordsReproTest#repeatedSpaces — expected: <2> but was: <4>/);

        const file = 'core/src/main/java/com/acme/core/Words.java';
        const broken = await call(client, 'edit_file', {
          ...args,
          path: file,
          old_str: 'return text.split(" ").length;',
          new_str: 'return text.trim().split("\\\\s+").length',
        });
        assert.equal(broken.isError, undefined, text(broken));
        const noCompile = await call(client, 'run_tests', { ...args, tests: ['core:com.acme.core.WordsReproTest'] });
        assert.equal(data(noCompile).counts.passed, 0, text(noCompile));
        const log = await call(client, 'view_error_log', args);
        const errors = data(log).compilerErrors as { file: string; line: number; message: string }[];
        assert.ok(
          errors.some((e) => e.file === file && e.line === 9 && /';' expected/.test(e.message)),
          text(log),
        );
        assert.match(text(log), /core\/src\/main\/java\/com\/acme\/core\/Words\.java:9:\d+: ';' expected/);

        const fixed = await call(client, 'edit_file', {
          ...args,
          path: file,
          old_str: 'return text.trim().split("\\\\s+").length',
          new_str: 'return text.trim().isEmpty() ? 0 : text.trim().split("\\\\s+").length;',
        });
        assert.equal(fixed.isError, undefined, text(fixed));
        const passing = await call(client, 'run_tests', {
          ...args,
          tests: ['core:com.acme.core.WordsReproTest', 'core:com.acme.core.WordsTest'],
        });
        assert.deepEqual(data(passing).counts, { passed: 2, failed: 0, error: 0, skipped: 0 }, text(passing));

        const verdict = data(await call(client, 'submit', args));
        assert.equal(verdict.reward, 1, JSON.stringify(verdict));
        assert.equal(verdict.status, 'passed');
        assert.deepEqual(verdict.failToPass.failed, []);
        assert.deepEqual(verdict.passToPass.failed, []);
        // The agent's own test is not part of the score: it was reset (removed) before the hidden tests ran.
        assert.ok(
          verdict.tests.every((t: { name: string }) => !t.name.includes('WordsReproTest')),
          JSON.stringify(verdict.tests),
        );
      } finally {
        await client.close();
        await server.close();
      }
    },
  );
});
