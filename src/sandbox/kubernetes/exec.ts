import { Exec, type KubeConfig, type V1Status } from '@kubernetes/client-node';
import { fileSizeLimitScript } from './limits.ts';
import { randomBytes } from 'node:crypto';
import { PassThrough, Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { CappedOutput } from '../output.ts';
import { killMarkerScript, trackMarker } from '../container/processes.ts';
import type { RunOptions, RunResult } from '../container/transport.ts';
import { kubeError } from './client.ts';
import type { SandboxUser } from '../sandbox_user.ts';

/** The container of a sandbox pod that commands run in. */
export const CONTAINER = 'sandbox';

export interface PodRef {
  kc: KubeConfig;
  namespace: string;
  pod: string;
  /** The container execs go to (default CONTAINER; a terminal's is TERMINAL_CONTAINER). */
  container?: string;
  /** A hard RLIMIT_FSIZE on everything started in the pod through this ref (limits.ts, maxFileBytes). */
  maxFileBytes?: number;
  /**
   * Who what runs through this ref runs as: the sandbox container runs as root (its PID 1 and
   * executor out of the commands' reach), so each exec drops to this uid with setpriv first.
   */
  user?: SandboxUser;
}

/** The shell line that caps file size for what follows it, or nothing without a cap. */
export function fileCapOf(ref: PodRef): string {
  return ref.maxFileBytes ? `${fileSizeLimitScript(ref.maxFileBytes)}\n` : '';
}

/** The argv prefix that runs an exec as the ref's user (setpriv: util-linux, in every Debian image). */
export function asUserOf(ref: PodRef): string[] {
  return ref.user ? ['setpriv', `--reuid=${ref.user.uid}`, `--regid=${ref.user.gid}`, '--clear-groups', '--'] : [];
}

const KILL_GRACE_S = 2;

/**
 * Runs inside the pod as the exec's root: enters the working directory, runs the command
 * under `timeout` (its own process group), then kills every process still carrying the
 * command's marker (setsid escapees that would hold the exec's pipes open), and exits with
 * the command's status. $1 workdir, $2 timeout in seconds (0: none), the rest the command.
 */
const WRAPPER = [
  'cd -- "$1" 2>/dev/null || { echo "benchgym: no such directory: $1" >&2; exit 126; }',
  't=$2; shift 2',
  `if [ "$t" = 0 ]; then "$@"; else timeout -k ${KILL_GRACE_S} "$t" "$@"; fi`,
  'rc=$?; m=$BENCHGYM_EXEC; unset BENCHGYM_EXEC',
  `for p in /proc/[0-9]*; do n=\${p#/proc/}; [ "$n" = $$ ] && continue; if tr '\\000' '\\n' ` +
    `2>/dev/null < "$p/environ" | grep -qx "BENCHGYM_EXEC=$m"; then kill -9 "$n" 2>/dev/null; fi; done`,
  'exit $rc',
].join('\n');

/** The exit code in an exec's final status: 0 on Success, the ExitCode cause on failure, else null. */
export function exitCodeOf(status: V1Status | undefined): number | null {
  if (!status) return null;
  if (status.status === 'Success') return 0;
  const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
  return cause?.message !== undefined && /^\d+$/.test(cause.message) ? Number(cause.message) : null;
}

/** One command in the sandbox pod through the API's exec channel, output capped while drained. */
export async function podExec(ref: PodRef, opts: RunOptions): Promise<RunResult> {
  const marker = randomBytes(6).toString('hex');
  const untrack = trackMarker(ref.pod, marker);
  try {
    return await runExec(ref, opts, marker);
  } finally {
    untrack();
  }
}

async function runExec(ref: PodRef, opts: RunOptions, marker: string): Promise<RunResult> {
  const secs = opts.timeoutMs ? Math.max(1, Math.ceil(opts.timeoutMs / 1000)) : 0;
  const vars = Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${v}`);
  const cmd = [
    ...asUserOf(ref),
    'env',
    ...vars,
    `BENCHGYM_EXEC=${marker}`,
    'sh',
    '-c',
    `${fileCapOf(ref)}${WRAPPER}`,
    'benchgym',
    opts.workdir ?? '/',
    String(secs ? `${secs}s` : 0),
    ...opts.cmd,
  ];
  const started = Date.now();
  const stdout = new CappedOutput(opts.maxOutputBytes);
  const stderr = new CappedOutput(opts.maxOutputBytes);
  const rawChunks: Buffer[] = [];
  let rawLen = 0;
  const dec = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
  const outSink = new Writable({
    write(b: Buffer, _enc, cb) {
      if (opts.rawStdout) {
        rawLen += b.length;
        if (rawLen <= opts.maxOutputBytes) rawChunks.push(b);
        stdout.total += b.length;
      } else stdout.push(b);
      if (opts.onOutput) opts.onOutput(dec.stdout.write(b), 'stdout');
      cb();
    },
  });
  const errSink = new Writable({
    write(b: Buffer, _enc, cb) {
      stderr.push(b);
      if (opts.onOutput) opts.onOutput(dec.stderr.write(b), 'stderr');
      cb();
    },
  });
  const stdin = opts.stdin !== undefined ? new PassThrough() : null;
  let status: V1Status | undefined;
  let cancelled = false;
  let timedOutHost = false;
  let ws: Awaited<ReturnType<Exec['exec']>>;
  try {
    ws = await new Exec(ref.kc).exec(
      ref.namespace,
      ref.pod,
      ref.container ?? CONTAINER,
      cmd,
      outSink,
      errSink,
      stdin,
      false,
      (s) => (status = s),
    );
  } catch (err) {
    throw kubeError(err, 'could not run a command in the sandbox pod');
  }
  if (stdin) {
    const data = typeof opts.stdin === 'string' ? Buffer.from(opts.stdin) : opts.stdin!;
    // In chunks: one websocket frame per chunk, the end sent as a close of stdin (v5 protocol).
    Readable.from(
      (function* () {
        for (let i = 0; i < data.length; i += 256 * 1024) yield data.subarray(i, i + 256 * 1024);
      })(),
    ).pipe(stdin);
  }
  const killAll = () => podQuiet(ref, ['sh', '-c', killMarkerScript(marker)]);
  const onAbort = () => {
    cancelled = true;
    void killAll();
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.signal?.aborted) onAbort();
  await new Promise<void>((resolve) => {
    const finish = () => {
      clearTimeout(watchdog);
      resolve();
    };
    if (ws.readyState === ws.CLOSED) return resolve();
    ws.on('close', finish);
    ws.on('error', finish);
    // Last resort if even `timeout -k` and the wrapper did not end the exec.
    const watchdog = setTimeout(
      async () => {
        timedOutHost = true;
        await killAll();
        ws.close();
        setTimeout(finish, 2000);
      },
      (secs ? secs + KILL_GRACE_S + 5 : 24 * 3600) * 1000,
    );
  });
  opts.signal?.removeEventListener('abort', onAbort);
  const exitCode = exitCodeOf(status);
  const durationMs = Date.now() - started;
  const timedOut = timedOutHost || (secs > 0 && (exitCode === 124 || exitCode === 137) && durationMs >= secs * 1000 - 250);
  return { exitCode, stdout, stderr, raw: opts.rawStdout ? Buffer.concat(rawChunks) : undefined, timedOut, cancelled, durationMs };
}

/**
 * A short command whose result does not matter (cleanup), bounded in time; as the ref's user (root has no CAP_KILL to end its commands).
 */
export async function podQuiet(ref: PodRef, cmd: string[]): Promise<void> {
  try {
    const sink = new Writable({ write: (_b, _e, cb) => cb() });
    const ws = await new Exec(ref.kc).exec(
      ref.namespace,
      ref.pod,
      ref.container ?? CONTAINER,
      [...asUserOf(ref), ...cmd],
      sink,
      sink,
      null,
      false,
    );
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        ws.close();
        resolve();
      }, 10_000);
      ws.on('close', () => {
        clearTimeout(t);
        resolve();
      });
    });
  } catch {
    // the pod may be gone
  }
}
