import { GymError } from '../errors.ts';

/**
 * The largest diff a sandbox returns. Every diff is held whole in server memory (get_diff's
 * result, submit's patch, the verdict record), so a workspace with a huge file must fail
 * clearly rather than cost gigabytes.
 */
export const DEFAULT_MAX_DIFF_BYTES = 16 * 1024 * 1024;

function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** DIFF_TOO_LARGE naming the size and the limit; the workspace is untouched, so the episode goes on. */
export function diffTooLarge(bytes: number, limit: number): GymError {
  return new GymError(
    'DIFF_TOO_LARGE',
    `the workspace's diff is ${bytes} bytes (${mib(bytes)}), over the limit of ${limit} ` +
      `bytes (${mib(limit)}); remove or shrink large files (generated data, logs, binaries) and try again`,
    { bytes, limit },
  );
}
