/**
 * No project source line runs past the formatter's width (`.prettierrc.json`, printWidth): prettier
 * breaks code but not strings, template literals or comments, so those are wrapped by hand.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/project.ts';

const WIDTH = (JSON.parse(readFileSync(path.join(PROJECT_ROOT, '.prettierrc.json'), 'utf8')) as { printWidth: number }).printWidth;

/** The files prettier formats: git-tracked *.ts, *.mjs and *.js outside test/fixtures. */
function sourceFiles(root: string): string[] {
  return execFileSync('git', ['ls-files', '-z', '--', '*.ts', '*.mjs', '*.js'], { cwd: root, encoding: 'utf8' })
    .split('\0')
    .filter((f) => f && !f.startsWith('test/fixtures/'));
}

/** `file:line (N characters)` for each line over the width, counted in characters (code points). */
function longLines(root: string, files: string[], width: number): string[] {
  return files.flatMap((f) =>
    readFileSync(path.join(root, f), 'utf8')
      .split('\n')
      .flatMap((line, i) => {
        const n = [...line].length;
        return n > width ? [`${f}:${i + 1} (${n} characters)`] : [];
      }),
  );
}

test('the width is the formatter’s', () => {
  assert.equal(WIDTH, 140);
});

test('the finder names a line over the width by file and line, and counts characters, not bytes', () => {
  const root = PROJECT_ROOT;
  const files = sourceFiles(root);
  assert.ok(files.length > 300, `only ${files.length} files listed`);
  assert.ok(files.includes('src/errors.ts') && files.includes('bin/benchgym.js'));
  assert.ok(!files.some((f) => f.startsWith('test/fixtures/')));
  // A file of this tree read at a narrow width: its longest lines are named.
  const narrow = longLines(root, ['src/errors.ts'], 20);
  assert.ok(narrow.length > 0 && narrow.every((l) => /^src\/errors\.ts:\d+ \(\d+ characters\)$/.test(l)), narrow.join('\n'));
  // '·' is two bytes and one character.
  const line = '·'.repeat(WIDTH);
  assert.equal(Buffer.byteLength(line), 2 * WIDTH);
  assert.equal([...line].length, WIDTH);
});

test(`no source line is over ${WIDTH} characters`, () => {
  assert.deepEqual(
    longLines(PROJECT_ROOT, sourceFiles(PROJECT_ROOT), WIDTH),
    [],
    'wrap them: cut a string into concatenated pieces, a regex into its alternatives, a comment onto more lines',
  );
});
