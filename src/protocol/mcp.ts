import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { z } from 'zod';
import { GymError, toGymError } from '../errors.ts';
import { VERSION } from '../version.ts';
import type { Gym } from '../episode/gym.ts';
import type { AnyTool, ToolContext, ToolResult } from '../tools/types.ts';
import { episodePath } from './capability.ts';
import { episodeMcpUrl, onReplica } from './replica.ts';

export const SERVER_INFO = { name: 'benchgym', version: VERSION };

/** One JSON-schema validator for every session: the SDK otherwise compiles a new Ajv per McpServer, most of what an initialize costs. */
const SHARED_VALIDATOR = new AjvJsonSchemaValidator();

type JsonSchema = Record<string, unknown>;

/**
 * A JSON Schema as clients should read it: without `$schema` (MCP fixes the dialect) and
 * without the ±(2^53 - 1) bounds zod's `.int()` adds to every integer (noise to a model).
 */
export function cleanJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(cleanJsonSchema);
  if (!schema || typeof schema !== 'object') return schema;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$schema') continue;
    if ((key === 'maximum' && value === Number.MAX_SAFE_INTEGER) || (key === 'minimum' && value === Number.MIN_SAFE_INTEGER)) continue;
    out[key] = cleanJsonSchema(value);
  }
  return out;
}

const ERROR_OUTPUT = cleanJsonSchema(
  z.toJSONSchema(
    z.object({
      error: z.object({
        code: z.string().describe('a string code to switch on (INVALID_ARGUMENT, EPISODE_NOT_FOUND, ...)'),
        message: z.string(),
        details: z.record(z.string(), z.unknown()).optional(),
      }),
    }),
    { io: 'output' },
  ),
) as JsonSchema;

const EPISODE_ID_PROPERTY = { type: 'string', minLength: 1, description: 'the episode id start_episode returned' };

/** A tool as tools/list shows it; built once per tool and form (a new schema per session is most of what creating one costs). */
const DEFINITIONS = { plain: new WeakMap<AnyTool, Tool>(), withEpisodeId: new WeakMap<AnyTool, Tool>() };
export function definitionOf(tool: AnyTool, withEpisodeId: boolean): Tool {
  const cache = withEpisodeId ? DEFINITIONS.withEpisodeId : DEFINITIONS.plain;
  const cached = cache.get(tool);
  if (cached) return cached;
  const input = cleanJsonSchema(z.toJSONSchema(tool.input, { io: 'input' })) as JsonSchema & {
    properties?: Record<string, object>;
    required?: string[];
  };
  if (withEpisodeId) {
    input.properties = { episode_id: EPISODE_ID_PROPERTY, ...input.properties };
    input.required = ['episode_id', ...(input.required ?? [])];
  }
  const data = cleanJsonSchema(z.toJSONSchema(tool.output, { io: 'output' }));
  const def: Tool = {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: { ...input, type: 'object' },
    // The TypeScript SDK client checks structuredContent against this even on a failed call: the error shape is one of the two.
    outputSchema: {
      type: 'object',
      description: "the tool's data; a failed call (isError) has { error: { code, message } } instead",
      anyOf: [data, ERROR_OUTPUT],
    },
    annotations: { title: tool.title, ...tool.annotations },
  };
  cache.set(tool, def);
  return def;
}

interface Served {
  tool: AnyTool;
  definition: Tool;
  call(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}

interface Extra {
  signal: AbortSignal;
  _meta?: { progressToken?: string | number };
  sendNotification: (n: {
    method: 'notifications/progress';
    params: { progressToken: string | number; progress: number; total?: number; message?: string };
  }) => Promise<void>;
}

function toolContext(extra: Extra, mcpPathOf?: (episodeId: string) => string): ToolContext {
  const token = extra._meta?.progressToken;
  let last = -Infinity;
  return {
    signal: extra.signal,
    ...(mcpPathOf ? { mcpPathOf } : {}),
    progress(progress, total, message) {
      if (token === undefined) return;
      // MCP requires progress to increase with every notification (the Gym's heartbeat keeps to that; this is the last guard).
      if (!(progress > last)) return;
      last = progress;
      void extra
        .sendNotification({
          method: 'notifications/progress',
          params: {
            progressToken: token,
            progress,
            ...(total !== undefined && total >= progress ? { total } : {}),
            ...(message ? { message } : {}),
          },
        })
        .catch(() => {});
    },
  };
}

/** A tool's result: text for models, its declared data for programs (keys it does not declare are not sent). */
export function toCallResult(tool: AnyTool, result: ToolResult, replicaUrl?: string): CallToolResult {
  // A result naming an episode's endpoint (start_episode, fork_episode) names it on this replica too.
  const data =
    replicaUrl && typeof result.data.mcpPath === 'string'
      ? { ...result.data, mcpUrl: episodeMcpUrl(replicaUrl, result.data.mcpPath) }
      : result.data;
  const parsed = tool.output.safeParse(data);
  return {
    content: [{ type: 'text', text: result.text }],
    structuredContent: (parsed.success ? parsed.data : data) as Record<string, unknown>,
  };
}

/** A failed call, however it failed (bad arguments, unknown tool or episode, the tool itself): text naming the code for models, the error object for programs. */
export function errorResult(err: unknown): CallToolResult {
  const e = toGymError(err);
  return { isError: true, content: [{ type: 'text', text: `Error ${e.code}: ${e.message}` }], structuredContent: { error: e.toJSON() } };
}

/**
 * Serves `tools` on an McpServer with benchgym's own tools/list and tools/call handlers, not
 * the SDK's registerTool: the SDK answers a schema violation or an unknown tool with text of
 * its own, and lists zod's JSON-schema noise. Here every failure is `errorResult`.
 */
function serveTools(server: McpServer, tools: Served[], mcpPathOf?: (episodeId: string) => string, replicaUrl?: string): void {
  const byName = new Map(tools.map((t) => [t.tool.name, t]));
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.map((t) => t.definition) }));
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args = {} } = request.params;
    try {
      const served = byName.get(name);
      if (!served)
        throw new GymError(
          'TOOL_NOT_AVAILABLE',
          `unknown tool '${name}' (this endpoint's tools: ${tools.map((t) => t.tool.name).join(', ')})`,
        );
      return toCallResult(served.tool, await served.call(args, toolContext(extra as unknown as Extra, mcpPathOf)), mcpPathOf && replicaUrl);
    } catch (err) {
      return errorResult(onReplica(err, replicaUrl));
    }
  });
}

