import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { replaceFilePatch } from '../../src/replay/file_patch.ts';
import { tempDir } from '../helpers.ts';

test('replaceFilePatch applies with git apply: replace, no trailing newline, empty, create, CRLF', async () => {
  const dir = await tempDir('benchgym-gc-patch-');
  try {
    const cases: [string | null, string][] = [
      ['a\nb\n', 'a\nc\nd\n'],
      ['a\nb', 'x\ny'],
      ['a\n', ''],
      ['', 'new\n'],
      [null, 'created\nfile'],
      ['one\r\ntwo\r\n', 'one\r\nthree\r\n'],
      ['\\ not a marker\n', '-minus\n+plus\n'],
    ];
    for (const [i, [before, after]] of cases.entries()) {
      const repo = path.join(dir, String(i));
      await fs.mkdir(repo);
      execFileSync('git', ['init', '-q'], { cwd: repo });
      if (before !== null) await fs.writeFile(path.join(repo, 'sample_1.py'), before);
      await fs.writeFile(path.join(repo, 'p.diff'), replaceFilePatch('sample_1.py', before, after));
      execFileSync('git', ['apply', 'p.diff'], { cwd: repo });
      assert.equal(await fs.readFile(path.join(repo, 'sample_1.py'), 'utf8'), after, `case ${i}`);
    }
    assert.equal(replaceFilePatch('f.py', 'same', 'same'), '');
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});
