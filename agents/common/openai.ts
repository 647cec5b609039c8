/**
 * The model side of every agent: chat completions on any OpenAI-compatible endpoint through
 * the `openai` package, with bounded retries, token and cost accounting, and the glue
 * between MCP tools and OpenAI function calling.
 */
import OpenAI, { APIConnectionError, APIError, APIUserAbortError } from 'openai';
import type {
  ChatCompletion,
  ChatCompletionFunctionTool,
  ChatCompletionMessage,
  ChatCompletionMessageParam,
  ChatCompletionToolMessageParam,
} from 'openai/resources/chat/completions';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ModelConfig, TokenUsage } from '../../src/agent/types.ts';
import { resultText, withCallSignal } from '../../src/agent/session.ts';

export type { ChatCompletionMessage, ChatCompletionMessageParam, ChatCompletionFunctionTool };

/** The endpoint could not be used (down, overloaded past the retries, refusing our key): infrastructure, never a wrong answer. */
export class ModelUnavailableError extends Error {
  readonly code = 'MODEL_UNAVAILABLE';
  readonly status?: number;
  constructor(message: string, status?: number) {
    super(message);
    this.name = 'ModelUnavailableError';
    this.status = status;
  }
}

/** The endpoint refused the request itself (400/413/422). `contextOverflow`: the conversation no longer fits the model. */
export class ModelRequestError extends Error {
  readonly code = 'MODEL_BAD_REQUEST';
  readonly status?: number;
  readonly contextOverflow: boolean;
  constructor(message: string, status: number | undefined, contextOverflow: boolean) {
    super(message);
    this.name = 'ModelRequestError';
    this.status = status;
    this.contextOverflow = contextOverflow;
  }
}

/** The agent's signal was aborted (during a model call or a tool call). */
export class RunAborted extends Error {
  readonly code = 'CANCELLED';
  constructor() {
    super('the agent run was cancelled');
    this.name = 'RunAborted';
  }
}

export function emptyUsage(): TokenUsage {
  return { promptTokens: 0, completionTokens: 0, costUsd: 0, calls: 0 };
}

/** The API key: the config's, else $OPENAI_API_KEY / $BENCHGYM_API_KEY, else a placeholder (local endpoints need none). */
export function resolveApiKey(config: ModelConfig): string {
  return config.apiKey || process.env.OPENAI_API_KEY || process.env.BENCHGYM_API_KEY || 'no-key';
}

const CONTEXT_OVERFLOW = /context[ _-]?length|context window|maximum context|too many tokens|prompt is too long|reduce the length/i;

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new RunAborted());
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new RunAborted());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Retry-After (seconds or an HTTP date) or retry-after-ms, in ms. */
function retryAfterMs(err: unknown): number | undefined {
  const headers = err instanceof APIError ? err.headers : undefined;
  if (!headers) return undefined;
  const ms = Number(headers.get('retry-after-ms'));
  if (Number.isFinite(ms) && ms > 0) return ms;
  const raw = headers.get('retry-after');
  if (!raw) return undefined;
  const s = Number(raw);
  if (Number.isFinite(s)) return Math.max(0, s * 1000);
  const at = Date.parse(raw);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : undefined;
}

