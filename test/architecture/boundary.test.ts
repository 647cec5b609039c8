/**
 * The core's boundary: src/ imports nothing of envs/ (the suites), agents/ or bin/ (the
 * composition root), and no file of src/ imports itself through others at run time.
 * No allow-list: a suite or an agent plugs in through the contracts the core owns.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/project.ts';
import { cycles, importsOf, tsFiles } from './imports.ts';

const core = tsFiles(PROJECT_ROOT, 'src');
const edges = core.flatMap((f) => importsOf(PROJECT_ROOT, f));

test('the import reader sees the core: every folder of src/ and its imports', () => {
  assert.ok(core.length > 100, `only ${core.length} files read under src/`);
  for (const folder of ['agent', 'cli', 'env', 'episode', 'replay', 'runner', 'sandbox', 'scoring', 'server', 'tasks', 'tools']) {
    assert.ok(core.some((f) => f.startsWith(`src${path.sep}${folder}${path.sep}`)), `no file read in src/${folder}`);
  }
  assert.ok(edges.some((e) => e.from === path.join('src', 'episode', 'gym.ts') && e.to === path.join('src', 'tasks', 'registry.ts')), 'gym.ts → registry.ts not seen');
});

test('no file of the core imports a suite, an agent or the composition root', () => {
  const outside = edges.filter((e) => !e.to.startsWith(`src${path.sep}`));
  assert.deepEqual(
    outside.map((e) => `${e.from}:${e.line} imports ${e.to}`),
    [],
    'the core reaches outside src/: give the suite or agent a contract in src/ and register it in bin/builtins.ts',
  );
});

test('no import cycle between files of the core (run-time imports)', () => {
  const found = cycles(edges.filter((e) => !e.typeOnly));
  assert.deepEqual(found.map((c) => c.join(' → ')), [], 'files that import each other');
});

test('the cycle finder finds cycles and the reader tells type-only imports apart', () => {
  const e = (from: string, to: string, typeOnly = false) => ({ from, to, typeOnly, line: 1 });
  assert.deepEqual(cycles([e('a', 'b'), e('b', 'c'), e('c', 'a'), e('c', 'd')]), [['a', 'b', 'c']]);
  assert.deepEqual(cycles([e('a', 'a')]), [['a']]);
  assert.deepEqual(cycles([e('a', 'b'), e('b', 'c')]), []);
  const gym = importsOf(PROJECT_ROOT, path.join('src', 'tools', 'types.ts'));
  assert.ok(gym.some((x) => x.to === path.join('src', 'episode', 'gym.ts') && x.typeOnly), 'tools/types.ts imports the Gym type only');
});
