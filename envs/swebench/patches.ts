import type { PatchMethod } from '../../src/sandbox/types.ts';

/**
 * How SWE-bench's harness applies a candidate patch, in order, the work tree reset between
 * tries: `git apply`, `git apply --3way`, `patch --fuzz=5`.
 */
export const SWEBENCH_PATCH_CHAIN: readonly PatchMethod[] = [
  { kind: 'git-apply' },
  { kind: 'git-apply', args: ['--3way'] },
  { kind: 'patch', fuzz: 5 },
];

/** One file a unified diff touches. */
export interface DiffFile {
  /** Path before (null for an added file). */
  oldPath: string | null;
  /** Path after (null for a deleted file). */
  newPath: string | null;
  status: 'added' | 'deleted' | 'modified' | 'renamed';
}

function unquote(p: string): string {
  if (!p.startsWith('"')) return p;
  // git quotes paths with unusual bytes C-style.
  return JSON.parse(p.replace(/\\([0-7]{3})/g, (_m, o: string) => `\\u00${parseInt(o, 8).toString(16).padStart(2, '0')}`)) as string;
}

function strip(p: string): string | null {
  const u = unquote(p.trim().split('\t')[0]!);
  if (u === '/dev/null') return null;
  return u.replace(/^[ab]\//, '');
}

/**
 * The files a git-style or plain unified diff touches, from its headers (`diff --git`,
 * `new file mode`, `deleted file mode`, `rename from/to`, `---`/`+++`).
 */
export function diffFiles(patch: string): DiffFile[] {
  const files: DiffFile[] = [];
  let cur: DiffFile | null = null;
  const lines = patch.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const git = /^diff --git (?:"?a\/)(.+?)"? (?:"?b\/)(.+?)"?$/.exec(line);
    if (git) {
      cur = { oldPath: git[1]!, newPath: git[2]!, status: 'modified' };
      files.push(cur);
      continue;
    }
    if (line.startsWith('--- ') && lines[i + 1]?.startsWith('+++ ')) {
      const oldPath = strip(line.slice(4));
      const newPath = strip(lines[i + 1]!.slice(4));
      if (!cur || (cur.oldPath !== oldPath && cur.newPath !== newPath && oldPath && newPath)) {
        cur = { oldPath, newPath, status: 'modified' };
        files.push(cur);
      }
      if (oldPath === null) Object.assign(cur, { oldPath: null, status: 'added' });
      if (newPath === null) Object.assign(cur, { newPath: null, status: 'deleted' });
      i++;
      cur = null;
      continue;
    }
    if (!cur) continue;
    if (line.startsWith('new file mode')) Object.assign(cur, { oldPath: null, status: 'added' });
    else if (line.startsWith('deleted file mode')) Object.assign(cur, { newPath: null, status: 'deleted' });
    else if (line.startsWith('rename from ')) Object.assign(cur, { oldPath: unquote(line.slice(12)), status: 'renamed' });
    else if (line.startsWith('rename to ')) Object.assign(cur, { newPath: unquote(line.slice(10)), status: 'renamed' });
  }
  return files;
}

/** Every path a diff touches, before and after. */
export function touchedPaths(patch: string): string[] {
  return [...new Set(diffFiles(patch).flatMap((f) => [f.oldPath, f.newPath].filter((p): p is string => Boolean(p))))];
}
