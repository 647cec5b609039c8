import type Docker from 'dockerode';
import { PassThrough } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { CappedOutput } from '../output.ts';
import { dockerError } from './client.ts';

export interface RawExecOptions {
  cmd: string[];
  env?: string[];
  workdir?: string;
  stdin?: Buffer | string;
  /** Enforced inside the container by `timeout -k`: Docker cannot kill an exec. */
  timeoutMs?: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
  onOutput?: (chunk: string, stream: 'stdout' | 'stderr') => void;
  /** Keep stdout as raw bytes (file reads) instead of head+tail capped text. */
  rawStdout?: boolean;
}

export interface RawExecResult {
  exitCode: number | null;
  stdout: CappedOutput;
  stderr: CappedOutput;
  raw?: Buffer;
  timedOut: boolean;
  cancelled: boolean;
  durationMs: number;
}

const KILL_GRACE_S = 2;
/** Kills every process of the container carrying the exec's marker (setsid escapees too). */
export function killMarkerScript(marker: string): string {
  return `for p in /proc/[0-9]*; do if tr '\\0' '\\n' < "$p/environ" 2>/dev/null | grep -qx 'BENCHGYM_EXEC=${marker}'; then kill -9 "\${p#/proc/}" 2>/dev/null; fi; done; true`;
}

/** One exec in a running container, with output capped while drained and a timeout inside. */
export async function dockerExec(container: Docker.Container, opts: RawExecOptions): Promise<RawExecResult> {
  const marker = randomBytes(6).toString('hex');
  const secs = opts.timeoutMs ? Math.max(1, Math.ceil(opts.timeoutMs / 1000)) : 0;
  const cmd = secs ? ['timeout', '-k', String(KILL_GRACE_S), `${secs}s`, ...opts.cmd] : opts.cmd;
  const started = Date.now();
  let exec: Docker.Exec;
  let stream: NodeJS.ReadWriteStream;
  try {
    exec = await container.exec({
      Cmd: cmd,
      Env: [...(opts.env ?? []), `BENCHGYM_EXEC=${marker}`],
      WorkingDir: opts.workdir,
      AttachStdout: true,
      AttachStderr: true,
      AttachStdin: opts.stdin !== undefined,
    });
    stream = (await exec.start({ hijack: true, stdin: opts.stdin !== undefined })) as unknown as NodeJS.ReadWriteStream;
  } catch (err) {
    throw dockerError(err, 'could not run a command in the sandbox');
  }
  const stdout = new CappedOutput(opts.maxOutputBytes);
  const stderr = new CappedOutput(opts.maxOutputBytes);
  const rawChunks: Buffer[] = [];
  let rawLen = 0;
  const outSink = new PassThrough();
  const errSink = new PassThrough();
  const dec = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
  outSink.on('data', (b: Buffer) => {
    if (opts.rawStdout) {
      rawLen += b.length;
      if (rawLen <= opts.maxOutputBytes) rawChunks.push(b);
      stdout.total += b.length;
    } else stdout.push(b);
    if (opts.onOutput) opts.onOutput(dec.stdout.write(b), 'stdout');
  });
  errSink.on('data', (b: Buffer) => {
    stderr.push(b);
    if (opts.onOutput) opts.onOutput(dec.stderr.write(b), 'stderr');
  });
  container.modem.demuxStream(stream, outSink, errSink);
  if (opts.stdin !== undefined) stream.end(opts.stdin);

  let cancelled = false;
  const killAll = () => killMarkedProcesses(container, marker);
  const onAbort = () => {
    cancelled = true;
    void killAll();
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.signal?.aborted) onAbort();

  await new Promise<void>((resolve) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearInterval(poll);
      clearTimeout(watchdog);
      resolve();
    };
    stream.on('end', finish);
    stream.on('close', finish);
    stream.on('error', finish);
    // The main process may end while a background child holds the pipe: then end them all.
    let exitedAt = 0;
    let killedLeftovers = false;
    const poll = setInterval(async () => {
      try {
        const info = await exec.inspect();
        if (!info.Running) {
          exitedAt ||= Date.now();
          // Leftover writers are killed first, so what they wrote is still read; the stream
          // is cut only if it stays open well after that.
          if (Date.now() - exitedAt > 300 && !killedLeftovers) {
            killedLeftovers = true;
            await killAll();
          }
          if (Date.now() - exitedAt > 5300) {
            (stream as unknown as { destroy(): void }).destroy();
            finish();
          }
        }
      } catch {
        finish();
      }
    }, 150);
    // Last resort if even `timeout -k` did not end the stream.
    const watchdog = setTimeout(
      async () => {
        await killAll();
        (stream as unknown as { destroy(): void }).destroy();
        finish();
      },
      (secs ? secs + KILL_GRACE_S + 5 : 24 * 3600) * 1000,
    );
  });
  opts.signal?.removeEventListener('abort', onAbort);

  // ExitCode is only meaningful once the exec has stopped running.
  let exitCode: number | null = null;
  for (let i = 0; i < 40; i++) {
    const info = await exec.inspect().catch(() => null);
    if (!info) break;
    if (!info.Running) {
      exitCode = info.ExitCode ?? null;
      break;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const durationMs = Date.now() - started;
  const timedOut = secs > 0 && (exitCode === 124 || exitCode === 137) && durationMs >= secs * 1000 - 250;
  return { exitCode, stdout, stderr, raw: opts.rawStdout ? Buffer.concat(rawChunks) : undefined, timedOut, cancelled, durationMs };
}

/**
 * Kills the processes of one exec, setsid escapees included, found by the marker in their
 * environment. From the host when the daemon is local (works even when a fork bomb has
 * used every pid of the container), else by a script inside the container.
 */
export async function killMarkedProcesses(container: Docker.Container, marker: string): Promise<void> {
  const needle = Buffer.from(`BENCHGYM_EXEC=${marker}\0`);
  for (let round = 0; round < 20; round++) {
    let top: { Processes?: string[][] };
    try {
      top = await container.top({ ps_args: '-eo pid' });
    } catch {
      return;
    }
    const pids = (top.Processes ?? []).map((row) => Number(row[0])).filter((n) => n > 0);
    let visible = 0;
    let killed = 0;
    await Promise.all(
      pids.map(async (pid) => {
        try {
          const environ = await fs.readFile(`/proc/${pid}/environ`);
          visible++;
          if (environ.includes(needle)) {
            process.kill(pid, 'SIGKILL');
            killed++;
          }
        } catch {
          // gone, or not on this host
        }
      }),
    );
    if (visible === 0 && pids.length) return runQuiet(container, ['sh', '-c', killMarkerScript(marker)]);
    if (killed === 0) return;
  }
}

/** A short exec whose result does not matter (cleanup). */
async function runQuiet(container: Docker.Container, cmd: string[]): Promise<void> {
  try {
    const exec = await container.exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true });
    const stream = await exec.start({});
    stream.resume();
    await new Promise((r) => {
      stream.on('end', r);
      stream.on('close', r);
      setTimeout(r, 5000);
    });
  } catch {
    // the container may be gone
  }
}
