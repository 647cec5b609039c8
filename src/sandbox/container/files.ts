import { GymError } from '../../errors.ts';

/** Exit status of a file script that met a FIFO, socket or device; its stderr's last line is `stat -c %F`. */
export const SPECIAL_FILE_EXIT = 97;

/**
 * Refuses "$p" unless it is a regular file (or absent, when `absentOk`), naming its kind.
 * A check, so the open after it is non-blocking too: a FIFO swapped in meanwhile cannot hang the exec.
 */
function plainFileCheck(absentOk: boolean): string {
  const absent = absentOk ? 'if ! test -e "$p" && ! test -h "$p"; then :; el' : '';
  return `${absent}if test -h "$p" || ! test -f "$p"; then stat -c %F -- "$p" >&2; exit ${SPECIAL_FILE_EXIT}; fi`;
}

/** After a failed open: was the name swapped for something that is not a regular file? */
const RECHECK = `rc=$?; if test -e "$p" && ! test -f "$p"; then stat -c %F -- "$p" >&2; exit ${SPECIAL_FILE_EXIT}; fi; exit $rc`;

/**
 * Reads "$p" (resolved by the caller's RESOLVE): missing 93, a directory 94, a special file 97.
 * dd opens with O_NONBLOCK|O_NOFOLLOW (cat would wait forever on a FIFO) and stops after `maxBytes`.
 */
export function readScript(maxBytes: number): string {
  return [
    'test -e "$p" || exit 93',
    'test -d "$p" && exit 94',
    plainFileCheck(false),
    `dd if="$p" iflag=nonblock,nofollow,count_bytes count=${maxBytes} bs=1M status=none || { ${RECHECK}; }`,
  ].join('\n');
}

/** Writes stdin to "$p", making its parents: a directory 94, a parent not a directory 96, a special file 97. */
export const WRITE_SCRIPT = [
  'test -d "$p" && exit 94',
  plainFileCheck(true),
  'mkdir -p -- "$(dirname -- "$p")" 2>/dev/null || exit 96',
  `dd of="$p" oflag=nonblock,nofollow bs=1M status=none || { ${RECHECK}; }`,
].join('\n');

/** NOT_A_FILE naming the kind `stat -c %F` printed, with the client's path. */
export function specialFileError(rel: string, stderr: string): GymError {
  const kind = stderr.trim().split('\n').pop()?.trim() ?? '';
  const named: Record<string, string> = {
    fifo: 'a FIFO (named pipe)',
    socket: 'a socket',
    'character special file': 'a character device',
    'block special file': 'a block device',
    'symbolic link': 'a symbolic link',
  };
  return new GymError('NOT_A_FILE', `'${rel}' is ${named[kind] ?? 'not a regular file'}; file tools read and write regular files only`);
}
