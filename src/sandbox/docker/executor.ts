import type Docker from 'dockerode';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { PassThrough, type Writable } from 'node:stream';
import type { ExecutorClient } from '../executor/client.ts';
import { EXECUTOR_BINARY_NAME } from '../executor/build.ts';
import { attachExecutor } from '../container/executor.ts';
import { dockerError } from './client.ts';
import { trackMarker } from '../container/processes.ts';
import type { SandboxUser } from '../sandbox_user.ts';

/** Where the host-built binary's directory is bind-mounted, read-only, in every container. */
export const EXECUTOR_MOUNT = '/.benchgym-executor';

/** The bind mount that puts the binary into a container (the daemon is local: the binary is a host file). */
export function executorMount(binary: string): { Type: 'bind'; Source: string; Target: string; ReadOnly: true } {
  return { Type: 'bind', Source: path.dirname(binary), Target: EXECUTOR_MOUNT, ReadOnly: true };
}

/**
 * Starts the executor in a running container with ONE attached `docker exec` (stdin and
 * stdout, no TTY, demultiplexed) and connects to it. While it lives, its marker counts as a
 * running exec, so killLeftovers never takes it (or what it runs) for a leftover. It runs as
 * root (with the container's CAP_SETUID and CAP_SETGID only) and runs every command and file
 * operation as `user`, who can therefore neither signal nor trace it (go/identity.go).
 */
export async function startDockerExecutor(
  container: Docker.Container,
  opts: { root: string; user: SandboxUser; env?: string[] },
): Promise<ExecutorClient> {
  const marker = randomBytes(6).toString('hex');
  const untrack = trackMarker(container.id, marker);
  let stream: NodeJS.ReadWriteStream;
  try {
    const exec = await container.exec({
      Cmd: [`${EXECUTOR_MOUNT}/${EXECUTOR_BINARY_NAME}`, '--root', opts.root, '--user', `${opts.user.uid}:${opts.user.gid}`],
      Env: [...(opts.env ?? []), `BENCHGYM_EXEC=${marker}`],
      WorkingDir: opts.root,
      User: '0:0',
      Tty: false,
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
    });
    stream = (await exec.start({ hijack: true, stdin: true })) as unknown as NodeJS.ReadWriteStream;
  } catch (err) {
    untrack();
    throw dockerError(err, 'could not start the executor in the sandbox');
  }
  const output = new PassThrough();
  const stderr = new PassThrough();
  container.modem.demuxStream(stream, output, stderr);
  const onEnd = (end: () => void) => ['end', 'close', 'error'].forEach((event) => stream.on(event, end));
  return attachExecutor(
    { input: stream as unknown as Writable, output, stderr, onEnd },
    `the executor in container ${container.id.slice(0, 12)}`,
    untrack,
  );
}
