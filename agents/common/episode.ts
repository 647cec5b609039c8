/**
 * What every agent does with its episode besides talking to the model: call tools (counted,
 * recorded, transport failures told apart from tool errors), read and write files, submit,
 * and turn whatever stopped it into an AgentResult.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { RunAborted, ModelRequestError, ModelUnavailableError } from './openai.ts';
import { callTool, resultErrorCode, resultText } from '../../src/agent/session.ts';
import type { AgentContext, AgentResult, TokenUsage } from '../../src/agent/types.ts';

/** The MCP connection itself failed (closed, timed out): infrastructure, not the agent's doing. */
export class GymUnavailableError extends Error {
  readonly code: string;
  constructor(message: string, code = 'GYM_UNAVAILABLE') {
    super(message);
    this.name = 'GymUnavailableError';
    this.code = code;
  }
}

/** Tool error codes meaning the episode is gone under the agent (nothing it did wrong). */
const EPISODE_GONE = new Set(['EPISODE_ENDED', 'EPISODE_NOT_FOUND']);

export interface SubmitOutcome {
  verdict: Record<string, unknown> | null;
  submitted: boolean;
  infraError?: { code: string; message: string };
}

export class EpisodeHandle {
  /** Tool calls made through this handle. */
  calls = 0;
  private readonly ctx: AgentContext;

  constructor(ctx: AgentContext) {
    this.ctx = ctx;
  }

  /** Calls an episode tool; a failed tool is a result (isError), a failed connection throws GymUnavailableError. */
  async call(name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
    this.calls++;
    let result: CallToolResult;
    try {
      result = await callTool(this.ctx.client, name, args, { signal: this.ctx.signal });
    } catch (err) {
      if (this.ctx.signal.aborted) throw new RunAborted();
      throw new GymUnavailableError(`the ${name} call failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    const code = resultErrorCode(result);
    if (code && EPISODE_GONE.has(code) && name !== 'submit') throw new GymUnavailableError(resultText(result), code);
    const details = (result.structuredContent as { error?: { details?: { sandboxLost?: boolean } } } | undefined)?.error?.details;
    if (code === 'SANDBOX_UNAVAILABLE' && details?.sandboxLost) throw new GymUnavailableError(resultText(result), code);
    return result;
  }

  /** The whole content of a workspace file. */
  async readFile(path: string): Promise<string> {
    const result = await this.call('view_file', { path, start_line: 1, end_line: 10_000_000 });
    if (result.isError) throw new Error(resultText(result));
    const data = result.structuredContent as { content: string; totalLines: number };
    return data.totalLines > 0 ? `${data.content}\n` : '';
  }

  /** Writes a file whole (create_file with overwrite); returns the tool's text. */
  async writeFile(path: string, content: string): Promise<CallToolResult> {
    return this.call('create_file', { path, content, overwrite: true });
  }

  /**
   * Calls submit. A verdict whose status is 'error' (scoring hit an infrastructure failure)
   * is returned with an infraError, so the runner retries rather than counting it.
   */
  async submit(): Promise<SubmitOutcome> {
    const result = await this.call('submit');
    if (result.isError) {
      const code = resultErrorCode(result) ?? 'INTERNAL';
      this.ctx.record({ type: 'submit_failed', code, message: resultText(result) });
      return { verdict: null, submitted: false, infraError: { code, message: resultText(result) } };
    }
    const verdict = (result.structuredContent ?? null) as Record<string, unknown> | null;
    this.ctx.record({ type: 'submitted', reward: verdict?.reward, status: verdict?.status });
    const error = verdict?.error as { code?: string; message?: string } | undefined;
    if (verdict?.status === 'error' && error)
      return { verdict, submitted: true, infraError: { code: error.code ?? 'INTERNAL', message: error.message ?? 'scoring failed' } };
    return { verdict, submitted: true };
  }
}

/**
 * The result for an agent stopped by something thrown: infrastructure failures become
 * infraError with nothing scored; anything else is an agent error (stopReason 'error').
 */
export function resultFromError(
  err: unknown,
  base: { steps: number; usage: TokenUsage; rounds?: number; passedRound?: number },
): AgentResult {
  const infra = infraErrorOf(err);
  const result: AgentResult = { verdict: null, submitted: false, stopReason: 'error', ...base, usage: { ...base.usage } };
  if (infra) result.infraError = infra;
  else result.error = err instanceof Error ? err.message : String(err);
  return result;
}

export function infraErrorOf(err: unknown): { code: string; message: string } | undefined {
  if (err instanceof ModelUnavailableError || err instanceof GymUnavailableError || err instanceof RunAborted)
    return { code: err.code, message: err.message };
  if (err instanceof ModelRequestError && !err.contextOverflow) return { code: err.code, message: err.message };
  return undefined;
}
