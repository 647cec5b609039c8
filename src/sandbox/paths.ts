import { existsSync, constants as C, promises as fs, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { GymError } from '../errors.ts';

/** Linux open(2) flags Node does not name: O_PATH opens a name without opening the file (no FIFO or device open). */
export const O_PATH = 0o10000000;
const MAX_LINK_HOPS = 40;

/**
 * The path a client gave, as components below the workspace root, checked by components
 * only (no file system access). Relative paths are taken from the root; an absolute path is
 * accepted only when it names the root as commands see it (`displayRoot`, e.g. /workspace)
 * or the root itself.
 */
export function workspaceParts(root: string, userPath: string, displayRoot?: string): string[] {
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
  const rel = relativeInside(root, path.resolve(root, candidate));
  if (rel === null) throw new GymError('PATH_OUTSIDE_WORKSPACE', `'${userPath}' is outside the workspace`);
  return rel === '' ? [] : rel.split(path.sep);
}

/** What walkWorkspace found: the directory holding the target, open, and the target if it exists. */
export interface Walked {
  /** The directory holding the target (the root itself when the target is the root), an O_PATH descriptor. */
  parent: FileHandle;
  /** Real components (no symbolic links) of `parent` below the root. */
  parentParts: string[];
  /** The target's name in `parent`; null when the target is the root. */
  name: string | null;
  /** The target, an O_PATH descriptor (its link itself when a final link is not followed); null when missing. */
  target: FileHandle | null;
  /** fstat of `target`. */
  st: Stats | null;
  /** Closes every descriptor the walk holds. */
  close(): Promise<void>;
}

export interface WalkOptions {
  /** Follow a symbolic link in the last component (read, write) or stop at it (stat, remove, lstat). */
  followLast: boolean;
  /** Make missing directories on the way (write); otherwise a missing component ends the walk. */
  makeDirs?: boolean;
  /** Who the directories made belong to (the sandbox's uid when a root server runs commands as another). */
  owner?: { uid: number; gid: number };
}

/** `/proc/self/fd/<fd>/<name>`: resolves `name` inside the directory the descriptor holds, whatever its path is now. */
export function at(dir: FileHandle, name?: string): string {
  return name === undefined ? `/proc/self/fd/${dir.fd}` : `/proc/self/fd/${dir.fd}/${name}`;
}

/**
 * Walks a workspace path one component at a time, opening each with O_NOFOLLOW relative
 * to the directory opened before it (through /proc/self/fd), so no component can be swapped
 * for a symbolic link between a check and a use: the kernel never follows a link here.
 * Links inside the workspace are followed by hand (their target walked again, from the root
 * when absolute) and must stay inside. Nothing is opened as a file: descriptors are O_PATH,
 * so a FIFO or a device is never opened and no thread of the pool can block.
 */
export async function walkWorkspace(
  roots: { root: string; realRoot: string },
  userPath: string,
  parts: string[],
  opts: WalkOptions,
): Promise<Walked> {
  if (!existsSync('/proc/self/fd'))
    throw new GymError('SANDBOX_UNAVAILABLE', 'the local file tools need /proc (Linux) to open paths without following links');
  const held: FileHandle[] = [];
  const open = async (file: string, flags: number) => {
    const fh = await fs.open(file, O_PATH | C.O_NOFOLLOW | flags);
    held.push(fh);
    return fh;
  };
  const release = async (fh: FileHandle) => {
    held.splice(held.indexOf(fh), 1);
    await fh.close().catch(() => {});
  };
  const closeAll = async () => {
    await Promise.all(held.splice(0).map((fh) => fh.close().catch(() => {})));
  };
  const outside = () => new GymError('PATH_OUTSIDE_WORKSPACE', `'${userPath}' leads outside the workspace through a symbolic link`);
  try {
    const root = await open(roots.root, C.O_DIRECTORY).catch((err) => {
      throw new GymError('SANDBOX_UNAVAILABLE', `the workspace cannot be opened: ${(err as NodeJS.ErrnoException).code ?? err}`);
    });
    // The real directories from the root down to where the walk is; each open.
    const stack: { fh: FileHandle; name: string }[] = [];
    const here = () => stack[stack.length - 1]?.fh ?? root;
    const done = (name: string | null, target: FileHandle | null, st: Stats | null): Walked => ({
      parent: here(),
      parentParts: stack.map((s) => s.name),
      name,
      target,
      st,
      close: closeAll,
    });
    // The directory the walk stands in is itself the target (a path or link ending in '..', or a link to '.').
    const herself = async (): Promise<Walked> => {
      const top = stack.pop();
      if (!top) return done(null, root, await root.stat());
      return done(top.name, top.fh, await top.fh.stat());
    };
    const components = (p: string[]) => p.filter((c) => c !== '' && c !== '.');
    const todo = components(parts);
    let hops = 0;
    if (todo.length === 0) return herself();
    while (todo.length) {
      const name = todo.shift()!;
      if (name === '..') {
        const top = stack.pop();
        if (!top) throw outside();
        await release(top.fh);
        if (todo.length === 0) return herself();
        continue;
      }
      const last = todo.length === 0;
      let fh: FileHandle;
      try {
        fh = await open(at(here(), name), 0);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== 'ENOENT') throw err;
        if (last || !opts.makeDirs) return done(name, null, null);
        if (++hops > MAX_LINK_HOPS)
          throw new GymError('SANDBOX_UNAVAILABLE', `'${userPath}' keeps changing while its directories are made`);
        const made = await fs.mkdir(at(here(), name)).then(
          () => true,
          (e: NodeJS.ErrnoException) => {
            if (e.code !== 'EEXIST') throw e;
            return false;
          },
        );
        if (made && opts.owner) await fs.lchown(at(here(), name), opts.owner.uid, opts.owner.gid);
        todo.unshift(name);
        continue;
      }
      const st = await fh.stat();
      if (st.isSymbolicLink()) {
        if (last && !opts.followLast) return done(name, fh, st);
        await release(fh);
        if (++hops > MAX_LINK_HOPS)
          throw new GymError('INVALID_ARGUMENT', `invalid 'path': '${userPath}' goes through a loop of symbolic links`);
        let link: string;
        try {
          link = await fs.readlink(at(here(), name));
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          // Swapped for something else since the open: look at the name again.
          if (code !== 'EINVAL' && code !== 'ENOENT') throw err;
          todo.unshift(name);
          continue;
        }
        if (path.isAbsolute(link)) {
          const rel = relativeInside(roots.root, link) ?? relativeInside(roots.realRoot, link);
          if (rel === null) throw outside();
          // An absolute target is walked from the root again.
          for (const s of stack.splice(0)) await release(s.fh);
          todo.unshift(...components(rel.split(path.sep)));
        } else {
          todo.unshift(...components(link.split('/')));
        }
        if (todo.length === 0) return herself();
        continue;
      }
      if (st.isDirectory() && !last) {
        stack.push({ fh, name });
        continue;
      }
      if (last) return done(name, fh, st);
      throw new GymError('NOT_A_DIRECTORY', `a parent of '${userPath}' is not a directory`);
    }
    throw new GymError('INTERNAL', `the walk of '${userPath}' ended without a target`);
  } catch (err) {
    await closeAll();
    throw err;
  }
}

/**
 * Resolves a path a client gave and proves it stays inside the workspace, walking it
 * without following any link (links inside are followed by hand): for checks and messages.
 * Files are opened only through the walk itself (local/files.ts), never by the path this returns.
 */
export async function resolveInWorkspace(root: string, userPath: string, displayRoot?: string): Promise<{ abs: string; rel: string }> {
  const parts = workspaceParts(root, userPath, displayRoot);
  const realRoot = await fs.realpath(root);
  const walked = await walkWorkspace({ root, realRoot }, userPath, parts, { followLast: true });
  await walked.close();
  return { abs: path.join(realRoot, ...parts), rel: parts.join('/') };
}

/** The relative path of `target` inside `root` compared by components, or null when outside. */
export function relativeInside(root: string, target: string): string | null {
  const rel = path.relative(path.resolve(root), path.resolve(target));
  if (rel === '') return '';
  if (path.isAbsolute(rel)) return null;
  const first = rel.split(path.sep)[0];
  return first === '..' ? null : rel;
}
