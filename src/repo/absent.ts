import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { git, runGit, type GitOptions } from './git.ts';

/**
 * The files of `rev` whose contents the repository lacks (a mirror cloned without its largest
 * blobs: jackson-databind's old javadoc pages, packtools' fixtures). Every tree of `rev` must be
 * there to list its files; null when one is not.
 */
export async function absentFiles(repoDir: string, rev: string, g: Omit<GitOptions, 'cwd' | 'input'> = {}): Promise<string[] | null> {
  const files = await runGit(['ls-tree', '-r', '-z', '--format=%(objecttype) %(objectname)\t%(path)', rev], { ...g, cwd: repoDir });
  if (files.exitCode !== 0) return null;
  const blobs = files.stdout
    .split('\0')
    .filter(Boolean)
    .map((l) => ({
      type: l.slice(0, l.indexOf(' ')),
      sha: l.slice(l.indexOf(' ') + 1, l.indexOf('\t')),
      file: l.slice(l.indexOf('\t') + 1),
    }))
    .filter((e) => e.type === 'blob');
  if (!blobs.length) return [];
  const present = new Set(
    (
      await git(['cat-file', '--batch-check=%(objectname) %(objecttype)'], {
        ...g,
        cwd: repoDir,
        input: blobs.map((b) => b.sha).join('\n') + '\n',
      })
    )
      .split('\n')
      .filter((l) => l.endsWith(' blob'))
      .map((l) => l.slice(0, l.indexOf(' '))),
  );
  return blobs.filter((b) => !present.has(b.sha)).map((b) => b.file);
}

/**
 * The files of `rev` written into `dest` (an existing directory), without touching the
 * repository (bare or not): `git archive`, or, when some contents are absent, the tree read
 * into a private index without them and checked out from there. Returns the absent files.
 */
export async function extractTree(
  repoDir: string,
  rev: string,
  dest: string,
  g: Omit<GitOptions, 'cwd' | 'input' | 'env'> = {},
): Promise<string[]> {
  const absent = await absentFiles(repoDir, rev, g);
  if (absent === null)
    await git(['rev-parse', '--verify', `${rev}^{tree}`], { ...g, cwd: repoDir, what: `the tree of ${rev} in ${repoDir}` });
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-tree-'));
  try {
    if (!absent?.length) {
      const archive = path.join(scratch, 'tree.tar');
      await git(['archive', '--format=tar', '-o', archive, rev], { ...g, cwd: repoDir });
      await tar(archive, dest);
      return [];
    }
    // A bare mirror has no work tree of its own: `dest` is the one these commands work on.
    const env = { GIT_INDEX_FILE: path.join(scratch, 'index') };
    await git(['--work-tree', dest, 'read-tree', rev], { ...g, cwd: repoDir, env });
    await git(['--work-tree', dest, 'update-index', '--force-remove', '-z', '--stdin'], {
      ...g,
      cwd: repoDir,
      env,
      input: absent.join('\0') + '\0',
    });
    await git(['--work-tree', dest, 'checkout-index', '--all', '--force'], { ...g, cwd: repoDir, env });
    return absent;
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

function tar(archive: string, dest: string): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile('tar', ['-xf', archive, '-C', dest], (err, _out, stderr) =>
      err ? reject(new Error(`tar -xf ${archive} failed: ${stderr || err.message}`)) : resolve(),
    ),
  );
}
