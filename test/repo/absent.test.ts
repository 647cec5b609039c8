import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { absentFiles, extractTree, git } from '../../src/repo/index.ts';
import { expectGymError, tempDir } from '../helpers.ts';

describe('repo: a commit whose mirror lacks some file contents', () => {
  let root: string;
  let repo: string;
  let base: string;
  before(async () => {
    root = await tempDir('benchgym-absent-');
    repo = path.join(root, 'mirror');
    await git(['init', '-q', '-b', 'main', repo]);
    const g = (args: string[]) => git(args, { cwd: repo });
    await fs.mkdir(path.join(repo, 'docs', 'javadoc'), { recursive: true });
    await fs.mkdir(path.join(repo, 'src'));
    await fs.writeFile(path.join(repo, 'docs', 'javadoc', 'index all.html'), '<html>a large page</html>\n');
    await fs.writeFile(path.join(repo, 'src', 'Lib.java'), 'class Lib {}\n');
    await fs.writeFile(path.join(repo, 'pom.xml'), '<project/>\n');
    await g(['add', '.']);
    await g(['commit', '-q', '-m', 'base']);
    base = (await g(['rev-parse', 'HEAD'])).trim();
  });
  after(() => fs.rm(root, { recursive: true, force: true }));

  it('extracts a complete commit with git archive and reports nothing absent', async () => {
    assert.deepEqual(await absentFiles(repo, base), []);
    const dest = path.join(root, 'complete');
    await fs.mkdir(dest);
    assert.deepEqual(await extractTree(repo, base, dest), []);
    assert.equal(await fs.readFile(path.join(dest, 'src', 'Lib.java'), 'utf8'), 'class Lib {}\n');
    assert.ok(existsSync(path.join(dest, 'docs', 'javadoc', 'index all.html')));
  });

  it('extracts every other file when a blob is gone, names the absent one, and leaves the repository as it was', async () => {
    const blob = (await git(['rev-parse', `${base}:docs/javadoc/index all.html`], { cwd: repo })).trim();
    await fs.rm(path.join(repo, '.git', 'objects', blob.slice(0, 2), blob.slice(2)));
    // git archive itself refuses such a commit.
    assert.notEqual(
      await git(['archive', '--format=tar', base], { cwd: repo }).then(
        () => 0,
        () => 1,
      ),
      0,
    );
    assert.deepEqual(await absentFiles(repo, base), ['docs/javadoc/index all.html']);
    const status = (await git(['status', '--porcelain'], { cwd: repo })).trim();
    const dest = path.join(root, 'lacking');
    await fs.mkdir(dest);
    assert.deepEqual(await extractTree(repo, base, dest), ['docs/javadoc/index all.html']);
    assert.equal(await fs.readFile(path.join(dest, 'src', 'Lib.java'), 'utf8'), 'class Lib {}\n');
    assert.equal(await fs.readFile(path.join(dest, 'pom.xml'), 'utf8'), '<project/>\n');
    assert.equal(existsSync(path.join(dest, 'docs', 'javadoc', 'index all.html')), false);
    assert.equal(existsSync(path.join(dest, '.git')), false);
    // The repository's own index and work tree are untouched (the tree was read into a private index).
    assert.equal((await git(['status', '--porcelain'], { cwd: repo })).trim(), status);
    // The same from a bare mirror (no work tree of its own), as `fetch` and `git clone --mirror` make them.
    // git's own clone refuses a repository that lacks a blob: the object store copied as a bare repository.
    const bare = path.join(root, 'bare.git');
    await fs.cp(path.join(repo, '.git'), bare, { recursive: true });
    await git(['config', 'core.bare', 'true'], { cwd: bare });
    const fromBare = path.join(root, 'lacking-bare');
    await fs.mkdir(fromBare);
    assert.deepEqual(await extractTree(bare, base, fromBare), ['docs/javadoc/index all.html']);
    assert.equal(await fs.readFile(path.join(fromBare, 'src', 'Lib.java'), 'utf8'), 'class Lib {}\n');
  });

  it('refuses a revision that is not there, naming it', async () => {
    const dest = path.join(root, 'none');
    await fs.mkdir(dest);
    assert.equal(await absentFiles(repo, 'f'.repeat(40)), null);
    await expectGymError(extractTree(repo, 'f'.repeat(40), dest), 'ENV_BUILD_FAILED', /the tree of f{40}/);
  });
});
