import type { ExecResult } from '../sandbox/types.ts';

/** A command's result as a model reads it. */
export function formatExec(r: ExecResult, timeoutS?: number): string {
  const status = r.timedOut
    ? `timed out after ${timeoutS ?? Math.round(r.durationMs / 1000)} s (killed; partial output below)`
    : r.exitCode === null
      ? `killed by ${r.signal ?? 'a signal'}`
      : `exit code ${r.exitCode}`;
  const parts = [`[${status}, ${(r.durationMs / 1000).toFixed(1)} s]`];
  if (r.stdout) parts.push(r.stdout.replace(/\n$/, ''));
  if (r.stderr) parts.push(`--- stderr ---\n${r.stderr.replace(/\n$/, '')}`);
  if (!r.stdout && !r.stderr) parts.push('(no output)');
  if (r.truncated.stdout || r.truncated.stderr) {
    parts.push(
      `[output capped: ${r.totalBytes.stdout} bytes of stdout and ${r.totalBytes.stderr} bytes of stderr in all; the middle was dropped]`,
    );
  }
  return parts.join('\n');
}
