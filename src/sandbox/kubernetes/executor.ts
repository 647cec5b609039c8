import { Exec } from '@kubernetes/client-node';
import { promises as fs } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { GymError } from '../../errors.ts';
import { EXECUTOR_BINARY_NAME } from '../executor/build.ts';
import type { ExecutorClient } from '../executor/client.ts';
import { attachExecutor } from '../container/executor.ts';
import { leftoverScript, trackMarker } from '../container/processes.ts';
import { kubeError } from './client.ts';
import { CONTAINER, fileCapOf, podExec, type PodRef } from './exec.ts';
import { EXECUTOR_DIR } from './pod.ts';

/** The binary's path in the pod. */
export const POD_EXECUTOR = `${EXECUTOR_DIR}/${EXECUTOR_BINARY_NAME}`;

/** The binary's bytes, read once per path. */
const binaries = new Map<string, Promise<Buffer>>();

/**
 * Copies the host-built executor into the pod's executor emptyDir through one exec (its bytes
 * on stdin), then checks it runs there: a tmpfs mounted noexec, or a node of another
 * architecture, fails here, so the caller falls back to one exec per operation.
 */
export async function installPodExecutor(ref: PodRef, binary: string): Promise<void> {
  let bytes = binaries.get(binary);
  if (!bytes) {
    bytes = fs.readFile(binary);
    binaries.set(binary, bytes);
    bytes.catch(() => binaries.delete(binary));
  }
  const data = await bytes;
  const tmp = `${POD_EXECUTOR}.tmp`;
  // As root, and the emptyDir (0777 as the kubelet makes it) closed to the commands' uid after.
  const script =
    `cat > ${tmp} && chmod 0555 ${tmp} && mv -f ${tmp} ${POD_EXECUTOR} && ` + `chmod 0755 ${EXECUTOR_DIR} && ${POD_EXECUTOR} --version`;
  const r = await podExec(
    { ...ref, user: undefined },
    { cmd: ['sh', '-c', script], stdin: data, timeoutMs: 120_000, maxOutputBytes: 64 * 1024, workdir: '/' },
  );
  if (r.exitCode !== 0)
    throw new GymError(
      'SANDBOX_UNAVAILABLE',
      `the executor does not run in pod ${ref.pod} (exit ${r.exitCode}): ${r.stderr.text().trim() || r.stdout.text().trim()}`,
    );
}

/**
 * Starts the executor in the pod with ONE long-lived exec whose stdin and stdout are its
 * channel (the API server's exec websocket, no TTY) and connects to it. While it lives, its
 * marker counts as a running exec, so no leftover sweep takes it (it is an exec root besides).
 * The pod deleted, OOM-killed or the executor killed: the websocket closes, the channel fails.
 * It runs as the container's root (CAP_SETUID and CAP_SETGID only) and runs every command and
 * file operation as the ref's user, who can neither signal nor trace it (go/identity.go).
 */
export async function startPodExecutor(ref: PodRef, opts: { root: string }): Promise<ExecutorClient> {
  const marker = randomBytes(6).toString('hex');
  const untrack = trackMarker(ref.pod, marker);
  const input = new PassThrough();
  const output = new PassThrough();
  const stderr = new PassThrough();
  let ws: Awaited<ReturnType<Exec['exec']>>;
  try {
    // Behind the file-size cap: every command the executor starts inherits it, and cannot raise it.
    const user = ref.user ? ['--user', `${ref.user.uid}:${ref.user.gid}`] : [];
    ws = await new Exec(ref.kc).exec(
      ref.namespace,
      ref.pod,
      CONTAINER,
      ['sh', '-c', `${fileCapOf(ref)}exec "$@"`, 'sh', 'env', `BENCHGYM_EXEC=${marker}`, POD_EXECUTOR, '--root', opts.root, ...user],
      output,
      stderr,
      input,
      false,
    );
  } catch (err) {
    untrack();
    throw kubeError(err, `could not start the executor in pod ${ref.pod}`);
  }
  const onEnd = (end: () => void) => ['close', 'error'].forEach((event) => ws.on(event, end));
  // The channel closed by us: the end of stdin stops the executor; the socket goes soon after in any case.
  input.on('finish', () => setTimeout(() => ws.close(), 3000).unref());
  return attachExecutor({ input, output, stderr, onEnd }, `the executor in pod ${ref.pod}`, untrack);
}

/**
 * The leftover sweep the executor runs after each command: leftoverScript, behind a check in
 * shell builtins only (no fork) that PID 1 has a child besides the pod's main process. Every
 * leftover descends from such a child (orphans are reparented to PID 1; exec roots are spared),
 * so the usual case, nothing left, costs one `sh` and no more.
 */
export function podSweepScript(liveMarkers: string[]): string {
  return [
    // The state and PPid follow the last ") " of /proc/N/stat, whatever the command's name holds.
    'n=0; for p in /proc/[0-9]*; do read -r l < "$p/stat" 2>/dev/null ' +
      '|| continue; l=${l##*) }; set -- $l; [ "$2" = 1 ] && n=$((n+1)); done',
    '[ "$n" -le 1 ] && exit 0',
    leftoverScript(liveMarkers),
  ].join('\n');
}
