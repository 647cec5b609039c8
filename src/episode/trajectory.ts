import { promises as fs } from 'node:fs';
import path from 'node:path';

export interface TrajectoryStep {
  type: 'step';
  step: number;
  tool: string;
  args: unknown;
  ok: boolean;
  observation?: string;
  data?: unknown;
  error?: { code: string; message: string };
  startedAt: string;
  durationMs: number;
}

const MAX_OBSERVATION_CHARS = 64 * 1024;

/** Every call of an episode, appended as JSON lines as it happens, so a crash loses nothing. */
export class Trajectory {
  private chain: Promise<void> = Promise.resolve();

  constructor(readonly file: string) {}

  static async open(dir: string, episodeId: string, header: Record<string, unknown>): Promise<Trajectory> {
    await fs.mkdir(dir, { recursive: true });
    const t = new Trajectory(path.join(dir, `${episodeId}.jsonl`));
    t.append({ type: 'episode', episodeId, ...header, startedAt: new Date().toISOString() });
    await t.flush();
    return t;
  }

  append(record: Record<string, unknown>): void {
    const r = { ...record };
    if (typeof r.observation === 'string' && r.observation.length > MAX_OBSERVATION_CHARS) {
      r.observation = `${r.observation.slice(0, MAX_OBSERVATION_CHARS)}\n[... cut at ${MAX_OBSERVATION_CHARS} characters in the trajectory]`;
    }
    const line = JSON.stringify(r) + '\n';
    this.chain = this.chain.then(() => fs.appendFile(this.file, line)).catch(() => {});
  }

  flush(): Promise<void> {
    return this.chain;
  }
}
