import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Gym } from '../episode/gym.ts';
import { createGymMcpServer } from '../protocol/mcp.ts';

/** Serves the gym-wide MCP server on stdin/stdout until the client goes away (no HTTP: episodes have no endpoint of their own). */
export async function runStdioServer(gym: Gym): Promise<void> {
  const server = createGymMcpServer(gym, { episodeEndpoints: false });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.on('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close().catch(() => {});
}
