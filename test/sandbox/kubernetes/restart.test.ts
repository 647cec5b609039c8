import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { CoreV1Api } from '@kubernetes/client-node';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadKubeConfig } from '../../../src/sandbox/kubernetes/client.ts';
import { PROJECT_ROOT } from '../../../src/tasks/registry.ts';
import { TEST_CACHE_DIR } from '../../helpers.ts';
import { kubernetesSkipReason, testKubeconfig } from './skip.ts';

const NAMESPACE = 'benchgym-test';

function serve(serverId: string, dataDir: string): { child: ChildProcess; url: Promise<string> } {
  const args = [path.join(PROJECT_ROOT, 'bin', 'benchgym.js'), 'serve', '--sandbox', 'kubernetes', '--kubeconfig', testKubeconfig(), '--namespace', NAMESPACE, '--server-id', serverId, '--port', '0', '--data-dir', dataDir, '--cache-dir', TEST_CACHE_DIR];
  const env = { ...process.env, BENCHGYM_KUBERNETES_LOAD_IMAGE: path.join(PROJECT_ROOT, 'docker', 'cluster', 'load-image.sh') };
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], env });
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

test('kill -9 of the server with 3 live episodes, then a restart, leaves no pod of ours', async (t) => {
  const skip = await kubernetesSkipReason();
  if (skip) return t.skip(skip);
  const core = loadKubeConfig(testKubeconfig()).makeApiClient(CoreV1Api);
  const serverId = `test-reap-${randomBytes(4).toString('hex')}`;
  const ours = async () => (await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: `benchgym.server=${serverId}` })).items.filter((p) => !p.metadata?.deletionTimestamp).length;
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-kreap-'));
  const first = serve(serverId, dataDir);
  let second: ReturnType<typeof serve> | undefined;
  try {
    const client = new Client({ name: 'kreaper-test', version: '0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${await first.url}/mcp`)));
    for (let i = 0; i < 3; i++) {
      const r = await client.callTool({ name: 'start_episode', arguments: { task_id: 'roman-numerals' } }, undefined, { timeout: 300_000 });
      assert.equal(r.isError, undefined, JSON.stringify(r.content));
    }
    assert.ok((await ours()) >= 3, 'the episodes have pods');
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));
    await client.close().catch(() => {});
    assert.ok((await ours()) >= 3, 'a killed server cannot clean up after itself');
    second = serve(serverId, dataDir);
    await second.url;
    assert.equal(await ours(), 0);
    const exited = new Promise((r) => second!.child.once('exit', r));
    second.child.kill('SIGTERM');
    await exited;
  } finally {
    first.child.kill('SIGKILL');
    second?.child.kill('SIGKILL');
    const left = await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: `benchgym.server=${serverId}` }).catch(() => null);
    for (const p of left?.items ?? []) await core.deleteNamespacedPod({ name: p.metadata!.name!, namespace: NAMESPACE, gracePeriodSeconds: 0 }).catch(() => {});
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});
