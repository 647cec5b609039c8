import { toGymError } from '../../errors.ts';
import { startHttpServer } from '../../server/http.ts';
import { terminalExtension } from '../../server/pty.ts';
import { parseAdvertiseUrl } from '../../protocol/replica.ts';
import { SESSION_DEFAULTS } from '../../server/sessions.ts';
import { openEnvExtension } from '../../server/openenv/extension.ts';
import { wsGymExtension } from '../../server/ws_gym.ts';
import { wsMcpExtension } from '../../server/ws_mcp.ts';
import type { CliCommand } from '../command.ts';
import type { Composition } from '../composition.ts';
import { episodeLogLine } from '../episode_log.ts';
import { gymFlags, gymFlagsUsage, gymFrom } from '../gym_options.ts';
import { describeIsolation } from '../isolation.ts';
import { intFlag, parseFlags } from '../options.ts';
import { onShutdownSignals } from '../shutdown.ts';

const usage = (
  root: Composition,
) => `benchgym serve: the gym over HTTP (MCP, WebSocket gym protocol, OpenEnv, terminals) until SIGINT / SIGTERM
The banner names the isolation in effect; then one line on stderr per episode start, submission (with its
verdict), infrastructure error and end without a submission, each with the episode id and task id.

Usage:
  benchgym serve [--host 127.0.0.1] [--port 7420] [--sandbox NAME] [--suite ID[=PATH]]... [--token T]
                 [--allow-origin NAME]... [--allow-host NAME]... [--session-idle S] [--max-sessions N] [--session-rate N]
                 [--advertise-url URL]

Options:
  --host HOST        the address to listen on (default 127.0.0.1)
  --port N           the port (default 7420; 0: any free port)
  --token T          a bearer token every request must carry (default $BENCHGYM_TOKEN; none: no token)
  --allow-origin NAME, --allow-host NAME
                     browser origins and Host names accepted besides the local ones (repeatable)
  --session-idle S   seconds before an idle MCP session is closed (default ${SESSION_DEFAULTS.idleMs / 1000})
  --max-sessions N   open MCP sessions at most (default ${SESSION_DEFAULTS.max})
  --session-rate N   new MCP sessions per second at most (default ${SESSION_DEFAULTS.newPerSecond})
  --advertise-url URL
                     this replica's own address when several serve behind one (a Kubernetes Service; in a
                     pod http://$(POD_IP):7420): start_episode and fork_episode return each episode's endpoint
                     on it as mcpUrl, and /health names it (default: none, only the path mcpPath)
${gymFlagsUsage(root)}

Example:
  benchgym serve --suite examples --port 7420
`;

export function serveCommand(root: Composition): CliCommand {
  return {
    name: 'serve',
    summary: 'serve the gym over HTTP: MCP, the WebSocket gym protocol, OpenEnv and terminals',
    usage: usage(root),
    async run(args) {
      const { values } = parseFlags(args, {
        ...gymFlags(root),
        host: { type: 'string' },
        port: { type: 'string' },
        token: { type: 'string' },
        'allow-origin': { type: 'string', multiple: true },
        'allow-host': { type: 'string', multiple: true },
        'session-idle': { type: 'string' },
        'max-sessions': { type: 'string' },
        'session-rate': { type: 'string' },
        'advertise-url': { type: 'string' },
      });
      const advertiseUrl = values['advertise-url'] === undefined ? undefined : parseAdvertiseUrl(values['advertise-url']);
      const sessions = {
        sessionIdleMs: intFlag(values['session-idle'], 'session-idle', SESSION_DEFAULTS.idleMs / 1000, 1, 7 * 24 * 3600) * 1000,
        maxSessions: intFlag(values['max-sessions'], 'max-sessions', SESSION_DEFAULTS.max, 1, 100_000),
        sessionsPerSecond: intFlag(values['session-rate'], 'session-rate', SESSION_DEFAULTS.newPerSecond, 1, 100_000),
      };
      const gym = await gymFrom(values, root);
      // A missing Docker daemon is reported now and on every call; the server stays up.
      await gym.sandboxes.init?.().catch((err) => process.stderr.write(`benchgym: ${toGymError(err).message}\n`));
      const server = await startHttpServer(gym, {
        host: values.host ?? '127.0.0.1',
        port: intFlag(values.port, 'port', 7420, 0, 65535),
        token: values.token ?? process.env.BENCHGYM_TOKEN,
        allowedOrigins: values['allow-origin'],
        allowedHosts: values['allow-host'],
        ...sessions,
        ...(advertiseUrl ? { advertiseUrl } : {}),
        extensions: [wsGymExtension(), wsMcpExtension(sessions), openEnvExtension(sessions), terminalExtension()],
      });
      const suites = await gym.registry.list();
      const isolation = await describeIsolation(gym.sandboxes);
      const ws = server.url.replace(/^http/, 'ws');
      process.stderr.write(
        `benchgym serving ${suites.map((s) => `${s.id} (${s.taskCount} tasks)`).join(', ')} with the ${gym.sandboxes.backend} sandbox\n` +
          `  ${isolation}\n` +
          `  MCP (Streamable HTTP): ${server.url}/mcp\n` +
          `  one episode:           ${server.url}/episodes/<episode_id>/<key>/mcp (start_episode's mcpPath; its key opens it, and only it)\n` +
          `  MCP (WebSocket):       ${ws}/mcp/ws\n  gym (WebSocket):       ${ws}/ws\n` +
          `  OpenEnv:               ${server.url}/openenv (an OpenEnv client's base URL; its session at ${ws}/openenv/ws)\n` +
          `  terminal (browser):    ${server.url}/terminal/<episode_id>; an episode's own: ${server.url}/episodes/<episode_id>/<key>/terminal\n` +
          `  viewer (browser):      ${server.url}/view/ (live episodes: ${server.url}/view/#/live)\n` +
          ((values.token ?? process.env.BENCHGYM_TOKEN)
            ? ''
            : '  no token: every local process can reach every episode; hand an untrusted agent an episode URL only on a server with --token\n') +
          (advertiseUrl
            ? `  replica:               ${advertiseUrl} (start_episode names episodes as ${advertiseUrl}/episodes/<episode_id>/<key>/mcp)\n`
            : ''),
      );
      gym.onEvent((event) => {
        const line = episodeLogLine(event);
        if (line) process.stderr.write(`${line}\n`);
      });
      // Stops within SHUTDOWN_DEADLINE_MS, even when something hangs (shutdown.ts).
      onShutdownSignals(async () => {
        await server.close();
        await gym.close();
      });
      await new Promise(() => {});
      return 0;
    },
  };
}
