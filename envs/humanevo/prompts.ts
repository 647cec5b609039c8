import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import type { Language } from './functions.ts';
import type { BuiltTaskRecord } from './record.ts';

/** The paper's static-analysis contexts (§4.3.2), after RLPG: the local file plus one kind of neighbour. */
export const STATIC_CONTEXTS = ['local', 'local+import', 'local+sibling', 'local+sim'] as const;
export type StaticContext = (typeof STATIC_CONTEXTS)[number];

/** Characters of file context a prompt carries at most; the rest is cut with a note. */
export const CONTEXT_BUDGET = 60_000;

export interface Docstrings {
  detailed: string;
  brief: string;
  source: 'repository' | 'file' | 'humanevo';
}

function fence(language: Language): string {
  return language === 'python' ? 'python' : 'java';
}

/** The problem statement: signature, docstring, where it goes, how the episode works. */
export function taskPrompt(rec: BuiltTaskRecord, docstring: string, context: 'aware' | 'ignored'): string {
  const stub = rec.language === 'python' ? 'raises NotImplementedError' : 'throws UnsupportedOperationException';
  const when =
    context === 'aware'
      ? `The repository is as it was when the function was written (${rec.date.slice(0, 10)}, ` +
        `before commit ${rec.commit.slice(0, 12)}); its git history ends there.`
      : 'The repository is at its newest version (the evolving-ignored setting): ' +
        'it may hold code written after this function, and lack code deleted since.';
  return [
    `Implement the body of \`${rec.target.qualname}\` in \`${rec.target.file}\` ` +
      `(${rec.repo}). Its body was removed (it now ${stub}); keep the signature.`,
    '',
    when,
    '',
    `Signature:\n\`\`\`${fence(rec.language)}\n${rec.signature.trim()}\n\`\`\``,
    '',
    `Description:\n${docstring.trim()}`,
    '',
    'Tools: retrieve_context finds code in this repository similar to a query (the description by ' +
      "default); run_tests runs the project's tests (the tests written for this function are hidden); submit when done.",
  ].join('\n');
}

/** Files of the workspace of one language (paths relative to its root), skipping build output and VCS folders. */
export async function sourceFiles(root: string, language: Language): Promise<string[]> {
  const ext = language === 'python' ? '.py' : '.java';
  const out: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    const entries = await fs.readdir(path.join(root, rel), { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (
        e.name === '.git' ||
        e.name === '__pycache__' ||
        e.name === 'target' ||
        e.name === 'node_modules' ||
        e.name.startsWith('.benchgym')
      )
        continue;
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(child);
      else if (e.isFile() && e.name.endsWith(ext)) out.push(child);
    }
  };
  await walk('');
  return out.sort();
}

