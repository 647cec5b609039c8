import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { applyCandidatePatch } from '../../../envs/swebench/scorer.ts';
import { git } from '../../../src/repo/index.ts';
import { LocalSandboxFactory } from '../../../src/sandbox/local/index.ts';
import { tempDir } from '../../helpers.ts';

const LINES = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`);

/** The harness's patch fallbacks on a small repository, no build: which method applies each kind of patch. */
describe('swe-bench-java: applying a candidate patch (git apply → --3way → patch --fuzz=5)', () => {
  let root: string;
  let repo: string;
  let factory: LocalSandboxFactory;
  let patches: Record<string, string>;
  before(async () => {
    root = await tempDir('benchgym-swb-apply-');
    repo = path.join(root, 'repo');
    await fs.mkdir(repo);
    const g = (args: string[]) => git(args, { cwd: repo });
    await g(['init', '-q', '-b', 'main']);
    await fs.writeFile(path.join(repo, 'F.txt'), LINES.join('\n') + '\n');
    await g(['add', '-A']);
    await g(['commit', '-q', '-m', 'v1']);
    const diffOf = async (edit: (lines: string[]) => string[], extra: string[] = []) => {
      await fs.writeFile(path.join(repo, 'F.txt'), edit([...LINES]).join('\n') + '\n');
      const d = await g(['diff', ...extra]);
      await g(['checkout', '-q', '--', 'F.txt']);
      return d;
    };
    // Clean: made against the base.
    const clean = await diffOf((l) => (l.splice(14, 1, 'line 15 fixed'), l));
    // Made against a later version in which line 12 changed too: the context no longer matches,
    // but git knows the preimage blob, so a three-way merge applies it.
    await fs.writeFile(path.join(repo, 'F.txt'), LINES.map((x) => (x === 'line 12' ? 'line 12 (newer)' : x)).join('\n') + '\n');
    await g(['add', '-A']);
    await g(['commit', '-q', '-m', 'newer']);
    const newer = LINES.map((x) => (x === 'line 12' ? 'line 12 (newer)' : x));
    await fs.writeFile(path.join(repo, 'F.txt'), newer.map((x) => (x === 'line 15' ? 'line 15 fixed' : x)).join('\n') + '\n');
    const threeWay = await g(['diff']);
    await g(['checkout', '-q', '--', 'F.txt']);
    await g(['reset', '-q', '--hard', 'HEAD~1']);
    // Without an index line git cannot merge; one context line is off: only fuzz applies it.
    const fuzzy = clean.replace(/^index .*\n/m, '').replace(' line 13\n', ' line 13 (elsewhere)\n');
    // A line it removes is not there at all: nothing can apply it.
    const broken = clean.replace('-line 15\n', '-no such line\n');
    patches = { clean, threeWay, fuzzy, broken, empty: '  \n' };
    factory = new LocalSandboxFactory({ baseDir: path.join(root, 'sandboxes'), isolation: 'none' });
  });
  after(async () => {
    await factory.close();
    await fs.rm(root, { recursive: true, force: true });
  });

  const applied = async (patch: string) => {
    const sandbox = await factory.create({ seed: { dir: repo } });
    try {
      const r = await applyCandidatePatch(sandbox, patch);
      const status = (await sandbox.exec('git status --porcelain')).stdout.trim();
      const text = (await sandbox.readFile('F.txt')).toString('utf8');
      return { ...r, status, fixed: text.includes('line 15 fixed') };
    } finally {
      await sandbox.destroy();
    }
  };

  test('each kind of patch applies with the first method that can, and a patch that cannot leaves the tree clean', async () => {
    const clean = await applied(patches.clean!);
    assert.deepEqual([clean.method, clean.fixed], ['git apply', true], clean.log);
    const threeWay = await applied(patches.threeWay!);
    assert.deepEqual([threeWay.method, threeWay.fixed], ['git apply --3way', true], threeWay.log);
    assert.match(threeWay.log, /\$ git apply --verbose\n[\s\S]*\$ git apply --verbose --3way/);
    const fuzzy = await applied(patches.fuzzy!);
    assert.deepEqual([fuzzy.method, fuzzy.fixed], ['patch --fuzz=5', true], fuzzy.log);
    assert.doesNotMatch(fuzzy.status, /\.orig|\.rej/);
    const broken = await applied(patches.broken!);
    assert.equal(broken.method, 'none', broken.log);
    assert.equal(broken.status, '', 'the failed tries were reset');
    assert.equal((await applied(patches.empty!)).method, 'empty');
  });
});
