import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Agent, AgentContext, AgentResult } from '../../src/agent/types.ts';
import type { Gym } from '../../src/episode/gym.ts';
import { PROJECT_ROOT } from '../../src/project.ts';
import { startRemoteEpisode } from '../../src/runner/remote.ts';
import { readResults, trajectoryName } from '../../src/runner/results.ts';
import { runExperiment, type AgentUnderTest } from '../../src/runner/runner.ts';
import type { Task } from '../../src/tasks/schema.ts';
import { makeGym, TEST_CACHE_DIR } from '../helpers.ts';
import { freePort, roundRobinProxy } from './round_robin_proxy.ts';

const TOKEN = 'replica-test-token';
const usage = { promptTokens: 0, completionTokens: 0, costUsd: 0, calls: 0 };

/** `benchgym serve` as its own process, on a port chosen beforehand so that it can advertise its URL. */
async function startReplica(dataDir: string): Promise<{ url: string; port: number; child: ChildProcess; stderr: () => string }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const args = [
    path.join(PROJECT_ROOT, 'bin', 'benchgym.js'),
    'serve',
    '--suite',
    'examples',
    '--port',
    String(port),
    '--advertise-url',
    url,
    '--token',
    TOKEN,
    '--data-dir',
    dataDir,
    '--cache-dir',
    TEST_CACHE_DIR,
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (b) => (stderr += b));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Not left running: a replica that did not come up is stopped before the test fails.
      child.kill('SIGKILL');
      reject(new Error(`benchgym serve did not start in 180 s: ${stderr}`));
    }, 180_000);
    child.stderr!.on('data', () => {
      if (stderr.includes('replica:')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`benchgym serve exited ${code}: ${stderr}`)));
  });
  return { url, port, child, stderr: () => stderr };
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

async function callOk(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content)}`);
  return r;
}

/**
 * A bare MCP client over one kept-alive connection (as a Service with session affinity keeps a
 * client on one replica): initialize, then one tool call, JSON-RPC over Streamable HTTP by hand.
 */
async function callOverOneConnection(url: string, tool: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const post = (body: unknown, session?: string) =>
    new Promise<{
      status: number;
      session?: string;
      messages: { id?: number; result?: { structuredContent?: Record<string, unknown> } }[];
    }>((resolve, reject) => {
      const req = http.request(
        `${url}/mcp`,
        {
          method: 'POST',
          agent,
          headers: {
            authorization: `Bearer ${TOKEN}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...(session ? { 'mcp-session-id': session } : {}),
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => {
            const datas = res.headers['content-type']?.includes('text/event-stream')
              ? text
                  .split('\n')
                  .filter((l) => l.startsWith('data: '))
                  .map((l) => l.slice(6))
              : text
                ? [text]
                : [];
            resolve({
              status: res.statusCode!,
              session: res.headers['mcp-session-id'] as string | undefined,
              messages: datas.map((d) => JSON.parse(d)),
            });
          });
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
  try {
    const init = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'one-connection', version: '0' } },
    });
    assert.equal(init.status, 200);
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, init.session);
    const called = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: tool, arguments: args } }, init.session);
    assert.equal(called.status, 200, JSON.stringify(called.messages));
    return called.messages.find((m) => m.id === 2)!.result!.structuredContent!;
  } finally {
    agent.destroy();
  }
}

