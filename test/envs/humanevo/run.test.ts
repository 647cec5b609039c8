/**
 * `benchgym run` over a built HumanEvo task in both settings: each result records its
 * context, and the report puts the two side by side (the replay agent submits the change's
 * own file, so both settings pass).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { humanevoSuite } from '../../../envs/humanevo/index.ts';
import type { Gym } from '../../../src/episode/gym.ts';
import { agentUnderTest } from '../../../src/runner/agents.ts';
import { AGENTS } from '../../../agents/index.ts';
import { readResults } from '../../../src/runner/results.ts';
import { runExperiment } from '../../../src/runner/runner.ts';
import { writeReport } from '../../../src/runner/report.ts';
import { BUILTIN_SUITES } from '../../../bin/builtins.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { makeGym } from '../../helpers.ts';
import { buildFixture, type BuiltFixture } from './setup.ts';

let f: BuiltFixture;
let gym: Gym;
let cleanup: () => Promise<void>;

before(async () => {
  f = await buildFixture('python', { limit: 1 });
  const registry = new SuiteRegistry([humanevoSuite()]);
  registry.enable(`humanevo=${f.file}`);
  ({ gym, cleanup } = await makeGym({ registry }));
});
after(async () => {
  await cleanup?.();
  await f?.cleanup();
});

test('results record the context each episode ran in; the report compares the settings', async () => {
  const dirs: string[] = [];
  for (const context of ['aware', 'ignored']) {
    const outDir = path.join(f.dir, `run-${context}`);
    const outcome = await runExperiment({
      gym,
      outDir,
      suite: 'humanevo',
      agent: agentUnderTest(AGENTS, 'replay', {}, true),
      model: { model: 'gold' },
      context,
    });
    assert.equal(outcome.results.length, 1);
    const [r] = (await readResults(path.join(outDir, 'results.jsonl'))).records;
    assert.equal(r!.metadata.context, context);
    assert.equal(r!.metadata.dependencyLevel, 'standalone');
    assert.equal(r!.status, 'passed', JSON.stringify(r!.verdict));
    assert.equal(JSON.parse(await fs.readFile(path.join(outDir, 'run.json'), 'utf8')).options.context, context);
    dirs.push(outDir);
  }
  const report = await writeReport(dirs, path.join(f.dir, 'report'), { sections: BUILTIN_SUITES.flatMap((s) => s.reportSections ?? []) });
  assert.match(await fs.readFile(report.md, 'utf8'), /\| gold \| 100\.0% \| 100\.0% \| — \| — \|/);
});
