import { promises as fs } from 'node:fs';

/** Appends JSON lines to a pair's trajectory file in order, without waiting for each write (a trajectory, not the results). */
export class TrajectoryWriter {
  private chain: Promise<void> = Promise.resolve();
  constructor(readonly file: string) {}
  append(record: Record<string, unknown>): void {
    let line: string;
    try {
      line = JSON.stringify(record) + '\n';
    } catch (err) {
      line = JSON.stringify({ type: 'unserializable', attempt: record.attempt, error: (err as Error).message }) + '\n';
    }
    this.chain = this.chain.then(() => fs.appendFile(this.file, line)).catch(() => {});
  }
  flush(): Promise<void> {
    return this.chain;
  }
}