describe('several benchgym serve replicas behind a round-robin load balancer', () => {
  let dir: string;
  let replicas: Awaited<ReturnType<typeof startReplica>>[];
  let proxy: Awaited<ReturnType<typeof roundRobinProxy>>;
  let gym: Gym;
  let cleanupGym: () => Promise<void>;

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-replicas-'));
    replicas = [];
    const starting = [startReplica(path.join(dir, 'a')), startReplica(path.join(dir, 'b'))];
    // Each one that starts is kept, so that after() stops it even when the other did not start.
    for (const s of starting)
      s.then(
        (r) => replicas.push(r),
        () => {},
      );
    await Promise.all(starting);
    proxy = await roundRobinProxy(replicas.map((r) => r.port));
    // The runner's own gym only selects the tasks; the episodes run on the replicas.
    ({ gym, cleanup: cleanupGym } = await makeGym());
  });
  after(async () => {
    await proxy?.close();
    for (const r of replicas ?? []) {
      if (r.child.exitCode === null && r.child.signalCode === null) {
        const exited = new Promise((resolve) => r.child.once('exit', resolve));
        r.child.kill('SIGTERM');
        await exited;
      }
    }
    await cleanupGym?.();
    await fs.rm(dir, { recursive: true, force: true });
  });

  test(
    'start_episode through the load balancer lands on each replica ' + "in turn and names the owner's URL; the episode works there",
    async () => {
      // Two clients, each on a connection of its own through the balancer: one lands on each replica, and each start_episode names its
      // replica.
      const direct = [
        await callOverOneConnection(proxy.url, 'start_episode', { task_id: 'roman-numerals' }),
        await callOverOneConnection(proxy.url, 'start_episode', { task_id: 'roman-numerals' }),
      ];
      assert.deepEqual(direct.map((d) => new URL(String(d.mcpUrl)).origin).sort(), replicas.map((r) => r.url).sort());
      for (const d of direct) {
        assert.equal(d.mcpUrl, `${new URL(String(d.mcpUrl)).origin}${d.mcpPath}`);
        // The episode is driven at its mcpUrl, on the replica that holds it.
        const client = new Client({ name: 't', version: '0' });
        // Its key opens it: no token.
        await client.connect(new StreamableHTTPClientTransport(new URL(String(d.mcpUrl))));
        const r = await callOk(client, 'run_command', { command: 'echo at-mcp-url' });
        assert.match((r.structuredContent as { stdout: string }).stdout, /at-mcp-url/);
        await callOk(client, 'end_episode', {});
        await client.close();
      }
      // The runner's way: which replica answers (GET /health on a new connection), then start_episode there.
      const server = { url: proxy.url, token: TOKEN };
      const signal = new AbortController().signal;
      const episodes = [];
      for (let i = 0; i < 2; i++)
        episodes.push(await startRemoteEpisode(server, { suite: 'examples', taskId: 'roman-numerals' }, { signal, onLost: () => {} }));
      try {
        assert.deepEqual(episodes.map((e) => e.replica).sort(), replicas.map((r) => r.url).sort(), 'one episode on each replica');
        for (const e of episodes) {
          assert.match(e.mcpUrl, new RegExp(`^${e.replica.replace(/[.]/g, '\\.')}/episodes/${e.id}/[A-Za-z0-9_-]{32}/mcp$`));
          const r = await callOk(e.session.client, 'run_command', { command: 'echo on-replica' });
          assert.match((r.structuredContent as { stdout: string }).stdout, /on-replica/);
        }
        // The other replica does not hold the episode, and says which replica it is.
        const [first, second] = episodes;
        const wrong = new Client({ name: 't', version: '0' });
        await wrong.connect(
          new StreamableHTTPClientTransport(new URL(`${second!.replica}/mcp`), {
            requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
          }),
        );
        const refused = (await wrong.callTool({
          name: 'view_file',
          arguments: { episode_id: first!.id, path: 'README.md' },
        })) as CallToolResult;
        await wrong.close();
        const error = (refused.structuredContent as { error: { code: string; message: string } }).error;
        assert.equal(error.code, 'EPISODE_NOT_FOUND');
        assert.ok(error.message.includes(`on replica ${second!.replica}`), error.message);
      } finally {
        for (const e of episodes) await e.end();
      }
    },
  );

  test(
    'a replica killed mid-run: its samples are infrastructure failures ' +
      "retried to completion on the survivor; the other replica's are unaffected",
    async () => {
      const firstWave = 4;
      let started = 0;
      const allStarted = deferred();
      const gate = deferred();
      const agent: AgentUnderTest = {
        name: 'gated-gold',
        create(task: Task): Agent {
          return {
            async run(ctx: AgentContext): Promise<AgentResult> {
              await callOk(ctx.client, 'run_command', { command: 'echo started' });
              if (started < firstWave) {
                if (++started === firstWave) allStarted.resolve();
                await gate.promise;
              }
              for (const [file, content] of Object.entries(task.solution?.files ?? {}))
                await callOk(ctx.client, 'create_file', { path: file, content, overwrite: true });
              const r = (await ctx.client.callTool({ name: 'submit', arguments: {} })) as CallToolResult;
              return {
                verdict: (r.structuredContent ?? null) as Record<string, unknown> | null,
                submitted: !r.isError,
                stopReason: 'submitted',
                steps: 3,
                usage,
              };
            },
          };
        },
      };
      const outDir = path.join(dir, 'run');
      const tasks = ['roman-numerals', 'parse-duration'];
      const [doomed, survivor] = replicas as [Awaited<ReturnType<typeof startReplica>>, Awaited<ReturnType<typeof startReplica>>];
      const run = runExperiment({
        gym,
        outDir,
        suite: 'examples',
        tasks,
        samples: 2,
        concurrency: 4,
        retries: 2,
        retryDelayMs: () => 200,
        agent,
        model: { model: 'none' },
        server: { url: proxy.url, token: TOKEN },
      });
      await Promise.race([allStarted.promise, run.then(() => assert.fail('the run ended before its episodes were all started'))]);
      const exited = new Promise((resolve) => doomed.child.once('exit', resolve));
      doomed.child.kill('SIGKILL');
      await exited;
      gate.resolve();
      const outcome = await run;

      assert.equal(outcome.aborted, false);
      assert.equal(outcome.results.length, 4);
      for (const r of outcome.results) assert.equal(r.status, 'passed', JSON.stringify(r));
      const { records } = await readResults(path.join(outDir, 'results.jsonl'));
      // Where each attempt ran: the runner's trajectory names the replica.
      const replicaOf = new Map<string, string>();
      for (const task of tasks) {
        for (const sample of [0, 1]) {
          const lines = (await fs.readFile(path.join(outDir, 'trajectories', trajectoryName(task, sample)), 'utf8'))
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l) as Record<string, unknown>);
          for (const l of lines.filter((x) => x.type === 'attempt')) {
            replicaOf.set(String(l.episodeId), String(l.replica));
            // The endpoint is recorded without the episode's key: a trajectory is shown in the viewer.
            assert.equal(l.mcpUrl, `${String(l.replica)}/episodes/${String(l.episodeId)}/<key>/mcp`);
          }
        }
      }
      const firstAttempts = records.filter((r) => r.attempt === 1);
      assert.equal(firstAttempts.length, 4);
      const onDoomed = firstAttempts.filter((r) => replicaOf.get(r.episodeId!) === doomed.url);
      const onSurvivor = firstAttempts.filter((r) => replicaOf.get(r.episodeId!) === survivor.url);
      assert.equal(onDoomed.length, 2, 'round robin put two of the four episodes on the killed replica');
      assert.equal(onSurvivor.length, 2);
      for (const r of onDoomed) {
        assert.equal(r.infra, true, JSON.stringify(r));
        assert.equal(r.status, 'error');
        assert.equal(r.final, false);
        assert.equal(r.infraError?.code, 'SANDBOX_UNAVAILABLE');
        assert.ok(r.infraError?.message.includes(`replica ${doomed.url} stopped answering`), r.infraError?.message);
        const retried = records.filter((x) => x.task === r.task && x.sample === r.sample && x.attempt > 1);
        assert.equal(retried.length, 1, 'retried once, to completion');
        assert.equal(retried[0]!.status, 'passed');
        assert.equal(retried[0]!.final, true);
        assert.equal(replicaOf.get(retried[0]!.episodeId!), survivor.url, 'the retry ran on the survivor');
      }
      for (const r of onSurvivor) {
        assert.equal(r.infra, false);
        assert.equal(r.status, 'passed');
        assert.equal(r.final, true, "the survivor's episodes were not touched by the other's death");
      }
      assert.equal(records.length, 6);
      // The survivor is still healthy and holds no leftover episode.
      const health = (await (await fetch(`${survivor.url}/health`, { headers: { Authorization: `Bearer ${TOKEN}` } })).json()) as {
        replica: string;
        episodes: { running: number };
      };
      assert.equal(health.replica, survivor.url);
      assert.equal(health.episodes.running, 0);
    },
  );
});
