import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { insideGitDir, linksCreated, patchNames, patchRefusal, unquoteName } from '../../src/sandbox/patch_paths.ts';

/** One patch per format GNU patch reads, each naming `name` as its file. */
const FORMATS: Record<string, (name: string) => string> = {
  'git diff, new file': (n) =>
    `diff --git a/${n} b/${n}\nnew file mode 100755\n--- /dev/null\n+++ b/${n}\n@@ -0,0 +1,2 @@\n+#!/bin/sh\n+touch /tmp/pwned\n`,
  'plain unified': (n) => `--- a/${n}\t2024-01-01 00:00:00\n+++ b/${n}\t2024-01-01 00:00:00\n@@ -1 +1,2 @@\n [core]\n+\tfsmonitor = x\n`,
  'context diff': (n) => `*** a/${n}\t2024-01-01\n--- b/${n}\t2024-01-01\n***************\n*** 0 ****\n--- 1 ----\n+ [core]\n`,
  'Index: line only (a normal diff)': (n) => `Index: ${n}\n0a1\n> [core]\n`,
  'git rename': (n) => `diff --git a/README b/${n}\nsimilarity index 100%\nrename from README\nrename to ${n}\n`,
  'git copy': (n) => `diff --git a/README b/${n}\nsimilarity index 100%\ncopy from README\ncopy to ${n}\n`,
  'quoted git name': (n) => `diff --git "a/${n}" "b/${n}"\nnew file mode 100644\n--- /dev/null\n+++ "b/${n}"\n@@ -0,0 +1 @@\n+x\n`,
};

describe('the names a patch gives, in every format', () => {
  for (const [format, make] of Object.entries(FORMATS)) {
    test(`${format}: a name inside .git (root, nested, any case) is refused, naming it; a name like .github or .gitignore is not`, () => {
      for (const name of ['.git/hooks/post-checkout', 'sub/module/.git/config', '.GIT/info/attributes']) {
        const why = patchRefusal(make(name));
        assert.ok(why, `${format}: ${name} was not refused`);
        assert.match(why, /inside \.git/);
        assert.ok(why.includes(name), why);
      }
      for (const name of ['.github/workflows/ci.yml', '.gitignore', 'docs/x.git/y', 'src/main/java/Git.java']) {
        assert.equal(patchRefusal(make(name)), null, `${format}: ${name}`);
      }
    });
  }

  test('the -p1 prefix is stripped from headers that carry one, not from rename and copy names', () => {
    const names = patchNames(FORMATS['git rename']!('src/B.java'));
    // diff --git's two names, and its whole text (names with spaces split nowhere certain).
    assert.deepEqual(
      names.map((n) => [n.header, n.path]),
      [
        ['diff --git', 'README'],
        ['diff --git', 'src/B.java'],
        ['diff --git', 'README b/src/B.java'],
        ['rename from', 'README'],
        ['rename to', 'src/B.java'],
      ],
    );
    assert.equal(
      patchNames('--- /tmp/x/y\n+++ /tmp/x/y\n')[0]!.path,
      'tmp/x/y',
      'an absolute name stays in the tree, as patch -p1 makes it',
    );
  });

  test('changed lines that look like headers are no names: a removed "-- .git/x" line, an added "++ .git/y"', () => {
    const patch = [
      '--- a/q.sql',
      '+++ b/q.sql',
      '@@ -1,3 +1,3 @@',
      ' select 1;',
      '--- see .git/config',
      '+++ see .git/hooks',
      ' select 2;',
      '',
    ].join('\n');
    assert.deepEqual(
      patchNames(patch).map((n) => n.raw),
      ['a/q.sql', 'b/q.sql'],
    );
    assert.equal(patchRefusal(patch), null);
    // Past the hunk's counted lines, the next file's headers are read again.
    const two = `${patch}--- a/.git/config\n+++ b/.git/config\n@@ -1 +1 @@\n-a\n+b\n`;
    assert.match(patchRefusal(two) ?? '', /\.git\/config/);
  });

  test('a hunk without counts (one line each side) and "\\ No newline" lines are skipped as body', () => {
    const patch = '--- a/f\n+++ b/f\n@@ -1 +1 @@\n--- .git/x\n\\ No newline at end of file\n+++ .git/y\n\\ No newline at end of file\n';
    assert.deepEqual(
      patchNames(patch).map((n) => n.raw),
      ['a/f', 'b/f'],
    );
  });

  test('C-quoted names are unquoted as git writes them (octal bytes, escapes)', () => {
    assert.equal(unquoteName('"a/\\056git/hooks/x"'), 'a/.git/hooks/x');
    assert.equal(unquoteName('"b/caf\\303\\251 \\"q\\".txt"'), 'b/café "q".txt');
    assert.equal(unquoteName('plain'), 'plain');
    assert.match(patchRefusal('diff --git "a/\\056git/hooks/x" "b/\\056git/hooks/x"\nnew file mode 100644\n') ?? '', /\.git\/hooks\/x/);
  });

  test('insideGitDir compares whole components in any case', () => {
    assert.equal(insideGitDir('.git'), true);
    assert.equal(insideGitDir('a/.Git/b'), true);
    assert.equal(insideGitDir('a/.git2/b'), false);
    assert.equal(insideGitDir('a/x.git'), false);
  });
});

