import type { Agent, AgentContext, AgentResult } from '../agent/types.ts';
import { GymError } from '../errors.ts';

/**
 * Runs the agent; past the episode's time limit plus a grace period its signal is aborted, and
 * an agent that still does not return is abandoned as an infrastructure failure (a hung model call).
 * `state.fired` tells the caller the watchdog ended the agent.
 */
export async function runAgentWithWatchdog(
  agent: Agent,
  ctx: AgentContext,
  control: AbortController,
  limitMs: number,
  state: { fired: boolean },
  abandonMs: number,
): Promise<AgentResult> {
  let timer: NodeJS.Timeout | undefined;
  let abandon: NodeJS.Timeout | undefined;
  const watchdog = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      state.fired = true;
      control.abort(new GymError('CANCELLED', 'the episode ran past its time limit'));
      abandon = setTimeout(
        () =>
          reject(
            new GymError(
              'INTERNAL',
              `the agent did not return within ${Math.round(limitMs / 1000)}` +
                ` s, nor ${Math.round(abandonMs / 1000)} s after being cancelled`,
            ),
          ),
        abandonMs,
      );
    }, limitMs);
  });
  try {
    return await Promise.race([agent.run(ctx), watchdog]);
  } finally {
    clearTimeout(timer);
    clearTimeout(abandon);
  }
}
