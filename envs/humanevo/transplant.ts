import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GymError } from '../../src/errors.ts';
import { isolatedGitEnv, ISOLATED_GIT_FLAGS } from '../../src/sandbox/git_isolation.ts';

/**
 * A unified diff of one file's two versions, with `a/<file>` and `b/<file>` headers (git diff
 * --no-index), outside any repository: none above the temporary directory is looked for.
 */
export async function unifiedDiff(file: string, before: string, after: string): Promise<string> {
  if (before === after) return '';
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-diff-'));
  try {
    await fs.writeFile(path.join(dir, 'a'), before);
    await fs.writeFile(path.join(dir, 'b'), after);
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        'git',
        [...ISOLATED_GIT_FLAGS, 'diff', '--no-index', '--no-color', '--no-ext-diff', '--no-textconv', 'a', 'b'],
        { cwd: dir, env: isolatedGitEnv(dir, { GIT_DIR: '/nonexistent' }), maxBuffer: 1 << 28 },
        (err, stdout, stderr) => {
          // Exit code 1 means "the files differ".
          if (err && (err as { code?: number }).code !== 1) reject(new GymError('INTERNAL', `git diff --no-index failed: ${stderr}`));
          else resolve(String(stdout));
        },
      ),
    );
    return out
      .replace(/^diff --git a\/a b\/b$/m, `diff --git a/${file} b/${file}`)
      .replace(/^--- a\/a$/m, `--- a/${file}`)
      .replace(/^\+\+\+ b\/b$/m, `+++ b/${file}`);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