describe('links the patch creates', () => {
  const link = (name: string, target: string) =>
    `diff --git a/${name} b/${name}\nnew file mode 120000\n--- /dev/null\n+++ ` +
    `b/${name}\n@@ -0,0 +1 @@\n+${target}\n\\ No newline at end of file\n`;
  const file = (name: string) =>
    `diff --git a/${name} b/${name}\nnew file mode 100644\n--- /dev/null\n+++ b/${name}\n@@ -0,0 +1 @@\n+pwned\n`;

  test('a name beyond a link the same patch creates is refused, in either order; a file beside it is not', () => {
    assert.deepEqual(linksCreated(link('out', '/var/outside/.m2')), ['out']);
    const patches = [
      link('out', '/var/outside/.m2') + file('out/settings.xml'),
      file('out/settings.xml') + link('out', '/var/outside/.m2'),
      link('a/out', '../../x') + file('a/./out/y'),
    ];
    for (const patch of patches) {
      const why = patchRefusal(patch);
      assert.ok(why, patch);
      assert.match(why, /beyond the symbolic link "(a\/)?out" it creates/);
    }
    assert.equal(patchRefusal(link('out', '/var/outside/.m2') + file('outside.txt')), null);
    assert.equal(patchRefusal(link('docs/latest', 'v2')), null, 'a link alone is no write through it');
  });

  test('a directory the patch turns into a link: the files it removes from it are no write through the link', () => {
    const deleted = (name: string) =>
      `diff --git a/${name} b/${name}\ndeleted file mode 100644\nindex ` +
      `3b18e51..0000000\n--- a/${name}\n+++ /dev/null\n@@ -1 +0,0 @@\n-old\n`;
    assert.equal(patchRefusal(link('tests', '/elsewhere') + deleted('tests/conftest.py') + deleted('tests/test_calc.py')), null);
    assert.match(
      patchRefusal(link('tests', '/elsewhere') + deleted('tests/conftest.py') + file('tests/new.py')) ?? '',
      /"b\/tests\/new\.py"/,
    );
  });

  test("which side a name is on: git's a/ and b/, unified ---/+++, context ***/---, rename from/to", () => {
    const sides = (patch: string) => patchNames(patch).map((n) => `${n.header} ${n.side}`);
    assert.deepEqual(sides('--- a/f\n+++ b/f\n'), ['--- old', '+++ new']);
    assert.deepEqual(sides('*** a/f\n--- b/f\n'), ['*** old', '--- new']);
    assert.deepEqual(sides('diff --git a/f b/g\nrename from f\nrename to g\n'), [
      'diff --git old',
      'diff --git new',
      'diff --git either',
      'rename from old',
      'rename to new',
    ]);
  });

  test('a link made by a rename or copy is named by its new name', () => {
    const renamed = 'diff --git a/old b/new\nold mode 100644\nnew mode 120000\nsimilarity index 90%\nrename from old\nrename to new\n';
    assert.deepEqual(linksCreated(renamed), ['new']);
  });
});
