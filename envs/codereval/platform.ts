import { scanLines } from './pysource.ts';
import { STDLIB_MODULES } from './stdlib.ts';

/**
 * What the platform's test harness itself brings besides the standard library: its tests
 * serialise inputs and outputs with dill (some import it without using it). The plain
 * interpreter of runnable tasks gets it; nothing of any project.
 */
export const HARNESS_REQUIREMENTS = ['dill==0.3.8'];
const HARNESS_MODULES = new Set(['dill']);

/** Block headers whose bodies do not run when the file runs (or only with an ImportError handler). */
const INERT_BLOCK = /^(async\s+def|def|class|try)\b|^if\s+(\w+\.)?TYPE_CHECKING\b/;

/**
 * Why a test file cannot run on a plain interpreter: the modules it imports when it runs
 * (module level and its __main__ block; not inside functions, classes, `try` blocks or
 * TYPE_CHECKING) that are neither the standard library nor the harness's, and the paths of
 * CoderEval's image it reads (`/home/travis/...`, other than `sys.path` lines). Empty when
 * the standard library is enough.
 */
export function platformNeeds(src: string): string[] {
  const lines = src.split('\n');
  const info = scanLines(src);
  const stack: { indent: number; header: string }[] = [];
  const modules = new Set<string>();
  const paths: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const l = info[i]!;
    const text = lines[i]!.trim();
    if (l.continuation || l.blank) continue;
    if (/^[)\]}]/.test(text)) continue;
    while (stack.length && stack.at(-1)!.indent >= l.indent) stack.pop();
    const inert = stack.some((s) => INERT_BLOCK.test(s.header));
    if (!inert) {
      const imp = /^import\s+(.+)$/.exec(text);
      if (imp) for (const part of imp[1]!.split('#')[0]!.split(',')) modules.add(part.trim().split(/\s+/)[0]!.split('.')[0]!);
      const from = /^from\s+(\S+)\s+import\b/.exec(text);
      if (from) modules.add(from[1]!.startsWith('.') ? '.' : from[1]!.split('.')[0]!);
    }
    if (text.endsWith(':') || /^(async\s+def|def|class)\b/.test(text)) stack.push({ indent: l.indent, header: text });
  }
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!.trim();
    if (text.includes('/home/travis/') && !text.startsWith('#') && !/\bsys\.path\b/.test(text)) paths.push(text);
  }
  const reasons: string[] = [];
  const missing = [...modules].filter((m) => m && !STDLIB_MODULES.has(m) && !HARNESS_MODULES.has(m)).sort();
  if (missing.length) reasons.push(`imports ${missing.map((m) => (m === '.' ? 'its own package (relative import)' : m)).join(', ')}`);
  if (paths.length) reasons.push(`reads ${/(\/home\/travis\/[^"'\s]*)/.exec(paths[0]!)?.[1] ?? 'files of the image'}`);
  return reasons;
}
