import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { dockerClient } from '../../../src/sandbox/docker/client.ts';
import { PROJECT_ROOT } from '../../../src/tasks/registry.ts';
import { TEST_CACHE_DIR } from '../../helpers.ts';
import { dockerSkipReason } from './skip.ts';

function serve(serverId: string, dataDir: string): { child: ChildProcess; url: Promise<string> } {
  const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'bin', 'benchgym.js'), 'serve', '--sandbox', 'docker', '--server-id', serverId, '--pool', '1', '--port', '0', '--data-dir', dataDir, '--cache-dir', TEST_CACHE_DIR], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const url = new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (b) => {
      stderr += b;
      const m = /MCP \(Streamable HTTP\): (http:\/\/\S+)\/mcp/.exec(stderr);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
  return { child, url };
}

async function ours(serverId: string): Promise<{ containers: number; volumes: number }> {
  const docker = dockerClient();
  const filters = JSON.stringify({ label: [`benchgym.server=${serverId}`] });
  const containers = await docker.listContainers({ all: true, filters });
  const { Volumes } = await docker.listVolumes({ filters });
  return { containers: containers.length, volumes: (Volumes ?? []).length };
}

test('kill -9 of the server with 5 live episodes, then a restart, leaves no container or volume of ours', async (t) => {
  const skip = await dockerSkipReason();
  if (skip) return t.skip(skip);
  const serverId = `test-reap-${randomBytes(4).toString('hex')}`;
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-reap-'));
  const first = serve(serverId, dataDir);
  let second: ReturnType<typeof serve> | undefined;
  try {
    const client = new Client({ name: 'reaper-test', version: '0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${await first.url}/mcp`)));
    for (let i = 0; i < 5; i++) {
      const r = await client.callTool({ name: 'start_episode', arguments: { task_id: 'roman-numerals' } }, undefined, { timeout: 300_000 });
      assert.equal(r.isError, undefined, JSON.stringify(r.content));
    }
    const live = await ours(serverId);
    assert.ok(live.containers >= 5, `${live.containers} containers live`);

    // A second process with the same server id, started while the first lives, leaves the
    // first's episodes alone (two `benchgym` commands on one engine must not reap each other).
    const neighbour = serve(serverId, await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-reap-')));
    try {
      const other = new Client({ name: 'reaper-test-2', version: '0' });
      await other.connect(new StreamableHTTPClientTransport(new URL(`${await neighbour.url}/mcp`)));
      const r = await other.callTool({ name: 'start_episode', arguments: { task_id: 'roman-numerals' } }, undefined, { timeout: 300_000 });
      assert.equal(r.isError, undefined, JSON.stringify(r.content));
      assert.ok((await ours(serverId)).containers >= live.containers + 1, 'the live server\'s containers are still there');
      const answered = await client.callTool({ name: 'list_tasks', arguments: {} });
      assert.equal(answered.isError, undefined);
      await other.close().catch(() => {});
    } finally {
      const gone = new Promise((r) => neighbour.child.once('exit', r));
      neighbour.child.kill('SIGTERM');
      await gone;
    }
    assert.ok((await ours(serverId)).containers >= 5, 'the neighbour removed only its own');

    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));
    await client.close().catch(() => {});
    assert.ok((await ours(serverId)).containers >= 5, 'a killed server cannot clean up after itself');

    second = serve(serverId, dataDir);
    await second.url;
    assert.deepEqual(await ours(serverId), { containers: 0, volumes: 0 });
    const exited = new Promise((r) => second!.child.once('exit', r));
    second.child.kill('SIGTERM');
    await exited;
  } finally {
    first.child.kill('SIGKILL');
    second?.child.kill('SIGKILL');
    const docker = dockerClient();
    const filters = JSON.stringify({ label: [`benchgym.server=${serverId}`] });
    for (const c of await docker.listContainers({ all: true, filters })) await docker.getContainer(c.Id).remove({ force: true }).catch(() => {});
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});
