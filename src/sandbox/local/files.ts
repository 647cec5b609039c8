import { constants as C, promises as fs, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { GymError } from '../../errors.ts';
import { O_PATH, at, walkWorkspace, workspaceParts, type Walked } from '../paths.ts';
import type { DirEntry, FileStat } from '../types.ts';
import { fileTooLarge } from '../read_limit.ts';

/** Directories a listing keeps open for the next level; deeper or wider trees are walked again from the root. */
const LIST_OPEN_DIRS = 256;
/** Tries when the file is swapped between creating and opening it. */
const CREATE_TRIES = 8;

/**
 * The local backend's file operations on one workspace. Every path is walked component by
 * component without the kernel following a link (paths.ts, walkWorkspace), and the file is
 * read or written through the descriptor the walk ended on, never by its path again: no
 * gap between the check and the use. Only regular files with a single name are read or
 * written; FIFOs, sockets and devices are refused before anything opens them, so no thread
 * of Node's pool ever blocks on one.
 */
export class WorkspaceFiles {
  private realRoot?: Promise<string>;

  /** `owner`: who what these tools create belongs to (the sandbox's uid, so commands may change it). */
  constructor(
    readonly root: string,
    private readonly owner?: { uid: number; gid: number },
  ) {}

  private async walk(rel: string, opts: { followLast: boolean; makeDirs?: boolean }): Promise<Walked> {
    const parts = workspaceParts(this.root, rel);
    this.realRoot ??= fs.realpath(this.root);
    return walkWorkspace({ root: this.root, realRoot: await this.realRoot }, rel, parts, {
      ...opts,
      ...(this.owner ? { owner: this.owner } : {}),
    });
  }

  async readFile(rel: string, opts: { maxBytes?: number } = {}): Promise<Buffer> {
    const w = await this.walk(rel, { followLast: true }).catch((err) => {
      throw fileError(err, rel);
    });
    try {
      if (!w.target || !w.st) throw new GymError('FILE_NOT_FOUND', `no such file: '${rel}'`);
      assertPlainFile(w.st, rel);
      const fh = await reopen(w.target, C.O_RDONLY);
      try {
        const st = await fh.stat();
        assertPlainFile(st, rel);
        if (opts.maxBytes !== undefined && st.size > opts.maxBytes) throw fileTooLarge(rel, st.size, opts.maxBytes);
        return await fh.readFile();
      } finally {
        await fh.close();
      }
    } catch (err) {
      throw fileError(err, rel);
    } finally {
      await w.close();
    }
  }

  async writeFile(rel: string, data: string | Buffer): Promise<void> {
    for (let tries = 0; ; tries++) {
      const w = await this.walk(rel, { followLast: true, makeDirs: true }).catch((err) => {
        throw fileError(err, rel);
      });
      try {
        let fh: FileHandle;
        if (!w.target) {
          if (w.name === null) throw new GymError('NOT_A_FILE', `'${rel}' is a directory`);
          try {
            // O_EXCL: a name that appeared since the walk (a link, a FIFO) is looked at again, never opened.
            fh = await fs.open(at(w.parent, w.name), C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW | C.O_NONBLOCK | C.O_NOCTTY, 0o666);
            if (this.owner) await fh.chown(this.owner.uid, this.owner.gid);
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code === 'EEXIST' && tries < CREATE_TRIES) continue;
            throw err;
          }
        } else {
          assertPlainFile(w.st!, rel);
          fh = await reopen(w.target, C.O_WRONLY);
        }
        try {
          assertPlainFile(await fh.stat(), rel);
          await fh.truncate(0);
          await fh.writeFile(data);
        } finally {
          await fh.close();
        }
        return;
      } catch (err) {
        throw fileError(err, rel);
      } finally {
        await w.close();
      }
    }
  }

  /** Removes a file, a link (never what it points to) or a whole tree; a missing path is fine. */
  async remove(rel: string): Promise<void> {
    if (workspaceParts(this.root, rel).length === 0) throw new GymError('INVALID_ARGUMENT', 'refusing to remove the workspace root');
    const w = await this.walk(rel, { followLast: false }).catch((err) => {
      throw fileError(err, rel);
    });
    try {
      if (!w.target || w.name === null) return;
      await removeEntry(w.parent, w.name);
    } catch (err) {
      throw fileError(err, rel);
    } finally {
      await w.close();
    }
  }

  /** The entry itself (a final link is not followed, but must stay inside); null when missing. */
  async stat(rel: string): Promise<FileStat | null> {
    const look = async (followLast: boolean): Promise<Stats | null> => {
      const w = await this.walk(rel, { followLast }).catch((err) => {
        // Below a file: nothing there.
        if (err instanceof GymError && err.code === 'NOT_A_DIRECTORY') return null;
        throw fileError(err, rel);
      });
      await w?.close();
      return w?.st ?? null;
    };
    const st = await look(false);
    if (!st) return null;
    // Where a link leads must stay inside too, existing or not.
    if (st.isSymbolicLink()) await look(true);
    return { type: kindOf(st), size: st.size };
  }

  /** A directory (links followed) as a real path below the root: a command's working directory. */
  async directory(rel: string): Promise<string> {
    const w = await this.walk(rel, { followLast: true }).catch((err) => {
      throw fileError(err, rel);
    });
    try {
      if (!w.st) throw new GymError('FILE_NOT_FOUND', `invalid 'cwd': no such directory '${rel}'`);
      if (!w.st.isDirectory()) throw new GymError('NOT_A_DIRECTORY', `invalid 'cwd': '${rel}' is not a directory`);
      return path.join(this.root, ...w.parentParts, ...(w.name === null ? [] : [w.name]));
    } finally {
      await w.close();
    }
  }

  /** Entries below a directory, breadth-first; links are listed, never followed. */
  async list(rel: string, opts: { depth?: number; limit?: number } = {}): Promise<{ entries: DirEntry[]; truncated: boolean }> {
    const depth = opts.depth ?? 1;
    const limit = opts.limit ?? 1000;
    const w = await this.walk(rel, { followLast: true }).catch((err) => {
      throw fileError(err, rel);
    });
    type Item = { rel: string; real: string[]; fh: FileHandle | null };
    let queue: Item[] = [];
    const entries: DirEntry[] = [];
    try {
      if (!w.st || !w.target) throw new GymError('FILE_NOT_FOUND', `no such file: '${rel}'`);
      if (!w.st.isDirectory()) throw new GymError('NOT_A_DIRECTORY', `'${rel}' is not a directory`);
      const real = [...w.parentParts, ...(w.name === null ? [] : [w.name])];
      queue = [{ rel: workspaceParts(this.root, rel).join('/'), real, fh: await reopen(w.target, O_PATH | C.O_DIRECTORY) }];
    } catch (err) {
      throw fileError(err, rel);
    } finally {
      await w.close();
    }
    // Directories opened ahead for the next level, closed as they are listed (or at the end).
    const ahead = new Set<FileHandle>([queue[0]!.fh!]);
    try {
      for (let level = 0; level < depth && queue.length; level++) {
        const next: Item[] = [];
        for (const dir of queue) {
          const fh = dir.fh ?? (await this.openReal(dir.real));
          if (!fh) continue;
          try {
            const children = await fs.readdir(at(fh), { withFileTypes: true }).catch(() => []);
            children.sort((a, b) => a.name.localeCompare(b.name));
            for (const c of children) {
              if (c.name === '.git' || c.name === '__pycache__') continue;
              if (entries.length >= limit) return { entries, truncated: true };
              const childRel = dir.rel ? `${dir.rel}/${c.name}` : c.name;
              const type = c.isFile() ? 'file' : c.isDirectory() ? 'dir' : c.isSymbolicLink() ? 'symlink' : 'other';
              const size = type === 'file' ? (await fs.lstat(at(fh, c.name)).catch(() => ({ size: 0 }))).size : 0;
              entries.push({ path: childRel, type, size });
              if (type === 'dir' && level + 1 < depth) {
                const child: Item = { rel: childRel, real: [...dir.real, c.name], fh: null };
                if (ahead.size < LIST_OPEN_DIRS) {
                  child.fh = await fs.open(at(fh, c.name), O_PATH | C.O_DIRECTORY | C.O_NOFOLLOW).catch(() => null);
                  if (child.fh) ahead.add(child.fh);
                }
                next.push(child);
              }
            }
          } finally {
            ahead.delete(fh);
            await fh.close().catch(() => {});
          }
        }
        queue = next;
      }
      return { entries, truncated: false };
    } finally {
      await Promise.all([...ahead].map((fh) => fh.close().catch(() => {})));
    }
  }

  /** A directory by its real components, no link followed (null when it is not one any more). */
  private async openReal(real: string[]): Promise<FileHandle | null> {
    let fh = await fs.open(this.root, O_PATH | C.O_DIRECTORY | C.O_NOFOLLOW).catch(() => null);
    for (const name of real) {
      if (!fh) return null;
      const next: FileHandle | null = await fs.open(at(fh, name), O_PATH | C.O_DIRECTORY | C.O_NOFOLLOW).catch(() => null);
      await fh.close().catch(() => {});
      fh = next;
    }
    return fh;
  }
}

