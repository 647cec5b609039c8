import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHttpServer, type RunningServer } from '../../src/server/http.ts';
import type { Gym } from '../../src/episode/gym.ts';
import { PROJECT_ROOT } from '../../src/project.ts';
import { makeGym } from '../helpers.ts';
import { episodePath } from '../../src/protocol/capability.ts';

/**
 * Paths of the developers' machines: none belongs in the project. Built from pieces so that
 * this file does not hold them itself. `/home/travis/` is CoderEval's own path (its platform's
 * image keeps the projects under /home/travis/builds/repos), not a machine's; `/home/fix.patch` and
 * `/home/test.patch` are the files Multi-SWE-bench's harness writes in its containers (the suite's
 * README quotes its commands).
 */
const SLASH = '/';
const MACHINE_PATHS: { name: string; pattern: RegExp; docsOnly?: boolean }[] = [
  { name: `${SLASH}work${SLASH}`, pattern: new RegExp(`${SLASH}work${SLASH}`) },
  { name: `${SLASH}root${SLASH}`, pattern: new RegExp(`(^|[^\\w.~-])${SLASH}root${SLASH}`) },
  {
    name: `${SLASH}home${SLASH}<user>`,
    pattern: new RegExp(`${SLASH}home${SLASH}(?!travis${SLASH}|(fix|test)\\.patch\\b)[A-Za-z_][\\w.-]*`),
  },
  { name: `${SLASH}Users${SLASH}<user>`, pattern: new RegExp(`${SLASH}Users${SLASH}[A-Za-z_][\\w.-]*${SLASH}`) },
  { name: `${SLASH}tmp${SLASH}swb`, pattern: new RegExp(`${SLASH}tmp${SLASH}swb`) },
  // The developers' side-by-side data folder: docs name DATA (and say where to get it) instead.
  { name: `..${SLASH}shared${SLASH}`, pattern: new RegExp(`\\.\\.${SLASH}shared${SLASH}`), docsOnly: true },
];

/** The project's files: tracked ones and new ones not ignored (so a path is caught before it is committed). */
function projectFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: PROJECT_ROOT,
    maxBuffer: 64 << 20,
  });
  const self = path.relative(PROJECT_ROOT, fileURLToPath(import.meta.url));
  return [...new Set(out.toString('utf8').split('\0').filter(Boolean))].filter((f) => f !== self && f !== 'package-lock.json');
}

function machinePathHits(file: string, text: string): string[] {
  const hits: string[] = [];
  const lines = text.split('\n');
  for (const [i, line] of lines.entries()) {
    for (const p of MACHINE_PATHS) {
      if (p.docsOnly && !file.endsWith('.md')) continue;
      if (p.pattern.test(line)) hits.push(`${file}:${i + 1}: ${p.name}: ${line.trim().slice(0, 160)}`);
    }
  }
  return hits;
}

describe("no path of the developers' machines in the project", () => {
  test("the patterns catch machine paths and spare the benchmark's own", () => {
    const sample = (s: string) => machinePathHits('x.md', s.replaceAll('|', SLASH));
    assert.equal(sample('cd |work|main').length, 1);
    assert.equal(sample('cp |root|.cache x').length, 1);
    assert.equal(sample('ls |home|alice|data').length, 1);
    assert.equal(sample('--dataset ..|shared|datasets|codereval').length, 1);
    assert.deepEqual(sample('sys.path.append("|home|travis|builds|repos|x")'), []);
    assert.deepEqual(sample('git apply |home|test.patch |home|fix.patch'), []);
    assert.equal(sample('cd |home|fixer').length, 1);
    assert.deepEqual(sample('DATA|codereval and MIRRORS|google+gson|repo'), []);
    assert.deepEqual(machinePathHits('x.ts', '..|shared|'.replaceAll('|', SLASH)), [], 'tests read ../shared data, skipping without it');
  });

  test('no tracked or new file holds one', () => {
    const hits: string[] = [];
    for (const file of projectFiles()) {
      const abs = path.join(PROJECT_ROOT, file);
      if (!existsSync(abs) || !statSync(abs).isFile()) continue; // deleted in the work tree, or a submodule
      const bytes = readFileSync(abs);
      if (bytes.includes(0)) continue; // binary
      hits.push(...machinePathHits(file, bytes.toString('utf8')));
    }
    assert.equal(hits.length, 0, `machine paths found (use placeholders such as DIR, DATA, MIRRORS):\n${hits.join('\n')}`);
  });
});

/** Every count of episode tools the docs state: "N core episode tools", "N tools for an `examples` episode". */
function statedToolCounts(): { where: string; kind: 'core' | 'examples'; count: number }[] {
  const files = [
    'README.md',
    'agents/README.md',
    ...['ARCHITECTURE.md', 'BENCHMARKS.md', 'PROTOCOL.md'].map((f) => path.join('docs', f)),
    ...['codereval', 'examples', 'gitchameleon', 'humanevo', 'swebench'].map((e) => path.join('envs', e, 'README.md')),
  ].filter((f) => existsSync(path.join(PROJECT_ROOT, f)));
  const stated: { where: string; kind: 'core' | 'examples'; count: number }[] = [];
  for (const file of files) {
    const text = readFileSync(path.join(PROJECT_ROOT, file), 'utf8');
    const at = (index: number) => `${file}:${text.slice(0, index).split('\n').length}`;
    for (const m of text.matchAll(/\b(\d+)\s+core\s+episode\s+tools\b/g))
      stated.push({ where: at(m.index), kind: 'core', count: Number(m[1]) });
    for (const m of text.matchAll(/\b(\d+)\s+tools\s+for\s+an\s+`examples`\s+episode\b/g))
      stated.push({ where: at(m.index), kind: 'examples', count: Number(m[1]) });
    // A bare "N episode tools" says nothing true for every suite: the core ones and the suite's own differ.
    for (const m of text.matchAll(/\b(\d+)\s+(?:\[)?episode\s+tools\b/g))
      stated.push({ where: `${at(m.index)} (say "N core episode tools")`, kind: 'core', count: -1 });
  }
  return stated;
}

describe('the tool counts the docs state', () => {
  let gym: Gym;
  let cleanup: () => Promise<void>;
  let server: RunningServer;

  before(async () => {
    ({ gym, cleanup } = await makeGym());
    server = await startHttpServer(gym, { port: 0 });
  });

  after(async () => {
    await server.close();
    await cleanup();
  });

  test("README states the tools an episode endpoint serves, and every doc's count is what the endpoint lists", async () => {
    const readme = readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
    assert.match(readme, /serves only the \d+ core episode tools/, 'README says how many tools an episode endpoint serves');
    const episode = await gym.startEpisode({ suite: 'examples', taskId: 'roman-numerals' });
    const client = new Client({ name: 'benchgym-docs-test', version: '0.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}${episodePath(episode, 'mcp')}`)));
    try {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      assert.ok(names.includes('submit') && !names.includes('start_episode'), names.join(', '));
      const suiteOwn = new Set(gym.registry.toolsOf('examples').map((t) => t.name));
      const core = names.filter((n) => !suiteOwn.has(n));
      const expected = { core: core.length, examples: names.length };
      const stated = statedToolCounts();
      assert.ok(stated.some((s) => s.kind === 'core') && stated.some((s) => s.kind === 'examples'));
      const wrong = stated.filter((s) => s.count !== expected[s.kind]);
      assert.deepEqual(
        wrong,
        [],
        `an examples episode's endpoint lists ${names.length} tools, ${core.length} of them core (${names.join(', ')})`,
      );
    } finally {
      await client.close();
    }
  });
});
