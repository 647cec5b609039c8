/**
 * bench/throughput/server.ts as a child process: its URL, and its CPU and RSS from /proc. The
 * throughput and peers benchmarks drive benchgym through it, so the server runs in a process of its
 * own as it does for an agent, and its figures are the server's alone.
 */
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { envCacheDir } from '../mcp_latency.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** The server child: its URL, and /proc figures. */
export class ServerProcess {
  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
  ) {}

  static async start(backend: 'local' | 'docker', maxEpisodes: number, dataDir: string): Promise<ServerProcess> {
    // BENCHGYM_THROUGHPUT_SERVER_ARGS='--cpu-prof --cpu-prof-dir=DIR' profiles the server alone.
    const extra = process.env.BENCHGYM_THROUGHPUT_SERVER_ARGS?.split(' ').filter(Boolean) ?? [];
    const child = spawn(
      process.execPath,
      [...extra, '--import', 'tsx', path.join(HERE, 'server.ts'), backend, String(maxEpisodes), dataDir, envCacheDir()],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`the throughput server exited with ${code}`)));
    });
    return new ServerProcess(child, (JSON.parse(line) as { url: string }).url);
  }

  /** utime + stime of the server process, in seconds. */
  cpuSeconds(): number {
    const stat = readFileSync(`/proc/${this.child.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ is 100 on Linux
  }

  rssMiB(): number {
    const kb = /^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${this.child.pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : 0;
  }

  async stop(): Promise<void> {
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.stdin!.end();
    await Promise.race([exited, new Promise((r) => setTimeout(r, 120_000))]);
    this.child.kill('SIGKILL');
  }
}