/** Opens the file an O_PATH descriptor holds, for real: the same inode, whatever its names are now. */
function reopen(target: FileHandle, flags: number): Promise<FileHandle> {
  return fs.open(at(target), flags | C.O_NONBLOCK | C.O_NOCTTY);
}

/** Only regular files with one name are read or written: a hard link may be a file outside under a name inside. */
function assertPlainFile(st: Stats, rel: string): void {
  if (st.isDirectory()) throw new GymError('NOT_A_FILE', `'${rel}' is a directory`);
  if (!st.isFile()) throw new GymError('NOT_A_FILE', `'${rel}' is ${specialKind(st)}; file tools read and write regular files only`);
  if (st.nlink > 1) {
    throw new GymError(
      'PATH_OUTSIDE_WORKSPACE',
      `'${rel}' is a hard link (${st.nlink} names for one file), which may be a file ` +
        `outside the workspace; file tools refuse hard links (copy the file to work on it)`,
    );
  }
}

function specialKind(st: Stats): string {
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

function kindOf(st: Stats): FileStat['type'] {
  return st.isFile() ? 'file' : st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'symlink' : 'other';
}

/**
 * Removes `name` in `parent` and, for a directory, everything below it: each directory is
 * opened without following links and its entries removed relative to it, so a directory
 * swapped for a link meanwhile loses only the link. What changes under it is looked at again.
 */
async function removeEntry(parent: FileHandle, name: string): Promise<void> {
  for (let tries = 0; ; tries++) {
    const retry = (err: unknown) => {
      if (tries >= 8) throw err;
    };
    const dir = await fs.open(at(parent, name), O_PATH | C.O_DIRECTORY | C.O_NOFOLLOW).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      if (err.code === 'ENOTDIR' || err.code === 'ELOOP') return null;
      throw err;
    });
    if (dir === undefined) return;
    if (dir === null) {
      // Not a directory: removed as a name (a link goes, never what it points to).
      try {
        await fs.unlink(at(parent, name));
        return;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') return;
        // A directory again (EISDIR): go round.
        if (code !== 'EISDIR' && code !== 'EPERM') throw err;
        retry(err);
        continue;
      }
    }
    try {
      for (const child of await fs.readdir(at(dir))) await removeEntry(dir, child);
    } finally {
      await dir.close().catch(() => {});
    }
    try {
      await fs.rmdir(at(parent, name));
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      // Swapped for a link or a file (ENOTDIR), or added to by a running command: go round.
      if (code !== 'ENOTDIR' && code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
      retry(err);
    }
  }
}

/** A GymError naming the client's path only (Node's messages hold /proc/self/fd paths). */
export function fileError(err: unknown, rel: string): GymError {
  if (err instanceof GymError) return err;
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new GymError('FILE_NOT_FOUND', `no such file: '${rel}'`);
  if (code === 'EISDIR') return new GymError('NOT_A_FILE', `'${rel}' is a directory`);
  if (code === 'ENOTDIR' || code === 'EEXIST') return new GymError('NOT_A_DIRECTORY', `a parent of '${rel}' is not a directory`);
  if (code === 'ELOOP') return new GymError('PATH_OUTSIDE_WORKSPACE', `'${rel}' changed into a symbolic link while it was opened`);
  if (code === 'ENXIO' || code === 'EAGAIN' || code === 'EWOULDBLOCK')
    return new GymError('NOT_A_FILE', `'${rel}' is not a regular file, or is in use (${code})`);
  return new GymError('SANDBOX_UNAVAILABLE', `file operation on '${rel}' failed: ${code ?? (err as Error).message}`);
}
