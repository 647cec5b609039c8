import { z } from 'zod';
import { VERSION } from '../../version.ts';
import { cleanJsonSchema } from '../../protocol/mcp.ts';
import { CallToolAction, ListToolsAction, ResetData } from './wire.ts';

/**
 * What `GET /schema` and `GET /openapi.json` describe: the actions an OpenEnv session takes,
 * the observations and state it returns, and the routes (openenv validate reads them).
 */

const Metadata = z
  .object({
    episode_id: z.string().nullable().describe("the episode's id; null before the first reset"),
    step_count: z.number().int().min(0).describe('episode tool calls so far (the step budget counts these)'),
    max_steps: z.number().int().optional(),
    deadline: z.string().optional().describe('ISO 8601; after it only submit, get_diff and end_episode remain'),
    state: z.enum(['running', 'submitted', 'ended', 'expired']).optional(),
    truncated: z.boolean().optional().describe('the budget is spent while the episode runs: call submit to be scored'),
    error: z
      .object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() })
      .optional()
      .describe("benchgym's error of a failed call"),
  })
  .describe("where the episode stands (benchgym's; OpenEnv's own server leaves metadata out of the wire)");

const ResetObservation = z
  .object({
    text: z.string().describe("start_episode's text: the task, the workspace, the budget"),
    data: z.record(z.string(), z.unknown()).describe("start_episode's data"),
    metadata: Metadata,
  })
  .describe('the observation of reset');

const ListToolsObservation = z
  .object({
    tools: z.array(z.object({ name: z.string(), description: z.string(), input_schema: z.record(z.string(), z.unknown()) })),
    metadata: Metadata,
  })
  .describe('the observation of a list_tools action');

const CallToolResult = z.object({
  content: z.array(z.object({ type: z.literal('text'), text: z.string(), annotations: z.null(), meta: z.null() })),
  structured_content: z.record(z.string(), z.unknown()),
  meta: z.null(),
  data: z.record(z.string(), z.unknown()).describe("the tool's data (MCPToolClient.call_tool returns it)"),
  is_error: z.literal(false),
});

const CallToolObservation = z
  .object({
    tool_name: z.string(),
    result: CallToolResult.nullable(),
    error: z
      .object({
        error_type: z.enum(['execution_error', 'invalid_args', 'transport_error', 'tool_not_found', 'timeout']),
        message: z.string(),
      })
      .nullable(),
    metadata: Metadata,
  })
  .describe('the observation of a call_tool action');

const State = z.looseObject({
  episode_id: z.string().nullable(),
  step_count: z.number().int().min(0),
  suite: z.string().optional(),
  task_id: z.string().optional(),
  seed: z.number().int().optional().describe("the seed of the task order (the client's, or drawn)"),
  task_index: z.number().int().optional().describe('the place of the task in that order, when reset chose it'),
  label: z.string().optional().describe("reset's episode_id"),
  state: z.enum(['running', 'submitted', 'ended', 'expired']).optional(),
  done: z.boolean().optional(),
  reward: z
    .number()
    .nullable()
    .optional()
    .describe("the verdict's reward; null before it, or when the verdict is an infrastructure failure"),
  max_steps: z.number().int().optional(),
  steps_left: z.number().int().optional(),
  deadline: z.string().optional(),
});

const json = (schema: z.ZodType, io: 'input' | 'output') => cleanJsonSchema(z.toJSONSchema(schema, { io })) as Record<string, unknown>;

/** `GET /schema`: OpenEnv's SchemaResponse. */
export function openEnvSchemas(): {
  action: Record<string, unknown>;
  observation: Record<string, unknown>;
  state: Record<string, unknown>;
} {
  return {
    action: json(
      z.union([CallToolAction, ListToolsAction]).describe('an MCP action: call_tool (type may be left out) or list_tools'),
      'input',
    ),
    observation: json(z.union([CallToolObservation, ListToolsObservation, ResetObservation]), 'output'),
    state: json(State, 'output'),
  };
}

/** `GET /openapi.json`: the routes, for `openenv validate` and for people. */
export function openApiDocument(): Record<string, unknown> {
  const body = (schema: Record<string, unknown>) => ({ content: { 'application/json': { schema } } });
  const ok = (description: string) => ({ '200': { description } });
  return {
    openapi: '3.1.0',
    info: {
      title: 'benchgym: OpenEnv environment API',
      version: VERSION,
      description:
        'benchgym served over OpenEnv (openenv-core 0.3): one episode per WebSocket session at /ws; docs/PROTOCOL.md, "OpenEnv".',
    },
    paths: {
      '/reset': {
        post: {
          summary: 'Start an episode, return its first observation and end it (stateless, as OpenEnv)',
          requestBody: body(json(ResetData, 'input')),
          responses: ok('{observation, reward, done}'),
        },
      },
      '/step': {
        post: {
          summary: 'One action on a fresh session (stateless, as OpenEnv)',
          requestBody: body({
            type: 'object',
            properties: { action: openEnvSchemas().action, timeout_s: { type: 'number' } },
            required: ['action'],
          }),
          responses: ok('{observation, reward, done}'),
        },
      },
      '/state': { get: { summary: "A fresh session's state", responses: ok('{episode_id, step_count}') } },
      '/health': { get: { summary: 'Health check', responses: ok('{status: "healthy"}') } },
      '/metadata': { get: { summary: 'Environment metadata', responses: ok('{name, description, version, ...}') } },
      '/schema': { get: { summary: 'Action, observation and state schemas', responses: ok('{action, observation, state}') } },
      '/mcp': {
        post: {
          summary: 'MCP JSON-RPC: tools/list, tools/call, openenv/session/create, openenv/session/close',
          responses: ok('a JSON-RPC response'),
        },
      },
    },
  };
}
