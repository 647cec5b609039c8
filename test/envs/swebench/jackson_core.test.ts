import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Gym } from '../../../src/episode/gym.ts';
import { locateMirror } from '../../../src/repo/source.ts';
import { runGit } from '../../../src/repo/git.ts';
import { startHttpServer, type RunningServer } from '../../../src/server/http.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { makeGym, TEST_CACHE_DIR } from '../../helpers.ts';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { data, text } from '../../server/scenario.ts';
import { builtinSuites } from '../../../bin/builtins.ts';
import { SWEBENCH_JAVA_DIR } from './data.ts';

// An MCP episode on a real instance (issue 15, point 5): jackson-core-1309 ("allow trailing dot
// for Stringified numbers"). Needs the Multi-SWE-bench records (data.ts) and a mirror of
// FasterXML/jackson-core in BENCHGYM_MIRRORS (a --repos-dir); BENCHGYM_CACHE reuses a warm env
// (else the test cache builds it: dependencies from Maven Central, the whole suite run once).
const DATASET = path.join(SWEBENCH_JAVA_DIR, 'multi-swe-bench-bytedance-java', 'fasterxml__jackson-core_dataset.jsonl');
const MIRRORS = process.env.BENCHGYM_MIRRORS;
const INSTANCE = 'fasterxml__jackson-core-1309';
const BASE = '449ed86748bf672b0a65f13e7f8573298b543384';
const FILE = 'src/main/java/com/fasterxml/jackson/core/io/NumberInput.java';
const F2P = 'com.fasterxml.jackson.core.io.NumberInputTest';
const RETURN = 'return PATTERN_FLOAT.matcher(s).matches();';

// A whole-suite Maven run on a shared machine takes minutes: a generous limit per call.
async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args }, undefined, {
    timeout: 20 * 60_000,
    resetTimeoutOnProgress: true,
    maxTotalTimeout: 30 * 60_000,
    onprogress: () => {},
  })) as CallToolResult;
}

async function skipReason(): Promise<string | false> {
  if (!existsSync(DATASET)) return `the Multi-SWE-bench records are not at ${path.dirname(DATASET)}`;
  if (!MIRRORS) return 'BENCHGYM_MIRRORS (a --repos-dir holding FasterXML/jackson-core) is not set';
  if (!(await locateMirror('fasterxml/jackson-core', MIRRORS))) return `no mirror of FasterXML/jackson-core in ${MIRRORS}`;
  return false;
}
const SKIP = await skipReason();

describe('swe-bench-java: an MCP episode on jackson-core-1309', { skip: SKIP }, () => {
  let gym: Gym;
  let cleanup: () => Promise<void>;
  let returnLine: number;
  before(async () => {
    const pom = await runGit(['show', `${BASE}:${FILE}`], { cwd: (await locateMirror('fasterxml/jackson-core', MIRRORS!))! });
    returnLine = pom.stdout.split('\n').findIndex((l) => l.includes(RETURN)) + 1;
    assert.ok(returnLine > 0, `'${RETURN}' in ${FILE} at the base`);
    const registry = new SuiteRegistry(builtinSuites({ reposDir: MIRRORS! }));
    registry.enable(`swe-bench-java=${DATASET}`);
    ({ gym, cleanup } = await makeGym({ registry, cacheDir: process.env.BENCHGYM_CACHE ?? TEST_CACHE_DIR }));
  });
  after(async () => cleanup?.());

  test(
    'run_tests on the F2P class, a compile error at file:line in view_error_log, the fix, submit: resolved',
    { timeout: 60 * 60_000 },
    async () => {
      const server: RunningServer = await startHttpServer(gym, { port: 0 });
      const client = new Client({ name: 'benchgym-test', version: '0.0.0' });
      try {
        await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
        const started = await call(client, 'start_episode', { suite: 'swe-bench-java', task_id: INSTANCE });
        const args = { episode_id: data(started).episodeId as string };
        assert.match(text(started), /trailing dot|looksLikeValidNumber/i);

        // The F2P class as the base has it (the hidden test patch is not there): it runs and passes.
        const before = await call(client, 'run_tests', { ...args, tests: [F2P] });
        assert.ok(data(before).counts.passed > 0 && data(before).counts.failed === 0, text(before));

        // A fix with its semicolon missing: the compiler's error at NumberInput.java:<line>.
        const broken = await call(client, 'edit_file', {
          ...args,
          path: FILE,
          old_str: RETURN,
          new_str: 'return PATTERN_FLOAT.matcher(s).matches() || s.matches("[+-]?[0-9]+[.]")',
        });
        assert.equal(broken.isError, undefined, text(broken));
        const noCompile = await call(client, 'run_tests', { ...args, tests: [F2P] });
        assert.equal(data(noCompile).counts.passed, 0, text(noCompile));
        const log = await call(client, 'view_error_log', args);
        const errors = data(log).compilerErrors as { file: string; line: number; message: string }[];
        assert.ok(
          errors.some((e) => e.file === FILE && e.line === returnLine && /';' expected/.test(e.message)),
          text(log),
        );
        assert.match(text(log), new RegExp(`${FILE.replace(/[./]/g, '\\$&')}:${returnLine}:\\d+: ';' expected`));

        const fixed = await call(client, 'edit_file', {
          ...args,
          path: FILE,
          old_str: 's.matches("[+-]?[0-9]+[.]")',
          new_str: 's.matches("[+-]?[0-9]+[.]");',
        });
        assert.equal(fixed.isError, undefined, text(fixed));
        const verdict = data(await call(client, 'submit', args));
        assert.equal(verdict.reward, 1, JSON.stringify({ ...verdict, tests: undefined }));
        assert.deepEqual(verdict.failToPass, { passed: [F2P], failed: [] });
        assert.deepEqual(verdict.passToPass.failed, []);
      } finally {
        await client.close();
        await server.close();
      }
    },
  );
});