function describe(err: unknown): string {
  if (err instanceof APIError) return `${err.status ?? 'connection error'}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

/** What one successful model call returned. */
export interface Completion {
  message: ChatCompletionMessage;
  finishReason: string;
  usage: { promptTokens: number; completionTokens: number; costUsd: number };
}

export interface ChatModelOptions {
  /** Called with an event per model call and per failed attempt (for the trajectory). */
  record?: (event: Record<string, unknown>) => void;
  /** For tests: a client to use instead of building one from the config. */
  client?: OpenAI;
}

const MAX_BACKOFF_MS = 60_000;

/**
 * One model on one endpoint, with the usage of every call made through it summed up.
 * Calls retry with exponential backoff on 429, 5xx, connection errors and empty answers
 * (`maxRetries`, default 5); past that, or on 401/403/404, they throw ModelUnavailableError.
 */
export class ChatModel {
  readonly config: ModelConfig;
  readonly usage: TokenUsage = emptyUsage();
  private readonly client: OpenAI;
  private readonly record?: (event: Record<string, unknown>) => void;

  constructor(config: ModelConfig, opts: ChatModelOptions = {}) {
    this.config = config;
    this.record = opts.record;
    // Retries are ours (bounded, recorded); the SDK's own are off.
    this.client =
      opts.client ??
      new OpenAI({ baseURL: config.baseURL, apiKey: resolveApiKey(config), maxRetries: 0, timeout: config.timeoutMs ?? 600_000 });
  }

  costOf(promptTokens: number, completionTokens: number): number {
    const p = this.config.pricing;
    return p ? (promptTokens * p.prompt + completionTokens * p.completion) / 1e6 : 0;
  }

  async complete(
    messages: ChatCompletionMessageParam[],
    opts: { tools?: ChatCompletionFunctionTool[]; signal?: AbortSignal } = {},
  ): Promise<Completion> {
    const { config } = this;
    // Never a silent public default: the SDK's own fallback is api.openai.com.
    if (!config.baseURL && !process.env.OPENAI_BASE_URL)
      throw new ModelUnavailableError(
        'no model endpoint is configured (ModelConfig.baseURL, --base-url or ' +
          '$OPENAI_BASE_URL); benchgym never falls back to a public endpoint',
      );
    const maxRetries = config.maxRetries ?? 5;
    const baseDelay = config.retryDelayMs ?? 1000;
    const body = {
      model: config.model,
      messages,
      ...(opts.tools?.length ? { tools: opts.tools } : {}),
      ...(config.temperature !== undefined ? { temperature: config.temperature } : {}),
      ...(config.maxTokens !== undefined ? { max_tokens: config.maxTokens } : {}),
    };
    let lastError = '';
    for (let attempt = 0; ; attempt++) {
      if (opts.signal?.aborted) throw new RunAborted();
      const startedAt = Date.now();
      let status: number | undefined;
      let retryable: boolean;
      let error: unknown;
      try {
        const res: ChatCompletion = await withCallSignal(opts.signal, (signal) => this.client.chat.completions.create(body, { signal }));
        const choice = res.choices?.[0];
        if (choice?.message) {
          const promptTokens = res.usage?.prompt_tokens ?? 0;
          const completionTokens = res.usage?.completion_tokens ?? 0;
          const costUsd = this.costOf(promptTokens, completionTokens);
          this.usage.promptTokens += promptTokens;
          this.usage.completionTokens += completionTokens;
          this.usage.costUsd += costUsd;
          this.usage.calls++;
          this.record?.({
            type: 'model_call',
            model: config.model,
            attempt: attempt + 1,
            finishReason: choice.finish_reason,
            promptTokens,
            completionTokens,
            costUsd,
            durationMs: Date.now() - startedAt,
          });
          return {
            message: choice.message,
            finishReason: choice.finish_reason ?? 'stop',
            usage: { promptTokens, completionTokens, costUsd },
          };
        }
        error = new Error('the endpoint answered without a choice');
        retryable = true;
      } catch (err) {
        if (err instanceof APIUserAbortError || opts.signal?.aborted) throw new RunAborted();
        error = err;
        status = err instanceof APIError ? err.status : undefined;
        // Connection errors, timeouts, and anything odd about the answer (a body that is not JSON) retry;
        // of the HTTP errors, those that may pass: 408, 409, 429 and 5xx.
        if (err instanceof APIConnectionError || !(err instanceof APIError) || status === undefined) retryable = true;
        else retryable = status === 408 || status === 409 || status === 429 || status >= 500;
        if (!retryable) {
          if (status === 400 || status === 413 || status === 422) {
            const message = describe(err);
            this.record?.({ type: 'model_error', status, message, attempt: attempt + 1, retry: false });
            throw new ModelRequestError(`the model endpoint refused the request (${message})`, status, CONTEXT_OVERFLOW.test(message));
          }
          this.record?.({ type: 'model_error', status, message: describe(err), attempt: attempt + 1, retry: false });
          throw new ModelUnavailableError(
            `the model endpoint ${config.baseURL ?? 'api.openai.com'} refused the call (${describe(err)})`,
            status,
          );
        }
      }
      lastError = describe(error);
      if (attempt >= maxRetries) {
        this.record?.({ type: 'model_error', status, message: lastError, attempt: attempt + 1, retry: false });
        throw new ModelUnavailableError(
          `the model endpoint ${config.baseURL ?? 'api.openai.com'} failed ${attempt + 1} times; last: ${lastError}`,
          status,
        );
      }
      const backoff = Math.min(MAX_BACKOFF_MS, baseDelay * 2 ** attempt) * (0.75 + Math.random() * 0.5);
      const delay = Math.min(MAX_BACKOFF_MS, retryAfterMs(error) ?? backoff);
      this.record?.({ type: 'model_error', status, message: lastError, attempt: attempt + 1, retry: true, retryInMs: Math.round(delay) });
      await sleep(delay, opts.signal);
    }
  }
}

/** MCP tools as OpenAI function tools: name, description, parameters = the tool's input schema. */
export function toOpenAITools(
  tools: Tool[],
  opts: { exclude?: Iterable<string>; only?: Iterable<string> } = {},
): ChatCompletionFunctionTool[] {
  const exclude = new Set(opts.exclude ?? []);
  const only = opts.only ? new Set(opts.only) : undefined;
  return tools
    .filter((t) => !exclude.has(t.name) && (!only || only.has(t.name)))
    .map((t) => {
      const { $schema: _s, ...schema } = t.inputSchema as Record<string, unknown>;
      return {
        type: 'function' as const,
        function: {
          name: t.name,
          description: t.description ?? t.title ?? t.name,
          parameters: { ...schema, type: 'object', properties: schema.properties ?? {} },
        },
      };
    });
}

/**
 * Keeps the head and the tail of a long observation with a note of what was cut, so the
 * model sees a command's start and its final lines (errors, summaries) either way.
 */
export function truncateObservation(text: string, maxChars: number): string {
  if (maxChars <= 0 || text.length <= maxChars) return text;
  const headLen = Math.floor(maxChars * 0.6);
  const tailLen = maxChars - headLen;
  let head = text.slice(0, headLen);
  let tail = text.slice(text.length - tailLen);
  // Cut at line boundaries when one is near, so no line is shown half.
  const headCut = head.lastIndexOf('\n');
  if (headCut > headLen * 0.8) head = head.slice(0, headCut + 1);
  const tailCut = tail.indexOf('\n');
  if (tailCut >= 0 && tailCut < tailLen * 0.2) tail = tail.slice(tailCut + 1);
  const omitted = text.length - head.length - tail.length;
  const omittedLines = text.slice(head.length, text.length - tail.length).split('\n').length - 1;
  return (
    `${head}\n[... ${omitted} characters (${omittedLines} lines) omitted: the observation ` +
    `had ${text.length} characters, more than the ${maxChars} shown; ask for a smaller part ...]\n${tail}`
  );
}

/** A tool result as the `tool` message answering `toolCallId` (its text content, truncated). */
export function toolMessage(toolCallId: string, result: CallToolResult, maxChars: number): ChatCompletionToolMessageParam {
  return { role: 'tool', tool_call_id: toolCallId, content: truncateObservation(resultText(result), maxChars) || '(no output)' };
}

/** Parses a tool call's JSON arguments: an object, or an error message for the model. */
export function parseToolArguments(raw: string | undefined): { ok: true; args: Record<string, unknown> } | { ok: false; error: string } {
  if (!raw || !raw.trim()) return { ok: true, args: {} };
  try {
    const value = JSON.parse(raw) as unknown;
    if (value && typeof value === 'object' && !Array.isArray(value)) return { ok: true, args: value as Record<string, unknown> };
    return { ok: false, error: `the arguments must be a JSON object, got ${Array.isArray(value) ? 'an array' : typeof value}` };
  } catch (err) {
    return { ok: false, error: `the arguments are not valid JSON (${(err as Error).message}): ${raw.slice(0, 200)}` };
  }
}

/** The assistant message to append to the history (only the fields chat endpoints accept back). */
export function assistantParam(message: ChatCompletionMessage): ChatCompletionMessageParam {
  return {
    role: 'assistant',
    content: message.content ?? null,
    ...(message.tool_calls?.length ? { tool_calls: message.tool_calls } : {}),
  };
}
