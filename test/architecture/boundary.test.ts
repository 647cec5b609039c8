/**
 * The core's boundary: src/ imports nothing of envs/ (the suites), agents/ or bin/ (the
 * composition root), and no file of src/ imports itself through others at run time; the
 * core's folders stand on floors (rules.ts, FLOORS) and import only downward; a backend or a
 * suite is reached through its index.ts; a suite imports no other suite.
 * No allow-list: a suite or an agent plugs in through the contracts the core owns.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/project.ts';
import { cycles, importsOf, tsFiles, type ImportEdge } from './imports.ts';
import { facedFolders, importsAroundFaces, suitesImportingSuites, upwardImports } from './rules.ts';

const core = tsFiles(PROJECT_ROOT, 'src');
const edges = core.flatMap((f) => importsOf(PROJECT_ROOT, f));

test('the import reader sees the core: every folder of src/ and its imports', () => {
  assert.ok(core.length > 100, `only ${core.length} files read under src/`);
  for (const folder of ['agent', 'cli', 'env', 'episode', 'replay', 'runner', 'sandbox', 'scoring', 'server', 'tasks', 'tools']) {
    assert.ok(
      core.some((f) => f.startsWith(`src${path.sep}${folder}${path.sep}`)),
      `no file read in src/${folder}`,
    );
  }
  assert.ok(
    edges.some((e) => e.from === path.join('src', 'episode', 'gym.ts') && e.to === path.join('src', 'tasks', 'registry.ts')),
    'gym.ts → registry.ts not seen',
  );
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
  assert.deepEqual(
    found.map((c) => c.join(' → ')),
    [],
    'files that import each other',
  );
});

test('the cycle finder finds cycles and the reader tells type-only imports apart', () => {
  const e = (from: string, to: string, typeOnly = false) => ({ from, to, typeOnly, line: 1 });
  assert.deepEqual(cycles([e('a', 'b'), e('b', 'c'), e('c', 'a'), e('c', 'd')]), [['a', 'b', 'c']]);
  assert.deepEqual(cycles([e('a', 'a')]), [['a']]);
  assert.deepEqual(cycles([e('a', 'b'), e('b', 'c')]), []);
  const gym = importsOf(PROJECT_ROOT, path.join('src', 'tools', 'types.ts'));
  assert.ok(
    gym.some((x) => x.to === path.join('src', 'episode', 'gym.ts') && x.typeOnly),
    'tools/types.ts imports the Gym type only',
  );
});

/** Every import of the code that ships (tests reach into what they test). */
function projectEdges(root: string): ImportEdge[] {
  const dirs = ['src', 'envs', 'agents', 'bin', 'bench'].filter((d) => existsSync(path.join(root, d)));
  return dirs.flatMap((d) => tsFiles(root, d)).flatMap((f) => importsOf(root, f));
}

const project = projectEdges(PROJECT_ROOT);

test('the core imports only from its own floor or below (run-time imports)', () => {
  assert.deepEqual(upwardImports(edges), [], 'move the helper down to the floor of its users, or add the folder to a floor in rules.ts');
});

test('another folder reaches a sandbox backend or a suite only through its index.ts', () => {
  const faced = facedFolders(PROJECT_ROOT);
  assert.ok(faced.includes(path.join('src', 'sandbox', 'docker')) && faced.includes(path.join('envs', 'gitchameleon')), faced.join(', '));
  assert.deepEqual(importsAroundFaces(project, faced), [], "export it from the folder's index.ts");
});

test('no suite imports another suite', () => {
  assert.deepEqual(suitesImportingSuites(project), [], 'move what two suites share into the core');
});

/** A small tree of files, each importing the paths given, in a temporary directory. */
function plant(files: Record<string, string[]>): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'benchgym-boundary-'));
  for (const [file, imports] of Object.entries(files)) {
    mkdirSync(path.join(root, path.dirname(file)), { recursive: true });
    writeFileSync(path.join(root, file), imports.map((i, n) => `import { x${n} } from '${i}';\n`).join('') + 'export const x = 1;\n');
  }
  planted.push(root);
  return root;
}
const planted: string[] = [];
after(() => planted.forEach((d) => rmSync(d, { recursive: true, force: true })));

