import { GymError } from '../errors.ts';

/** One entry of a tar stream as read: only regular files and directories are accepted. */
export interface TarEntry {
  path: string;
  type: 'file' | 'dir';
  data: Buffer;
  mode: number;
}

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

function header(name: string, size: number, type: string, mode: number): Buffer {
  const h = Buffer.alloc(512);
  h.write(name.slice(0, 100), 0, 'utf8');
  h.write(octal(mode, 8), 100);
  h.write(octal(0, 8), 108);
  h.write(octal(0, 8), 116);
  h.write(octal(size, 12), 124);
  h.write(octal(Math.floor(Date.now() / 1000), 12), 136);
  h.write('        ', 148);
  h.write(type, 156);
  h.write('ustar\0', 257);
  h.write('00', 263);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(octal(sum, 7) + ' ', 148);
  return h;
}

function pad(size: number): Buffer {
  return Buffer.alloc((512 - (size % 512)) % 512);
}

/** A PAX record `"<len> path=<value>\n"`, whose length counts itself. */
function paxRecord(key: string, value: string): Buffer {
  const body = ` ${key}=${value}\n`;
  let len = Buffer.byteLength(body) + 1;
  while (String(len).length + Buffer.byteLength(body) !== len) len = String(len).length + Buffer.byteLength(body);
  return Buffer.from(`${len}${body}`);
}

/** Packs files (POSIX relative paths) into a tar archive; long names use PAX headers. */
export function packTar(files: Record<string, string | Buffer>, mode = 0o644): Buffer {
  const parts: Buffer[] = [];
  for (const [rel, content] of Object.entries(files)) {
    const name = safeEntryPath(rel);
    const data = Buffer.isBuffer(content) ? content : Buffer.from(content);
    if (Buffer.byteLength(name) > 100) {
      const pax = paxRecord('path', name);
      parts.push(header('PaxHeader', pax.length, 'x', 0o644), pax, pad(pax.length));
    }
    parts.push(header(name, data.length, '0', mode), data, pad(data.length));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

/** Rejects absolute paths and `..` components: a tar entry must stay below where it lands. */
export function safeEntryPath(name: string): string {
  const clean = name.replace(/^\.\/+/, '').replace(/\/+$/, '');
  if (!clean || clean.startsWith('/') || clean.split('/').some((c) => c === '..') || clean.includes('\0')) {
    throw new GymError('SANDBOX_UNAVAILABLE', `refusing tar entry with unsafe path '${name}'`);
  }
  return clean;
}

function readString(buf: Buffer, start: number, len: number): string {
  const raw = buf.subarray(start, start + len);
  const nul = raw.indexOf(0);
  return raw.subarray(0, nul < 0 ? raw.length : nul).toString('utf8');
}

/**
 * Reads a tar archive in memory, checking every entry: no absolute paths, no `..`, and no
 * links (a link could point anywhere on the host if it were ever unpacked). Links are
 * reported as errors; nothing is written to disk.
 */
export function unpackTar(archive: Buffer, opts: { maxBytes?: number } = {}): TarEntry[] {
  const entries: TarEntry[] = [];
  let offset = 0;
  let longName: string | undefined;
  let total = 0;
  while (offset + 512 <= archive.length) {
    const h = archive.subarray(offset, offset + 512);
    if (h.every((b) => b === 0)) break;
    const size = parseInt(readString(h, 124, 12).trim() || '0', 8);
    const type = String.fromCharCode(h[156]!) || '0';
    const prefix = readString(h, 345, 155);
    let name = longName ?? (prefix ? `${prefix}/${readString(h, 0, 100)}` : readString(h, 0, 100));
    const data = archive.subarray(offset + 512, offset + 512 + size);
    offset += 512 + size + ((512 - (size % 512)) % 512);
    if (type === 'x' || type === 'L') {
      longName = type === 'L' ? data.toString('utf8').replace(/\0+$/, '') : /(?:^|\n)\d+ path=([^\n]*)\n/.exec(data.toString('utf8'))?.[1];
      continue;
    }
    if (type === 'g') continue;
    longName = undefined;
    name = safeEntryPath(name);
    if (type === '1' || type === '2')
      throw new GymError('SANDBOX_UNAVAILABLE', `refusing link entry '${name}' in a tar stream from a sandbox`);
    if (type !== '0' && type !== '\0' && type !== '5') continue;
    total += size;
    if (opts.maxBytes !== undefined && total > opts.maxBytes)
      throw new GymError('FILE_TOO_LARGE', `the archive holds more than ${opts.maxBytes} bytes`);
    const mode = parseInt(readString(h, 100, 8).trim() || '644', 8);
    entries.push({ path: name, type: type === '5' ? 'dir' : 'file', data: Buffer.from(data), mode });
  }
  return entries;
}
