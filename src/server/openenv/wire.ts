import { z } from 'zod';

/**
 * OpenEnv's wire format as openenv-core 0.3 defines it (openenv/core/env_server/types.py,
 * mcp_types.py, http_server.py): the WebSocket messages and their replies, the MCP actions
 * and observations, the error codes. docs/PROTOCOL.md, "OpenEnv", sets it beside benchgym's.
 */

/** `data.code` of a `{"type": "error"}` reply (OpenEnv's WSErrorCode). */
export type WsErrorCode =
  'INVALID_JSON' | 'UNKNOWN_TYPE' | 'VALIDATION_ERROR' | 'EXECUTION_ERROR' | 'CAPACITY_REACHED' | 'FACTORY_ERROR' | 'SESSION_ERROR';

/** `error.error_type` of a CallToolObservation (OpenEnv's ToolErrorType). */
export type ToolErrorType = 'execution_error' | 'invalid_args' | 'transport_error' | 'tool_not_found' | 'timeout';

/** JSON-RPC 2.0 codes of OpenEnv's MCP endpoints (JsonRpcErrorCode). */
export const JSON_RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  SERVER_ERROR: -32000,
} as const;

/** One problem of a refused message, as pydantic lists them in OpenEnv's VALIDATION_ERROR `errors` and HTTP 422 `detail`. */
export interface ValidationIssue {
  type: string;
  loc: (string | number)[];
  msg: string;
}

const Data = z.record(z.string(), z.unknown());

/** The WebSocket messages a client sends; each refuses keys it does not define, as OpenEnv's BaseMessage does. */
export const WsMessages = {
  reset: z.object({ type: z.literal('reset'), data: Data.default({}) }).strict(),
  step: z.object({ type: z.literal('step'), data: Data }).strict(),
  state: z.object({ type: z.literal('state') }).strict(),
  close: z.object({ type: z.literal('close') }).strict(),
  mcp: z.object({ type: z.literal('mcp'), data: Data }).strict(),
} as const;

export type WsMessageType = keyof typeof WsMessages;

const Metadata = z.record(z.string(), z.unknown()).default({}).describe('Additional metadata for the action');

/** OpenEnv's ListToolsAction: the tools the session offers now. */
export const ListToolsAction = z
  .object({ type: z.literal('list_tools'), metadata: Metadata })
  .strict()
  .describe('Request the list of available tools');

/** OpenEnv's CallToolAction: one tool call; `type` may be left out, as OpenEnv's default makes it `call_tool`. */
export const CallToolAction = z
  .object({
    type: z.literal('call_tool').default('call_tool'),
    tool_name: z.string().min(1).describe('Name of the tool to call'),
    arguments: z.record(z.string(), z.unknown()).default({}).describe('Arguments to pass to the tool'),
    metadata: Metadata,
  })
  .strict()
  .describe('Call a specific tool via MCP');

export type Action = z.infer<typeof ListToolsAction> | z.infer<typeof CallToolAction>;

/**
 * What `reset` takes: OpenEnv's `seed` and `episode_id` (a label of the client's; benchgym
 * names its episodes itself), and benchgym's choice of task and budgets. Unknown keys are refused.
 */
export const ResetData = z
  .object({
    seed: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('orders the tasks of the suite: without task_id, the first of that order; later resets go on in it'),
    episode_id: z.string().max(255).optional().describe("a label of the client's for the episode, reported by state as label"),
    task_id: z.string().min(1).optional().describe('the task to start (default: the next of the suite in the seeded order)'),
    suite: z.string().min(1).optional().describe('the suite (default: the first served)'),
    prompt_variant: z.string().min(1).optional().describe('another rendering of the problem statement, if the task has one'),
    context: z.string().min(1).optional().describe('another start state the task offers'),
    max_steps: z.number().int().min(1).max(10_000).optional().describe('tool calls allowed before only submit remains'),
    time_limit_s: z.number().positive().max(86_400).optional().describe('seconds allowed before only submit remains'),
  })
  .strict();

export type ResetOptions = z.infer<typeof ResetData>;

/** The body of HTTP `POST /step` (OpenEnv's StepRequest, which allows more keys). */
export const StepRequest = z.looseObject({
  action: Data,
  timeout_s: z.number().positive().optional(),
  request_id: z.string().max(255).optional(),
});

/** A JSON-RPC 2.0 request as OpenEnv's JsonRpcRequest reads it. */
export const JsonRpcRequest = z
  .object({
    jsonrpc: z.literal('2.0'),
    method: z.string(),
    params: Data.default({}),
    id: z.union([z.string(), z.number()]).nullable().optional(),
  })
  .strict();

/** A tool as OpenEnv lists it in a ListToolsObservation (its Tool model). */
export interface ListedTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

/** The result of a successful tool call: fastmcp's CallToolResult, as OpenEnv serializes it; MCPToolClient returns `data`. */
export interface CallToolResultWire {
  content: { type: 'text'; text: string; annotations: null; meta: null }[];
  structured_content: Record<string, unknown>;
  meta: null;
  data: Record<string, unknown>;
  is_error: false;
}

/** `{observation, reward, done}`: what a `{"type": "observation"}` reply and HTTP /reset and /step carry. */
export interface StepResultWire {
  observation: Record<string, unknown>;
  reward: number | null;
  done: boolean;
}

/** pydantic's spelling of a zod issue, for `errors` and `detail` lists. */
export function validationIssues(error: z.ZodError, prefix: (string | number)[] = []): ValidationIssue[] {
  return error.issues.map((issue) => {
    const extra = issue.code === 'unrecognized_keys' ? issue.keys : undefined;
    return {
      type: issue.code === 'unrecognized_keys' ? 'extra_forbidden' : issue.code,
      loc: [...prefix, ...issue.path.map((p) => (typeof p === 'number' ? p : String(p))), ...(extra?.length === 1 ? [extra[0]!] : [])],
      msg: extra ? `Extra inputs are not permitted: ${extra.map((k) => `'${k}'`).join(', ')}` : issue.message,
    };
  });
}

/** The issues in a line: `loc: msg; ...`, for messages a client shows without reading `errors`. */
export function describeValidation(issues: ValidationIssue[]): string {
  return issues.map((i) => `${i.loc.length ? i.loc.join('.') : '(message)'}: ${i.msg}`).join('; ');
}

/** A message or action that does not have the shape OpenEnv defines: VALIDATION_ERROR (HTTP 422). */
export class OpenEnvValidationError extends Error {
  constructor(
    readonly what: string,
    readonly issues: ValidationIssue[],
  ) {
    super(`Invalid ${what}: ${describeValidation(issues)}`);
    this.name = new.target.name;
  }
}

/** Parses `input` with `schema`, or throws OpenEnvValidationError naming each problem under `prefix`. */
export function parseWire<S extends z.ZodType>(schema: S, input: unknown, what: string, prefix: (string | number)[] = []): z.infer<S> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw new OpenEnvValidationError(what, validationIssues(parsed.error, prefix));
  return parsed.data;
}

/** An action as OpenEnv's deserialize_action reads it for an MCP environment: `list_tools` by its type, anything else a CallToolAction. */
export function parseAction(input: unknown, prefix: (string | number)[] = []): Action {
  const type = input && typeof input === 'object' && !Array.isArray(input) ? (input as { type?: unknown }).type : undefined;
  if (type === 'list_tools') return parseWire(ListToolsAction, input, 'action', prefix);
  return parseWire(CallToolAction, input, 'action', prefix);
}
