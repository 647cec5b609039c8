import { promises as fs } from 'node:fs';
import path from 'node:path';
import { GymError } from '../errors.ts';

/**
 * Resolves a path a client gave against the workspace root and proves it stays inside,
 * by path components and by real path (symlinks resolved), before anything touches it.
 * Relative paths are taken from the root; an absolute path is accepted only when it
 * names the root as commands see it (`displayRoot`, e.g. /workspace).
 */
export async function resolveInWorkspace(root: string, userPath: string, displayRoot?: string): Promise<{ abs: string; rel: string }> {
  if (typeof userPath !== 'string' || userPath.includes('\0')) {
    throw new GymError('INVALID_ARGUMENT', `invalid 'path': ${JSON.stringify(userPath)}`);
  }
  let candidate = userPath.trim() === '' ? '.' : userPath;
  if (path.isAbsolute(candidate)) {
    const rel = relativeInside(displayRoot ?? root, candidate) ?? relativeInside(root, candidate);
    if (rel === null) {
      throw new GymError('PATH_OUTSIDE_WORKSPACE', `'${userPath}' is outside the workspace; use a path relative to the workspace root`);
    }
    candidate = rel || '.';
  }
  const realRoot = await fs.realpath(root);
  const abs = path.resolve(realRoot, candidate);
  const rel = relativeInside(realRoot, abs);
  if (rel === null) throw new GymError('PATH_OUTSIDE_WORKSPACE', `'${userPath}' is outside the workspace`);
  // Resolve the deepest existing ancestor (or the file itself) and check it again:
  // a symlink inside the workspace must not lead out of it.
  let probe = abs;
  for (let hops = 0; ; ) {
    try {
      const real = await fs.realpath(probe);
      if (relativeInside(realRoot, real) === null) {
        throw new GymError('PATH_OUTSIDE_WORKSPACE', `'${userPath}' leads outside the workspace through a symbolic link`);
      }
      break;
    } catch (err) {
      if (err instanceof GymError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR' && code !== 'ELOOP') throw err;
      // A dangling symbolic link: writing through it would create its target, so its
      // target must stay inside too. Follow it by hand.
      const link = await fs.readlink(probe).catch(() => null);
      if (link !== null) {
        if (++hops > 40 || code === 'ELOOP') throw new GymError('INVALID_ARGUMENT', `invalid 'path': '${userPath}' goes through a loop of symbolic links`);
        const realParent = await fs.realpath(path.dirname(probe));
        probe = path.resolve(realParent, link);
        if (relativeInside(realRoot, probe) === null) {
          throw new GymError('PATH_OUTSIDE_WORKSPACE', `'${userPath}' leads outside the workspace through a symbolic link`);
        }
        continue;
      }
      const parent = path.dirname(probe);
      if (parent === probe) break;
      probe = parent;
    }
  }
  return { abs, rel: rel.split(path.sep).join('/') };
}

/** The relative path of `target` inside `root` compared by components, or null when outside. */
export function relativeInside(root: string, target: string): string | null {
  const rel = path.relative(path.resolve(root), path.resolve(target));
  if (rel === '') return '';
  if (path.isAbsolute(rel)) return null;
  const first = rel.split(path.sep)[0];
  return first === '..' ? null : rel;
}
