import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { GymError } from '../../src/errors.ts';
import type { Gym } from '../../src/episode/gym.ts';
import { connectionFailure, replicaOf, startRemoteEpisode } from '../../src/runner/remote.ts';
import { startHttpServer, type RunningServer } from '../../src/server/http.ts';
import { makeGym } from '../helpers.ts';
import { freePort } from './round_robin_proxy.ts';
import { episodePath } from '../../src/protocol/capability.ts';

test('connectionFailure: refused, reset and cut-off connections (however deep the cause), not aborts or answers', async () => {
  const refused = await fetch(`http://127.0.0.1:${await freePort()}/`).catch((e: unknown) => e);
  assert.match(connectionFailure(refused) ?? '', /^ECONNREFUSED/);
  assert.match(
    connectionFailure(new TypeError('terminated', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) })) ??
      '',
    /^UND_ERR_SOCKET/,
  );
  assert.equal(connectionFailure(Object.assign(new Error('x'), { name: 'AbortError' })), undefined);
  assert.equal(connectionFailure(new GymError('EPISODE_NOT_FOUND', 'no episode')), undefined);
  assert.equal(connectionFailure(new Error('HTTP 500')), undefined);
});

describe('a server reached over HTTP', () => {
  let gym: Gym;
  let cleanup: () => Promise<void>;
  let plain: RunningServer;
  let advertised: RunningServer;

  before(async () => {
    ({ gym, cleanup } = await makeGym());
    plain = await startHttpServer(gym, { port: 0, token: 't' });
    advertised = await startHttpServer(gym, { port: 0, token: 't', advertiseUrl: 'http://10.9.8.7:7420' });
  });
  after(async () => {
    await plain.close();
    await advertised.close();
    await cleanup();
  });

  test('replicaOf: the replica /health names, else the URL asked; nothing listening is SANDBOX_UNAVAILABLE; a wrong token is UNAUTHORIZED', async () => {
    assert.equal(await replicaOf({ url: `${plain.url}/mcp`, token: 't' }), plain.url);
    assert.equal(await replicaOf({ url: advertised.url, token: 't' }), 'http://10.9.8.7:7420');
    const nobody = `http://127.0.0.1:${await freePort()}`;
    await assert.rejects(
      replicaOf({ url: nobody }, undefined, 2),
      (e: unknown) =>
        e instanceof GymError && e.code === 'SANDBOX_UNAVAILABLE' && e.message.includes(`${nobody} is not reachable (ECONNREFUSED`),
    );
    await assert.rejects(replicaOf({ url: plain.url, token: 'wrong' }), (e: unknown) => e instanceof GymError && e.code === 'UNAUTHORIZED');
  });

  test('startRemoteEpisode on a server without --advertise-url: the episode at URL + mcpPath, its verdict kept, ended on end()', async () => {
    const lost: string[] = [];
    const ep = await startRemoteEpisode(
      { url: plain.url, token: 't' },
      { suite: 'examples', taskId: 'roman-numerals' },
      { signal: new AbortController().signal, onLost: (why) => lost.push(why) },
    );
    assert.equal(ep.replica, plain.url);
    assert.equal(ep.mcpUrl, `${plain.url}${episodePath(gym.episode(ep.id), 'mcp')}`);
    assert.match(ep.prompt, /roman/i);
    const submitted = (await ep.session.client.callTool({ name: 'submit', arguments: {} })) as CallToolResult;
    assert.ok(!submitted.isError);
    assert.equal(ep.verdict()?.reward, 0, 'the untouched start state fails');
    assert.equal(ep.verdict()?.status, 'failed');
    assert.equal(typeof (await ep.finalDiff()), 'string');
    await ep.end();
    assert.equal(gym.episode(ep.id).state, 'submitted');
    assert.deepEqual(lost, []);
    assert.equal(ep.lost(), undefined);
  });

  test('startRemoteEpisode: a start the server refuses is its GymError', async () => {
    await assert.rejects(
      startRemoteEpisode(
        { url: plain.url, token: 't' },
        { suite: 'examples', taskId: 'no-such-task' },
        { signal: new AbortController().signal, onLost: () => {} },
      ),
      (e: unknown) => e instanceof GymError && e.code === 'TASK_NOT_FOUND' && e.message.includes(`start_episode on ${plain.url}`),
    );
  });
});