export interface GymMcpOptions {
  /** Whether start_episode and fork_episode name each episode's own endpoint (`mcpPath`): only where HTTP serves it, not over stdio. Default true. */
  episodeEndpoints?: boolean;
  /** This replica's own URL (`serve --advertise-url`): episode endpoints are also named as absolute `mcpUrl`s, and an unknown episode names the replica asked. */
  replicaUrl?: string;
}

/** An episode's own MCP endpoint, with its key: only the caller that started or forked the episode is told it. */
const episodeMcpPathOf = (gym: Gym) => (id: string) => episodePath(gym.episode(id), 'mcp');

/**
 * The gym-wide MCP server: list_suites, list_tasks, start_episode, and every episode tool
 * taking an `episode_id`.
 */
export function createGymMcpServer(gym: Gym, opts: GymMcpOptions = {}): McpServer {
  const server = new McpServer(SERVER_INFO, {
    capabilities: { tools: {} },
    instructions: GYM_INSTRUCTIONS,
    jsonSchemaValidator: SHARED_VALIDATOR,
  });
  const tools: Served[] = gym.tools.map((tool) =>
    tool.scope === 'gym'
      ? { tool, definition: definitionOf(tool, false), call: (args, ctx) => gym.callTool(tool.name, args, ctx) }
      : {
          tool,
          definition: definitionOf(tool, true),
          call: ({ episode_id, ...args }, ctx) => {
            if (typeof episode_id !== 'string' || !episode_id) {
              throw new GymError(
                'INVALID_ARGUMENT',
                `invalid arguments for ${tool.name}: 'episode_id': ${episode_id === undefined ? 'required' : 'expected a non-empty string'} (the id start_episode returned)`,
                { fields: ['episode_id'] },
              );
            }
            return gym.callTool(tool.name, args, ctx, episode_id);
          },
        },
  );
  serveTools(server, tools, opts.episodeEndpoints === false ? undefined : episodeMcpPathOf(gym), opts.replicaUrl);
  return server;
}

/** An MCP server scoped to one episode: its tools (the core ones and its suite's) take no episode_id. */
export function createEpisodeMcpServer(gym: Gym, episodeId: string, opts: Pick<GymMcpOptions, 'replicaUrl'> = {}): McpServer {
  let episode: ReturnType<Gym['episode']>;
  try {
    episode = gym.episode(episodeId);
  } catch (err) {
    throw onReplica(err, opts.replicaUrl);
  }
  const server = new McpServer(SERVER_INFO, {
    capabilities: { tools: {} },
    jsonSchemaValidator: SHARED_VALIDATOR,
    instructions: `You are working on ${episode.task.suite}/${episode.task.id}.\n\n${episode.prompt}\n\nPaths are relative to the workspace root. Call submit when done.`,
  });
  const tools: Served[] = gym.episodeTools(episode).map((tool) => ({
    tool,
    definition: definitionOf(tool, false),
    call: (args, ctx) => gym.callEpisodeTool(gym.episode(episodeId), tool, args, ctx),
  }));
  serveTools(server, tools, episodeMcpPathOf(gym), opts.replicaUrl);
  return server;
}

const GYM_INSTRUCTIONS =
  'benchgym serves code-benchmark tasks as episodes. list_suites and list_tasks show what exists; start_episode gives an episodeId (pass it as episode_id), ' +
  'the problem statement and the workspace. Use view_file / search / edit_file / run_command / run_tests / view_error_log to work, ' +
  'get_diff to review, and submit once to be scored by hidden tests.';
