import { runStdioServer } from '../../server/stdio.ts';
import type { CliCommand } from '../command.ts';
import type { Composition } from '../composition.ts';
import { gymFlags, gymFlagsUsage, gymFrom } from '../gym_options.ts';
import { parseFlags } from '../options.ts';
import { onShutdownSignals } from '../shutdown.ts';

const usage = (root: Composition) => `benchgym mcp: the gym's MCP server over stdio (for Claude Desktop / Claude Code)

Usage:
  benchgym mcp [--suite ID[=PATH]]... [common options]

${gymFlagsUsage(root)}

Example:
  claude mcp add benchgym -- node /path/to/benchgym/bin/benchgym.js mcp --suite examples
`;

export function mcpCommand(root: Composition): CliCommand {
  return {
    name: 'mcp',
    summary: 'MCP over stdio (for Claude Desktop / Claude Code)',
    usage: usage(root),
    async run(args) {
      const { values } = parseFlags(args, gymFlags(root));
      const gym = await gymFrom(values, root);
      onShutdownSignals(() => gym.close());
      await runStdioServer(gym);
      await gym.close();
      return 0;
    },
  };
}
