import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { startHttpServer, type RunningServer } from '../../src/server/http.ts';
import { wsGymExtension } from '../../src/server/ws_gym.ts';
import { wsMcpExtension } from '../../src/server/ws_mcp.ts';
import type { Gym } from '../../src/episode/gym.ts';
import { EXAMPLES_DIR } from '../../envs/examples/index.ts';
import { makeGym, testContext } from '../helpers.ts';
import type { LandingInfo } from '../../src/server/landing.ts';
import { episodePath } from '../../src/protocol/capability.ts';

const TOKEN = 'landing-test-token';
const auth = { authorization: `Bearer ${TOKEN}` };

describe('the landing page (GET /)', () => {
  let gym: Gym;
  let cleanup: () => Promise<void>;
  let server: RunningServer;

  before(async () => {
    ({ gym, cleanup } = await makeGym());
    server = await startHttpServer(gym, { port: 0, token: TOKEN, extensions: [wsGymExtension(), wsMcpExtension()] });
  });
  after(async () => {
    await server.close();
    await cleanup();
  });

  test('JSON when asked: the suites with their task counts, the endpoints, how to connect, links', async () => {
    const res = await fetch(`${server.url}/`, { headers: { ...auth, accept: 'application/json' } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /application\/json/);
    const info = (await res.json()) as LandingInfo;
    const tasks = (await fs.readdir(path.join(EXAMPLES_DIR, 'tasks'))).length;
    assert.deepEqual(
      info.suites.map((s) => [s.id, s.taskCount]),
      [['examples', tasks]],
    );
    assert.equal(info.sandbox, 'local');
    assert.equal(info.token, true);
    const byPath = new Map(info.endpoints.map((e) => [e.path, e]));
    assert.equal(byPath.get('/mcp')?.url, `${server.url}/mcp`);
    assert.equal(byPath.get('/ws')?.url, `${server.url.replace('http', 'ws')}/ws`, 'the gym protocol, as its extension registered it');
    assert.ok(byPath.has('/mcp/ws') && byPath.has('/episodes/:id/:key/mcp'));
    assert.equal(byPath.has('/ws/episodes/:id/pty'), false, 'no terminal extension, no terminal endpoint listed');
    assert.match(info.connect.claudeCode, /claude mcp add --transport http benchgym http:\/\/\S+\/mcp --header "Authorization: Bearer/);
    assert.equal(info.links.viewer, `${server.url}/view/`);
    const protocol = await fetch(info.links.docs['PROTOCOL.md']!, { headers: auth });
    assert.equal(protocol.status, 200);
    assert.match(await protocol.text(), /^# /);
  });

  test('HTML for a browser, the same content', async () => {
    const res = await fetch(`${server.url}/`, { headers: { ...auth, accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    const html = await res.text();
    assert.match(html, /<b>examples<\/b><\/td><td>\d+<\/td>/);
    assert.ok(html.includes(`${server.url}/mcp`) && html.includes('/view/'));
  });

  test("it is the operator's: no token, or an episode's key, does not open it", async () => {
    assert.equal((await fetch(`${server.url}/`)).status, 401);
    assert.equal((await fetch(`${server.url}/docs/PROTOCOL.md`)).status, 401);
    const started = await gym.callTool('start_episode', { task_id: 'roman-numerals' }, testContext());
    const episode = gym.episode((started.data as { episodeId: string }).episodeId);
    const mcpPath = episodePath(episode, 'mcp');
    for (const where of [mcpPath.replace(/\/mcp$/, '/'), mcpPath.replace(/\/mcp$/, ''), `/?key=${episode.key}`]) {
      const res = await fetch(`${server.url}${where}`, { headers: { accept: 'application/json' } });
      assert.ok(res.status === 404 || res.status === 401, `${where}: ${res.status}`);
      assert.doesNotMatch(await res.text(), /examples|"suites"/, where);
    }
  });

  test('only the listed documents are served; another name is a 404 naming them', async () => {
    for (const name of ['..%2Fpackage.json', 'package.json', '.env']) {
      const res = await fetch(`${server.url}/docs/${name}`, { headers: auth });
      assert.equal(res.status, 404, name);
      assert.match(await res.text(), /served: README\.md, PROTOCOL\.md/);
    }
  });
});
