/**
 * The server side of bench/throughput.ts, in a process of its own so that its RSS and CPU are the
 * server's alone: a Gym on the local or Docker backend, served over Streamable HTTP MCP and the
 * WebSocket gym protocol on 127.0.0.1. Prints `{"url": ...}` on stdout once listening.
 *
 *   node --import tsx bench/throughput/server.ts <local|docker> <max episodes> <data dir> <cache dir>
 */
import path from 'node:path';
import { startHttpServer } from '../../src/server/http.ts';
import { wsGymExtension } from '../../src/server/ws_gym.ts';
import { DockerSandboxFactory } from '../../src/sandbox/docker/index.ts';
import { localGym } from '../../bin/builtins.ts';

const [backend, max, dataDir, cacheDir] = process.argv.slice(2);
if (!backend || !max || !dataDir || !cacheDir || !['local', 'docker'].includes(backend)) {
  console.error('usage: server.ts <local|docker> <max episodes> <data dir> <cache dir>');
  process.exit(2);
}
const maxEpisodes = Number(max);
const sandboxes =
  backend === 'docker'
    ? new DockerSandboxFactory({ serverId: `bench-throughput-${process.pid}`, poolSize: 0, maxContainers: maxEpisodes + 8 })
    : undefined;
const gym = localGym({
  dataDir: path.resolve(dataDir),
  cacheDir: path.resolve(cacheDir),
  ...(sandboxes ? { sandboxes } : {}),
  defaults: { maxEpisodes },
});
// A run of 128 episodes opens 128 MCP sessions at once: the default rate of new sessions would refuse the burst.
const server = await startHttpServer(gym, {
  host: '127.0.0.1',
  port: 0,
  extensions: [wsGymExtension()],
  maxSessions: 4 * maxEpisodes + 64,
  sessionsPerSecond: 10_000,
});
console.log(JSON.stringify({ url: server.url, pid: process.pid }));
const stop = async () => {
  await server.close().catch(() => {});
  await gym.close().catch(() => {});
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.stdin.on('end', () => void stop());
process.stdin.resume();