/** Project files the local file imports (Python: import / from-import, relative too; Java: single-type imports and the same package). */
export function importedFiles(language: Language, local: string, src: string, files: string[]): string[] {
  const set = new Set(files);
  const out = new Set<string>();
  if (language === 'python') {
    const pkgDir = path.posix.dirname(local);
    const candidates = (mod: string): string[] => [
      `${mod.split('.').join('/')}.py`,
      `${mod.split('.').join('/')}/__init__.py`,
      `src/${mod.split('.').join('/')}.py`,
      `src/${mod.split('.').join('/')}/__init__.py`,
    ];
    for (const m of src.matchAll(/^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+([\w \t,().*]+)/gm)) {
      const dots = m[1]!.length;
      const mod = m[2]!;
      const names = m[3]!
        .replace(/[()]/g, '')
        .split(',')
        .map((s) => s.trim().split(/\s+/)[0]!)
        .filter(Boolean);
      let bases: string[];
      if (dots) {
        let dir = pkgDir;
        for (let i = 1; i < dots; i++) dir = path.posix.dirname(dir);
        const rel = mod ? `${dir === '.' ? '' : `${dir}/`}${mod.split('.').join('/')}` : dir;
        bases = [`${rel}.py`, `${rel}/__init__.py`, ...names.map((n) => `${rel}/${n}.py`)];
      } else bases = [...candidates(mod), ...names.flatMap((n) => candidates(`${mod}.${n}`))];
      for (const b of bases) if (set.has(b.replace(/^\.\//, '')) && b !== local) out.add(b.replace(/^\.\//, ''));
    }
    for (const m of src.matchAll(/^[ \t]*import[ \t]+([\w.]+(?:[ \t]*,[ \t]*[\w.]+)*)/gm)) {
      for (const mod of m[1]!.split(',').map((s) => s.trim())) for (const b of candidates(mod)) if (set.has(b) && b !== local) out.add(b);
    }
  } else {
    for (const m of src.matchAll(/^\s*import\s+(static\s+)?([\w.]+)\s*;/gm)) {
      const parts = m[2]!.split('.');
      if (m[1]) parts.pop();
      const suffix = `${parts.join('/')}.java`;
      for (const f of files) if (f.endsWith(`/${suffix}`) && f !== local) out.add(f);
    }
  }
  return [...out].sort();
}

/** Files in the local file's folder. */
export function siblingFiles(local: string, files: string[]): string[] {
  const dir = path.posix.dirname(local);
  return files.filter((f) => f !== local && path.posix.dirname(f) === dir);
}

function nameTokens(file: string): Set<string> {
  const base = path.posix.basename(file).replace(/\.\w+$/, '');
  return new Set(
    base
      .replace(/([a-z])([A-Z])/g, '$1 $2')
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((t) => t && t !== 'test' && t !== 'tests'),
  );
}

/** Files whose names are most like the local file's (name-token Jaccard), up to `k`. */
export function similarFiles(local: string, files: string[], k = 3): string[] {
  const mine = nameTokens(local);
  const scored = files
    .filter((f) => f !== local)
    .map((f) => {
      const theirs = nameTokens(f);
      const inter = [...mine].filter((t) => theirs.has(t)).length;
      const union = new Set([...mine, ...theirs]).size;
      return { f, score: union ? inter / union : 0 };
    })
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.f.localeCompare(b.f));
  return scored.slice(0, k).map((s) => s.f);
}

/** The prompt with the static context's files appended, within CONTEXT_BUDGET characters. */
export async function staticContextPrompt(base: string, rec: BuiltTaskRecord, workspace: string, kind: StaticContext): Promise<string> {
  const local = rec.target.file;
  const localPath = path.join(workspace, local);
  if (!existsSync(localPath)) return base;
  const files = await sourceFiles(workspace, rec.language);
  const localSrc = await fs.readFile(localPath, 'utf8');
  const extra =
    kind === 'local+import'
      ? importedFiles(rec.language, local, localSrc, files)
      : kind === 'local+sibling'
        ? siblingFiles(local, files)
        : kind === 'local+sim'
          ? similarFiles(local, files)
          : [];
  const parts: string[] = [];
  let used = 0;
  let cut = 0;
  for (const f of [local, ...extra]) {
    let text = f === local ? localSrc : await fs.readFile(path.join(workspace, f), 'utf8');
    if (f === local && text.length > CONTEXT_BUDGET) text = excerptAround(text, rec.target.lines[0], CONTEXT_BUDGET - 200);
    const block = `--- ${f}${f === local ? ' (the file the function is in)' : ''}\n\`\`\`${fence(rec.language)}\n${text}\n\`\`\``;
    if (used + block.length > CONTEXT_BUDGET) {
      cut++;
      continue;
    }
    parts.push(block);
    used += block.length;
  }
  const note = cut ? `\n[${cut} file(s) left out: the context is limited to ${CONTEXT_BUDGET} characters]` : '';
  return `${base}\n\nProject context (${kind}):\n\n${parts.join('\n\n')}${note}`;
}

/** Lines around `line` (1-based) that fit in `budget` characters, with markers where lines were left out. */
export function excerptAround(text: string, line: number, budget: number): string {
  const lines = text.split('\n');
  let lo = Math.max(0, Math.min(lines.length - 1, line - 1));
  let hi = lo;
  let size = lines[lo]!.length + 1;
  while (lo > 0 || hi < lines.length - 1) {
    const grew = size;
    if (hi < lines.length - 1 && size + lines[hi + 1]!.length + 1 <= budget) size += lines[++hi]!.length + 1;
    if (lo > 0 && size + lines[lo - 1]!.length + 1 <= budget) size += lines[--lo]!.length + 1;
    if (size === grew) break;
  }
  return [
    lo > 0 ? `# ... ${lo} line(s) left out ...` : '',
    ...lines.slice(lo, hi + 1),
    hi < lines.length - 1 ? `# ... ${lines.length - 1 - hi} line(s) left out ...` : '',
  ]
    .filter((l, i, a) => l || (i > 0 && i < a.length - 1))
    .join('\n');
}
