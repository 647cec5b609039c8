import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { z } from 'zod';
import { toGymError } from '../errors.ts';
import { VERSION } from '../version.ts';
import type { Gym } from '../episode/gym.ts';
import type { EpisodeTool } from '../tools/types.ts';
import type { AnyTool, ToolContext, ToolResult } from '../tools/types.ts';

export const SERVER_INFO = { name: 'benchgym', version: VERSION };

/** One JSON-schema validator for every session: the SDK otherwise compiles a new Ajv per McpServer, most of what an initialize costs. */
const SHARED_VALIDATOR = new AjvJsonSchemaValidator();

interface Extra {
  signal: AbortSignal;
  _meta?: { progressToken?: string | number };
  sendNotification: (n: { method: 'notifications/progress'; params: { progressToken: string | number; progress: number; total?: number; message?: string } }) => Promise<void>;
}

function toolContext(extra: Extra): ToolContext {
  const token = extra._meta?.progressToken;
  let last = -Infinity;
  return {
    signal: extra.signal,
    progress(progress, total, message) {
      if (token === undefined) return;
      // MCP requires progress to increase with every notification.
      const value = progress > last ? progress : last + 0.001;
      last = value;
      void extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: value, ...(total !== undefined && total >= value ? { total } : {}), ...(message ? { message } : {}) } }).catch(() => {});
    },
  };
}

function toCallResult(result: ToolResult): CallToolResult {
  return { content: [{ type: 'text', text: result.text }], structuredContent: result.data as Record<string, unknown> };
}

/** A failed call: text naming the code for models, the error object for programs. */
export function errorResult(err: unknown): CallToolResult {
  const e = toGymError(err);
  return { isError: true, content: [{ type: 'text', text: `Error ${e.code}: ${e.message}` }], structuredContent: { error: e.toJSON() } };
}

/** A tool's input with `episode_id`, built once per tool: a new schema per session is most of what creating one costs. */
const EPISODE_ID_INPUTS = new WeakMap<EpisodeTool, z.ZodObject>();
function withEpisodeId(tool: EpisodeTool): z.ZodObject {
  let input = EPISODE_ID_INPUTS.get(tool);
  if (!input) {
    input = tool.input.extend({ episode_id: z.string().min(1).describe('the episode id start_episode returned') });
    EPISODE_ID_INPUTS.set(tool, input);
  }
  return input;
}

function register(server: McpServer, tool: AnyTool, input: z.ZodObject, handler: (args: Record<string, unknown>, ctx: ToolContext) => Promise<ToolResult>): void {
  server.registerTool(
    tool.name,
    { title: tool.title, description: tool.description, inputSchema: input, annotations: { title: tool.title, ...tool.annotations } },
    async (args: Record<string, unknown>, extra: unknown) => {
      try {
        return toCallResult(await handler(args, toolContext(extra as Extra)));
      } catch (err) {
        return errorResult(err);
      }
    },
  );
}

/**
 * The gym-wide MCP server: list_suites, list_tasks, start_episode, and every episode tool
 * taking an `episode_id`.
 */
export function createGymMcpServer(gym: Gym): McpServer {
  const server = new McpServer(SERVER_INFO, { capabilities: { tools: {} }, instructions: GYM_INSTRUCTIONS, jsonSchemaValidator: SHARED_VALIDATOR });
  for (const tool of gym.tools.filter((t) => t.scope === 'gym')) register(server, tool, tool.input, (args, ctx) => gym.callTool(tool.name, args, ctx));
  for (const tool of gym.tools.filter((t): t is EpisodeTool => t.scope === 'episode')) {
    register(server, tool, withEpisodeId(tool), ({ episode_id, ...args }, ctx) => gym.callTool(tool.name, args, ctx, String(episode_id)));
  }
  return server;
}

/** An MCP server scoped to one episode: its tools take no episode_id. */
export function createEpisodeMcpServer(gym: Gym, episodeId: string): McpServer {
  const episode = gym.episode(episodeId);
  const server = new McpServer(SERVER_INFO, {
    capabilities: { tools: {} },
    jsonSchemaValidator: SHARED_VALIDATOR,
    instructions: `You are working on ${episode.task.suite}/${episode.task.id}.\n\n${episode.prompt}\n\nPaths are relative to the workspace root. Call submit when done.`,
  });
  for (const tool of gym.episodeTools(episode)) register(server, tool, tool.input, (args, ctx) => gym.callEpisodeTool(gym.episode(episodeId), tool, args, ctx));
  return server;
}

const GYM_INSTRUCTIONS =
  'benchgym serves code-benchmark tasks as episodes. list_suites and list_tasks show what exists; start_episode gives an episode_id, ' +
  'the problem statement and the workspace. Use view_file / search / edit_file / run_command / run_tests / view_error_log to work, ' +
  'get_diff to review, and submit once to be scored by hidden tests.';
