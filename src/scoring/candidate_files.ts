import { GymError, toGymError, type GymErrorCode } from '../errors.ts';
import type { Sandbox } from '../sandbox/types.ts';

/**
 * Once a candidate's patch is applied, what is at a path is the candidate's doing: the codes
 * the sandbox raises for it (a link out, a directory where a file should be, a file that is
 * gone) make a wrong answer, never an infrastructure error.
 */
export const CANDIDATE_CODES: ReadonlySet<GymErrorCode> = new Set([
  'PATH_OUTSIDE_WORKSPACE',
  'NOT_A_FILE',
  'NOT_A_DIRECTORY',
  'FILE_NOT_FOUND',
  'FILE_EXISTS',
  'INVALID_ARGUMENT',
  'BINARY_FILE',
  'FILE_TOO_LARGE',
]);

export const REFUSED = 'CANDIDATE_FILE_REFUSED';

/**
 * The note for an error the candidate's files caused, or null when the error is the harness's;
 * a step that refuses the candidate's files outright gives its own note (`details.note`).
 */
export function candidateNote(err: unknown): string | null {
  const e = toGymError(err);
  if (e.details?.candidate !== true && !CANDIDATE_CODES.has(e.code)) return null;
  if (e.details?.candidate === true && typeof e.details.note === 'string') return e.details.note;
  return typeof e.details?.path === 'string' ? `${REFUSED}: ${e.details.path} ${e.message}` : `${REFUSED}: ${e.message}`;
}

/** What was removed from a path before the harness laid its own file down there. */
export interface Refused {
  /** The entry removed (the path itself, or a directory on the way to it). */
  path: string;
  /** The path the harness lays down. */
  for: string;
  kind: 'link-out' | 'link-in' | 'dir' | 'not-dir' | 'special' | 'hardlink' | 'relinked';
  detail: string;
}

/**
 * Clears the way for files the harness lays down (hidden tests, test files reset to their
 * start state, its own configuration), never following anything the candidate put there:
 * walking from the workspace root, a symbolic link or a non-directory where a directory
 * should be is removed (a link the start state had is put back as it was and followed), and
 * whatever is at the path itself is removed (a link, a directory, a FIFO or device, a file
 * with other hard links: reported; a plain file: silently). Then writing the file creates a
 * new one inside the workspace. `startLinks` are the start state's own symbolic links (path →
 * target); `links` are start-state links to lay down again (path → target).
 */
