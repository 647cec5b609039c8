/**
 * Issue 34, part 3: which share of an MCP step is the SDK client's. One benchgym server in a process
 * of its own (bench/throughput/server.ts, Docker backend), one episode, and two clients of the same
 * session, interleaved call by call: the SDK's Client over StreamableHTTPClientTransport (undici
 * fetch) and a bare node:http keep-alive client posting the same JSON-RPC. Their difference is the
 * SDK client's; the bare client's figure is the round trip plus the server.
 *
 *   node --import tsx bench/client_split.ts [rounds]
 *   BENCHGYM_THROUGHPUT_SERVER_ARGS='--cpu-prof --cpu-prof-dir=DIR' node --import tsx bench/client_split.ts   # the server's profile
 */
import os from 'node:os';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { Agent, request } from 'node:http';
import { setMaxListeners } from 'node:events';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ServerProcess } from './throughput/server_process.ts';
import { percentile } from './stats.ts';

setMaxListeners(0);
const R = Number(process.argv[2] ?? 200);
const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'split-'));
const server = await ServerProcess.start('docker', 4, dataDir);
const client = new Client({ name: 'split', version: '0' });
const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`));
await client.connect(transport);
const call = async (name: string, args: Record<string, unknown>) => {
  const r = await client.callTool({ name, arguments: args });
  if (r.isError) throw new Error(JSON.stringify(r.content));
  return r.structuredContent as Record<string, unknown>;
};
const id = (await call('start_episode', { task_id: 'roman-numerals', max_steps: 10000 })).episodeId as string;
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
let n = 1000;
const raw = (method: string, params?: unknown) => {
  const body = JSON.stringify({ jsonrpc: '2.0', id: n++, method, ...(params ? { params } : {}) });
  return new Promise<void>((resolve, reject) => {
    const req = request(
      `${server.url}/mcp`,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': transport.sessionId!,
          'mcp-protocol-version': transport.protocolVersion ?? '2025-06-18',
          'content-length': String(Buffer.byteLength(body)),
        },
      },
      (res) => {
        let t = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (t += c));
        res.on('end', () =>
          res.statusCode === 200 && t.includes('"result"') && !t.includes('"isError":true') ? resolve() : reject(new Error(t)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
};
const figs: Record<string, () => Promise<unknown>> = {
  sdk_run_command: () => call('run_command', { episode_id: id, command: 'true' }),
  raw_run_command: () => raw('tools/call', { name: 'run_command', arguments: { episode_id: id, command: 'true' } }),
  sdk_ping: () => client.ping(),
  raw_ping: () => raw('ping'),
};
for (let i = 0; i < 10; i++) for (const f of Object.values(figs)) await f();
const s: Record<string, number[]> = Object.fromEntries(Object.keys(figs).map((k) => [k, []]));
const load0 = os.loadavg()[0];
for (let i = 0; i < R; i++)
  for (const [k, f] of Object.entries(figs)) {
    const t = process.hrtime.bigint();
    await f();
    s[k]!.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
for (const [k, v] of Object.entries(s)) {
  v.sort((a, b) => a - b);
  console.log(`${k.padEnd(16)} min ${v[0]!.toFixed(2)}  p50 ${percentile(v, 50).toFixed(2)}  p90 ${percentile(v, 90).toFixed(2)}`);
}
console.log(`rounds ${R}, load ${load0.toFixed(1)} -> ${os.loadavg()[0].toFixed(1)}, server CPU ${server.cpuSeconds()} s`);
await call('end_episode', { episode_id: id });
await client.close();
await server.stop();
await fs.rm(dataDir, { recursive: true, force: true });
