import type { Transform } from 'node:stream';

/** The wall time of one test file, as file_times.mjs writes it. */
export interface FileTime {
  file: string;
  /** From the file's dequeue (or first event) to its own test:complete (or its last event, if it never completed). */
  wallMs: number;
  /** The runner's duration of the file's process, when it completed. */
  runnerMs?: number;
  /** Tests and suites it reported, and how many of them failed. */
  tests: number;
  failed: number;
  passed: boolean;
}

export interface FileTimesOptions {
  /** Where the JSON goes; none: no file. */
  out?: string;
  /** How many of the slowest to print. */
  top?: number;
  /** The clock, in ms (a test passes its own). */
  now?: () => number;
  /** File paths are printed relative to this folder. */
  cwd?: string;
  /** false: nothing printed when the process exits before the events end (a test's own reporter). */
  onExit?: boolean;
}

/** The reporter, with its options: test events in, the summary out once they end. */
export function fileTimesReporter(options?: FileTimesOptions): Transform;

declare const reporter: Transform;
export default reporter;
