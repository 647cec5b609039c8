import { GymError } from '../errors.ts';

/** A compiled glob: `test(path)` runs in time linear in the path (times the glob's size). */
export interface GlobMatcher {
  test(relPath: string): boolean;
}

interface State {
  /** Moves that consume no character. */
  eps: number[];
  /** Moves on one character. */
  on: { ok: (c: string) => boolean; to: number }[];
}

const notSlash = (c: string) => c !== '/';
const anyChar = () => true;
const isSlash = (c: string) => c === '/';

/**
 * Compiles a glob (`**`, `*`, `?`, `[...]`, `{a,b}`) over POSIX relative paths into an NFA
 * simulated state set by state set: a RegExp of `*a*a*a…b` backtracks for minutes on a long
 * name (globs come from agents, through find_files and search), this never does.
 */
export function compileGlob(glob: string): GlobMatcher {
  const states: State[] = [];
  const add = (): number => states.push({ eps: [], on: [] }) - 1;
  let i = 0;

  /** A sequence up to the end, or (inside braces) to the next ',' or '}'; returns [start, end]. */
  const sequence = (depth: number): [number, number] => {
    const start = add();
    let end = start;
    const step = (ok: (c: string) => boolean) => {
      const next = add();
      states[end]!.on.push({ ok, to: next });
      end = next;
    };
    while (i < glob.length) {
      const c = glob[i]!;
      if (depth > 0 && (c === ',' || c === '}')) break;
      i++;
      if (c === '*') {
        const double = glob[i] === '*';
        if (double) i++;
        if (double && glob[i] === '/') {
          // `**/`: nothing, or anything ending in a slash.
          i++;
          const loop = add();
          const next = add();
          states[end]!.eps.push(next, loop);
          states[loop]!.on.push({ ok: anyChar, to: loop }, { ok: isSlash, to: next });
          end = next;
        } else {
          const next = add();
          states[end]!.eps.push(next);
          states[end]!.on.push({ ok: double ? anyChar : notSlash, to: end });
          end = next;
        }
      } else if (c === '?') step(notSlash);
      else if (c === '[') {
        const close = glob.indexOf(']', i);
        if (close < 0) step((x) => x === '[');
        else {
          // One character against a class: a RegExp that cannot backtrack.
          const cls = new RegExp(`^[${glob.slice(i, close).replace(/^!/, '^').replace(/\\/g, '\\\\')}]$`);
          step((x) => cls.test(x));
          i = close + 1;
        }
      } else if (c === '{') {
        const open = add();
        const close = add();
        states[end]!.eps.push(open);
        for (;;) {
          const [s, e] = sequence(depth + 1);
          states[open]!.eps.push(s);
          states[e]!.eps.push(close);
          if (i >= glob.length) throw new GymError('INVALID_ARGUMENT', `invalid glob ${JSON.stringify(glob)}: a '{' is not closed`);
          if (glob[i++] === '}') break;
        }
        end = close;
      } else step((x) => x === c);
    }
    return [start, end];
  };

  const [start, accept] = sequence(0);
  const closure = (set: Set<number>): Set<number> => {
    const stack = [...set];
    while (stack.length) {
      for (const n of states[stack.pop()!]!.eps) {
        if (!set.has(n)) {
          set.add(n);
          stack.push(n);
        }
      }
    }
    return set;
  };
  const initial = closure(new Set([start]));
  return {
    test(relPath: string): boolean {
      let current = initial;
      for (const c of relPath) {
        const next = new Set<number>();
        for (const s of current) for (const move of states[s]!.on) if (move.ok(c)) next.add(move.to);
        if (!next.size) return false;
        current = closure(next);
      }
      return current.has(accept);
    },
  };
}

/** The former name: callers only ever used `.test()`, which a GlobMatcher has. */
export const globToRegExp = compileGlob;

const compiled = new Map<string, GlobMatcher>();

function cachedGlob(glob: string): GlobMatcher {
  let m = compiled.get(glob);
  if (!m) {
    m = compileGlob(glob);
    if (compiled.size >= 256) compiled.clear();
    compiled.set(glob, m);
  }
  return m;
}

/** True when `relPath` matches any glob; a glob without a slash also matches the base name. */
export function matchesAny(relPath: string, globs: string[]): boolean {
  const base = relPath.slice(relPath.lastIndexOf('/') + 1);
  return globs.some((g) => {
    const re = cachedGlob(g);
    return re.test(relPath) || (!g.includes('/') && re.test(base));
  });
}
