/** Latency statistics for the benchmarks: nearest-rank percentiles over samples in milliseconds. */

export interface LatencyStats {
  /** Benchmark figure name, e.g. `view_file`. */
  name: string;
  /** One line on what was timed. */
  description: string;
  unit: 'ms';
  n: number;
  p50: number;
  p95: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/** Nearest-rank percentile of an ascending array (p in 0..100). */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function summarize(name: string, description: string, samples: number[]): LatencyStats {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.reduce((s, x) => s + x, 0) / (sorted.length || 1);
  return {
    name,
    description,
    unit: 'ms',
    n: sorted.length,
    p50: round(percentile(sorted, 50)),
    p95: round(percentile(sorted, 95)),
    p99: round(percentile(sorted, 99)),
    mean: round(mean),
    min: round(sorted[0] ?? NaN),
    max: round(sorted[sorted.length - 1] ?? NaN),
  };
}

/** Times one async call with the monotonic high-resolution clock; returns milliseconds. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = process.hrtime.bigint();
  const value = await fn();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  return { ms, value };
}

export function round(x: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export function mib(bytes: number): number {
  return round(bytes / (1024 * 1024), 1);
}
