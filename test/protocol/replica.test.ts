import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { GymError } from '../../src/errors.ts';
import type { Gym } from '../../src/episode/gym.ts';
import { startHttpServer, type RunningServer } from '../../src/server/http.ts';
import { parseAdvertiseUrl } from '../../src/protocol/replica.ts';
import { makeGym } from '../helpers.ts';
import { call, data } from '../server/scenario.ts';

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: 'benchgym-test', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: 'Bearer t' } } }));
  return client;
}

test('--advertise-url is an http(s) URL without credentials, query or fragment; the trailing slash goes', () => {
  assert.equal(parseAdvertiseUrl('http://10.1.2.3:7420/'), 'http://10.1.2.3:7420');
  assert.equal(parseAdvertiseUrl('https://gym.example/prefix/'), 'https://gym.example/prefix');
  for (const bad of ['10.1.2.3:7420', 'ftp://x', 'http://u:p@x', 'http://x/?a=1', 'http://$(POD_IP):7420']) {
    assert.throws(
      () => parseAdvertiseUrl(bad),
      (e: unknown) => e instanceof GymError && e.code === 'INVALID_ARGUMENT' && e.message.includes('--advertise-url'),
      bad,
    );
  }
});

describe('a server replica that advertises its own URL', () => {
  let gymA: Gym;
  let gymB: Gym;
  let cleanups: (() => Promise<void>)[] = [];
  let a: RunningServer;
  let b: RunningServer;

  before(async () => {
    const ga = await makeGym();
    const gb = await makeGym();
    gymA = ga.gym;
    gymB = gb.gym;
    // The advertised URL is what a load balancer's clients must use; here it is the replica's own address.
    a = await startHttpServer(gymA, { port: 0, token: 't' });
    await a.close();
    a = await startHttpServer(gymA, { port: a.port, token: 't', advertiseUrl: `http://127.0.0.1:${a.port}/` });
    b = await startHttpServer(gymB, { port: 0, token: 't', advertiseUrl: 'http://127.0.0.1:1/' });
    cleanups = [() => a.close(), () => b.close(), ga.cleanup, gb.cleanup];
  });
  after(async () => {
    for (const c of cleanups) await c();
  });

  test('start_episode and fork_episode name the episode on the replica (mcpUrl) and keep mcpPath; /health names the replica', async () => {
    const client = await connect(`${a.url}/mcp`);
    try {
      const started = data(await call(client, 'start_episode', { task_id: 'roman-numerals' }));
      assert.match(started.mcpPath, new RegExp(`^/episodes/${started.episodeId}/[A-Za-z0-9_-]{32}/mcp$`));
      assert.equal(started.mcpUrl, `http://127.0.0.1:${a.port}${started.mcpPath}`);
      const forked = data(await call(client, 'fork_episode', { episode_id: started.episodeId }));
      assert.match(forked.mcpUrl, new RegExp(`^http://127\\.0\\.0\\.1:${a.port}/episodes/${forked.episodeId}/[A-Za-z0-9_-]{32}/mcp$`));
      assert.notEqual(forked.mcpPath.split('/')[3], started.mcpPath.split('/')[3], 'a fork has a key of its own');
      // The URL works: the episode's own endpoint on that replica.
      const episode = await connect(started.mcpUrl);
      const listed = data(await call(episode, 'list_dir', { path: '.' }));
      assert.ok(Array.isArray(listed.entries) && listed.entries.length > 0);
      await episode.close();
      const health = (await (await fetch(`${a.url}/health`, { headers: { Authorization: 'Bearer t' } })).json()) as {
        replica?: string;
        episodes: { running: number };
      };
      assert.equal(health.replica, `http://127.0.0.1:${a.port}`);
      assert.equal(health.episodes.running, 2);
      await call(client, 'end_episode', { episode_id: forked.episodeId });
      await call(client, 'end_episode', { episode_id: started.episodeId });
    } finally {
      await client.close();
    }
  });

  test('another replica refuses the episode with EPISODE_NOT_FOUND naming itself, on /mcp and on /episodes/<id>/<key>/mcp', async () => {
    const clientA = await connect(`${a.url}/mcp`);
    const clientB = await connect(`${b.url}/mcp`);
    try {
      const started = data(await call(clientA, 'start_episode', { task_id: 'roman-numerals' }));
      const id = started.episodeId as string;
      const refused = await call(clientB, 'view_file', { episode_id: id, path: 'README.md' });
      assert.equal(refused.isError, true);
      const error = (refused.structuredContent as { error: { code: string; message: string; details?: { replica?: string } } }).error;
      assert.equal(error.code, 'EPISODE_NOT_FOUND');
      assert.match(error.message, /on replica http:\/\/127\.0\.0\.1:1: each replica serves only the episodes it started/);
      assert.equal(error.details?.replica, 'http://127.0.0.1:1');
      const res = await fetch(`${b.url}${started.mcpPath}`, {
        method: 'POST',
        headers: { Authorization: 'Bearer t', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
        }),
      });
      assert.equal(res.status, 404);
      assert.match(
        await res.text(),
        new RegExp(
          String.raw`EPISODE_NOT_FOUND: no episode endpoint at this address.* on replica http:\/\/127\.0\.0\.1:1: each ` +
            String.raw`replica serves only the episodes it started`,
        ),
      );
      await call(clientA, 'end_episode', { episode_id: id });
    } finally {
      await clientA.close();
      await clientB.close();
    }
  });

  test('without --advertise-url there is no mcpUrl', async () => {
    const { gym, cleanup } = await makeGym();
    const plain = await startHttpServer(gym, { port: 0 });
    const client = new Client({ name: 'benchgym-test', version: '0.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${plain.url}/mcp`)));
    try {
      const started = data(await call(client, 'start_episode', { task_id: 'roman-numerals' }));
      assert.equal(started.mcpUrl, undefined);
      assert.match(started.mcpPath, new RegExp(`^/episodes/${started.episodeId}/[A-Za-z0-9_-]{32}/mcp$`));
    } finally {
      await client.close();
      await plain.close();
      await cleanup();
    }
  });
});