const CLEAN = {
  'src/errors.ts': [],
  'src/tasks/schema.ts': ['../errors.ts'],
  'src/episode/gym.ts': ['../tasks/schema.ts', '../sandbox/docker/index.ts'],
  'src/sandbox/docker/index.ts': ['./factory.ts'],
  'src/sandbox/docker/factory.ts': ['../../tasks/schema.ts'],
  'envs/one/index.ts': ['./tools.ts', '../../src/tasks/schema.ts'],
  'envs/one/tools.ts': [],
  'envs/two/index.ts': ['../../src/episode/gym.ts'],
  'src/protocol/mcp.ts': ['../episode/gym.ts'],
  'src/protocol/access.ts': [],
  'src/agent/session.ts': ['../protocol/mcp.ts'],
  'src/viewer/server.ts': ['../protocol/access.ts'],
  'src/server/http.ts': ['../viewer/server.ts', '../protocol/access.ts', '../protocol/mcp.ts'],
};

test('the rules pass a clean planted tree, and each fails on its planted import', () => {
  const clean = plant(CLEAN);
  const cleanEdges = projectEdges(clean);
  assert.ok(cleanEdges.length >= 7, `only ${cleanEdges.length} imports read`);
  assert.deepEqual(upwardImports(cleanEdges), []);
  assert.deepEqual(importsAroundFaces(cleanEdges, facedFolders(clean)), []);
  assert.deepEqual(suitesImportingSuites(cleanEdges), []);

  // An upward import: the tasks floor (the ground's first) imports the episode floor.
  const up = projectEdges(plant({ ...CLEAN, 'src/tasks/schema.ts': ['../errors.ts', '../episode/gym.ts'] }));
  assert.deepEqual(upwardImports(up), [
    `${path.join('src', 'tasks', 'schema.ts')}:2 imports ${path.join('src', 'episode', 'gym.ts')} (floor 1 imports floor 7)`,
  ]);
  // The agents and the viewer stand below the server: neither reaches into it (they once shared a floor).
  const served = projectEdges(
    plant({
      ...CLEAN,
      'src/agent/session.ts': ['../server/http.ts'],
      'src/viewer/server.ts': ['../protocol/access.ts', '../server/http.ts'],
    }),
  );
  assert.deepEqual(upwardImports(served), [
    `${path.join('src', 'agent', 'session.ts')}:1 imports ${path.join('src', 'server', 'http.ts')} (floor 9 imports floor 13)`,
    `${path.join('src', 'viewer', 'server.ts')}:2 imports ${path.join('src', 'server', 'http.ts')} (floor 12 imports floor 13)`,
  ]);
  // A type-only import is erased at run time: not a floor's concern.
  const typeOnly = plant(CLEAN);
  writeFileSync(path.join(typeOnly, 'src/tasks/schema.ts'), "import type { Gym } from '../episode/gym.ts';\nexport type G = Gym;\n");
  assert.deepEqual(upwardImports(projectEdges(typeOnly)), []);

  // Around an index.ts: the episode floor imports the Docker backend's factory itself.
  const around = projectEdges(plant({ ...CLEAN, 'src/episode/gym.ts': ['../tasks/schema.ts', '../sandbox/docker/factory.ts'] }));
  assert.deepEqual(
    importsAroundFaces(around, [path.join('src', 'sandbox', 'docker'), path.join('envs', 'one'), path.join('envs', 'two')]),
    [
      `${path.join('src', 'episode', 'gym.ts')}:2 imports ${path.join('src', 'sandbox', 'docker', 'factory.ts')} around ${path.join('src', 'sandbox', 'docker', 'index.ts')}`,
    ],
  );

  // A suite importing another (through its index.ts or around it: both refused).
  const suites = projectEdges(plant({ ...CLEAN, 'envs/two/index.ts': ['../../src/episode/gym.ts', '../one/index.ts'] }));
  assert.deepEqual(suitesImportingSuites(suites), [
    `${path.join('envs', 'two', 'index.ts')}:2 imports ${path.join('envs', 'one', 'index.ts')}: a suite stands alone`,
  ]);
});