export async function clearForHarness(
  sandbox: Sandbox,
  paths: string[],
  opts: { startLinks?: Map<string, string>; links?: Map<string, string>; signal?: AbortSignal } = {},
): Promise<Refused[]> {
  const records: string[] = [];
  for (const [p, target] of opts.startLinks ?? []) records.push(`K${p}`, target);
  for (const p of paths) records.push(`C${p}`);
  for (const [p, target] of opts.links ?? []) records.push(`L${p}`, target);
  if (!paths.length && !opts.links?.size) return [];
  const r = await sandbox.exec(CLEAR_SCRIPT, {
    stdin: records.map((x) => `${x}\0`).join(''),
    timeoutMs: 120_000,
    maxOutputBytes: 64 * 1024 * 1024,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  if (r.timedOut || r.exitCode !== 0)
    throw new GymError(
      'SANDBOX_UNAVAILABLE',
      `clearing the way for the harness's files failed (exit ${r.exitCode}${r.timedOut ? ', timed out' : ''}): ${r.stderr.slice(-500)}`,
    );
  const fields = r.stdout.split('\0');
  const out: Refused[] = [];
  for (let i = 0; i + 3 < fields.length; i += 4) {
    const [kind, at, forPath, detail] = [fields[i]!, fields[i + 1]!, fields[i + 2]!, fields[i + 3]!];
    if (kind === 'stuck')
      throw new GymError('NOT_A_FILE', `could not be removed to lay down ${forPath}: ${detail.trim()}`, { candidate: true, path: at });
    out.push({ kind: kind as Refused['kind'], path: at, for: forPath, detail });
  }
  return out;
}

/** The note for one removed entry, naming its path and why. */
export function refusedNote(r: Refused): string {
  const onTheWay = r.path !== r.for ? `, on the way to ${r.for}` : '';
  const what: Record<Refused['kind'], string> = {
    'link-out': `is a symbolic link out of the workspace (-> ${r.detail})${onTheWay}; removed`,
    'link-in': `is a symbolic link (-> ${r.detail})${onTheWay}; removed`,
    relinked: `is a symbolic link the start state has with another target (-> ${r.detail})${onTheWay}; put back as it was`,
    dir: `is a directory where the task has a file; removed`,
    'not-dir': `is not a directory (${r.detail})${onTheWay}; removed`,
    special: `is a special file (${r.detail}); removed without being opened`,
    hardlink: `is a file with ${r.detail} hard links; replaced by a file of its own`,
  };
  return `${REFUSED}: ${r.path} ${what[r.kind]}`;
}

/**
 * The start state's symbolic links among `paths` (path → target), read with readlink in
 * the sandbox (one command for all; none when there are none).
 */
export async function readLinks(sandbox: Sandbox, paths: string[], signal?: AbortSignal): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (!paths.length) return out;
  const r = await sandbox.exec(`while IFS= read -r -d '' p; do t=$(readlink -- "$p") && printf '%s\\0%s\\0' "$p" "$t"; done; true`, {
    stdin: paths.map((p) => `${p}\0`).join(''),
    timeoutMs: 120_000,
    maxOutputBytes: 64 * 1024 * 1024,
    ...(signal ? { signal } : {}),
  });
  if (r.timedOut || r.exitCode !== 0)
    throw new GymError('SANDBOX_UNAVAILABLE', `reading the start state's symbolic links failed: ${r.stderr.slice(-500)}`);
  const fields = r.stdout.split('\0');
  for (let i = 0; i + 1 < fields.length; i += 2) out.set(fields[i]!, fields[i + 1]!);
  return out;
}

/**
 * Records on stdin, NUL-terminated: `K<path>` + target (a start-state link), `C<path>` (clear
 * the way to it), `L<path>` + target (clear the way, then make the start state's link again).
 * Prints `kind NUL path NUL for NUL detail NUL` for everything removed. Nothing is followed:
 * each component is tested with -L before it is used as a directory, so every rm acts inside
 * the workspace.
 */
const CLEAR_SCRIPT =
  `set -u
root=$(pwd -P)
declare -A keep
say() { printf '%s\\0%s\\0%s\\0%s\\0' "$1" "$2" "$3" "$4"; }
side() { local r; r=$(realpath -m -- "$1" 2>/dev/null) || r=/; case "$r" in "$root"|"$root"/*) echo in;; *) echo out;; esac; }
drop() { local err; err=$(rm -rf -- "$1" 2>&1) || { say stuck "$1" "$2" "$err"; exit 0; }; }
clear_path() {
  local rel=$1 cur= rest=$1 comp t
  while [ -n "$rest" ]; do
    comp=\${rest%%/*}
    if [ "$comp" = "$rest" ]; then rest=; else rest=\${rest#*/}; fi
    case "$comp" in ''|.) continue;; ..) say stuck "$cur" "$rel" "the path leaves its directory"; exit 0;; esac
    cur=\${cur:+$cur/}$comp
    if [ -z "$rest" ]; then
      if [ -L "$cur" ]; then
        t=$(readlink -- "$cur")
        if [ -z "\${keep[$cur]+x}" ] || [ "$t" != "\${keep[$cur]}" ]; then say "link-$(side "$cur")" "$cur" "$rel" "$t"; fi
        drop "$cur" "$rel"
      elif [ -d "$cur" ]; then say dir "$cur" "$rel" ""; drop "$cur" "$rel"
      elif [ -f "$cur" ]; then n=$(stat -c %h -- "$cur"); if [ "$n" -gt 1 ]; then say hardlink "$cur" "$rel" "$n"; fi; drop "$cur" ` +
  `"$rel"
      elif [ -e "$cur" ]; then say special "$cur" "$rel" "$(stat -c %F -- "$cur")"; drop "$cur" "$rel"
      fi
      return
    fi
    if [ -L "$cur" ]; then
      t=$(readlink -- "$cur")
      if [ -n "\${keep[$cur]+x}" ]; then
        [ "$t" = "\${keep[$cur]}" ] && continue
        say relinked "$cur" "$rel" "$t"; drop "$cur" "$rel"; ln -s -- "\${keep[$cur]}" "$cur" || { say stuck "$cur" "$rel" "cannot ` +
  `make the link again"; exit 0; }
        continue
      fi
      say "link-$(side "$cur")" "$cur" "$rel" "$t"; drop "$cur" "$rel"; return
    elif [ -d "$cur" ]; then continue
    elif [ -e "$cur" ]; then say not-dir "$cur" "$rel" "$(stat -c %F -- "$cur")"; drop "$cur" "$rel"; return
    else return
    fi
  done
}
while IFS= read -r -d '' rec; do
  op=\${rec:0:1}; rel=\${rec:1}
  case "$op" in
    K) IFS= read -r -d '' t; keep[$rel]=$t;;
    C) clear_path "$rel";;
    L) IFS= read -r -d '' t; clear_path "$rel"; d=$(dirname -- "$rel"); mkdir -p -- "$d" && ln -s -- "$t" "$rel" || { say stuck ` +
  `"$rel" "$rel" "cannot make the start state's link again"; exit 0; };;
  esac
done
exit 0`;

/** Gives the user read (and, for directories, search) permission wherever it lacks; prints each path changed. */
const MAKE_READABLE =
  `find . -name .git -prune -o \\( -type f ! -perm -u+r -print0 -exec chmod u+r ` +
  `{} + \\) -o \\( -type d ! -perm -u+rx -print0 -exec chmod u+rx {} \\; \\); true`;

/**
 * The episode's diff for submit. Files the agent made unreadable stop git (in Docker, root has
 * no CAP_DAC_OVERRIDE) and would turn its answer into an infrastructure error: they are made
 * readable, inside the sandbox and without following links, the diff taken again, and each
 * one noted. A sandbox that is gone stays an infrastructure error.
 */
export async function readableDiff(sandbox: Sandbox): Promise<{ diff: string; notes: string[] }> {
  try {
    return { diff: await sandbox.diff(), notes: [] };
  } catch (err) {
    const e = toGymError(err);
    if (e.code !== 'SANDBOX_UNAVAILABLE' || e.details?.sandboxLost) throw e;
    const r = await sandbox.exec(MAKE_READABLE, { timeoutMs: 120_000 }).catch(() => null);
    const fixed = (r?.stdout ?? '')
      .split('\0')
      .filter(Boolean)
      .map((p) => p.replace(/^\.\//, ''));
    if (!r || r.exitCode !== 0 || !fixed.length) throw e;
    const diff = await sandbox.diff();
    return {
      diff,
      notes: fixed.slice(0, 20).map((p) => `${REFUSED}: ${p} could not be read by the harness; made readable to take the diff`),
    };
  }
}
