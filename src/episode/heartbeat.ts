import type { ToolContext } from '../tools/types.ts';

/** How often a running call reports progress, so clients that reset their timeout on progress wait for long calls. */
export const HEARTBEAT_MS = 5000;

/**
 * Runs a tool with progress a client can draw as a bar. The tool reports whole steps
 * (`progress` of `total` when it knows them, as start_episode does); between them, and every
 * HEARTBEAT_MS, the value creeps towards the next step without reaching it. Every value is
 * larger than the one before (MCP requires it), a `total` once given is kept, and each
 * notification has a message: the tool's last one, with the seconds elapsed on heartbeats.
 */
export async function withHeartbeat<T>(
  ctx: ToolContext,
  name: string,
  fn: (ctx: ToolContext) => Promise<T>,
  intervalMs = HEARTBEAT_MS,
): Promise<T> {
  const started = Date.now();
  let step = 0;
  let ticks = 0;
  let total: number | undefined;
  let message = `${name} running`;
  let last = -Infinity;
  const emit = (text: string) => {
    // ticks/(ticks+12) grows for ever but stays below 1: a step's value never reaches the next step's.
    let value = step + 0.99 * (ticks / (ticks + 12));
    ticks++;
    if (value <= last) value = last + 1e-6;
    last = value;
    ctx.progress(value, total !== undefined && total >= value ? total : undefined, text);
  };
  const wrapped: ToolContext = {
    ...ctx,
    progress(progress, t, m) {
      if (progress > step) {
        step = progress;
        ticks = 0;
      }
      if (t !== undefined) total = t;
      if (m) message = m;
      emit(message);
    },
  };
  const timer = setInterval(() => emit(`${message} (${Math.round((Date.now() - started) / 1000)} s)`), intervalMs);
  try {
    return await fn(wrapped);
  } finally {
    clearInterval(timer);
  }
}
