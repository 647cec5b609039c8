import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { promisify } from 'node:util';
import { ApiException, CoreV1Api } from '@kubernetes/client-node';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { PROJECT_ROOT } from '../../src/project.ts';
import { loadKubeConfig } from '../../src/sandbox/kubernetes/client.ts';
import { WebSocket } from 'ws';
import { builtinRegistry, waitFor } from '../helpers.ts';
import { freePort } from '../runner/round_robin_proxy.ts';
import { kubernetesSkipReason, testKubeconfig } from '../sandbox/kubernetes/skip.ts';

const DEPLOY = path.join(PROJECT_ROOT, 'deploy', 'kubernetes');
const KUBECTL = path.join(PROJECT_ROOT, 'docker', 'cluster', 'kubectl.sh');

async function kubectl(args: string[], stdin?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(KUBECTL, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, BENCHGYM_CLUSTER_DIR: path.dirname(testKubeconfig()) },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b) => (stdout += b));
    child.stderr.on('data', (b) => (stderr += b));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}

/** The manifests as `kubectl apply -k` sends them, put into `namespace`. */
async function rendered(namespace: string): Promise<string> {
  const r = await kubectl(['kustomize', DEPLOY]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.replace(/^(\s*)namespace: benchgym$/gm, `$1namespace: ${namespace}`);
}

/** The documents of a rendered YAML stream whose kind is one of `kinds`. */
function only(yaml: string, kinds: string[]): string {
  return yaml
    .split(/^---$/m)
    .filter((doc) => kinds.some((k) => new RegExp(`^kind: ${k}$`, 'm').test(doc)))
    .join('---\n');
}

describe('deploy/kubernetes on the project cluster', async () => {
  const skip = await kubernetesSkipReason();
  if (skip) {
    test(`skipped: ${skip}`, { skip }, () => {});
    return;
  }
  const namespace = `benchgym-deploy-${randomBytes(3).toString('hex')}`;
  let dir: string;
  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-deploy-'));
    const r = await kubectl(['create', 'namespace', namespace]);
    assert.equal(r.code, 0, r.stderr);
  });
  after(async () => {
    await kubectl(['delete', 'namespace', namespace, '--wait=false']);
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  test('every manifest applies with --dry-run=server, each kind as expected', async () => {
    const yaml = await rendered(namespace);
    const r = await kubectl(['apply', '--dry-run=server', '-f', '-'], yaml);
    assert.equal(r.code, 0, r.stderr);
    for (const object of [
      'serviceaccount/benchgym',
      'role.rbac.authorization.k8s.io/benchgym',
      'rolebinding.rbac.authorization.k8s.io/benchgym',
      'deployment.apps/benchgym',
      'service/benchgym',
      'service/benchgym-replicas',
    ]) {
      assert.match(r.stdout, new RegExp(`^${object.replace(/\./g, '\\.')} created \\(server dry run\\)$`, 'm'), r.stdout);
    }
    // Every file of the folder is in the kustomization (none forgotten).
    const files = (await fs.readdir(DEPLOY)).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml').sort();
    const listed = (await fs.readFile(path.join(DEPLOY, 'kustomization.yaml'), 'utf8'))
      .match(/^\s+- (\S+\.yaml)$/gm)!
      .map((l) => l.trim().slice(2))
      .sort();
    assert.deepEqual(listed, files);
  });

  describe('the Role is enough for an episode, and no more', () => {
    let tokenConfig: string;
    let server: ChildProcess | undefined;
    let stderr = '';

    before(async () => {
      const r = await kubectl(['apply', '-f', '-'], only(await rendered(namespace), ['ServiceAccount', 'Role', 'RoleBinding']));
      assert.equal(r.code, 0, r.stderr);
      const token = await kubectl(['create', 'token', 'benchgym', '-n', namespace, '--duration', '1h']);
      assert.equal(token.code, 0, token.stderr);
      // A kubeconfig holding nothing but the service account's token (what the pod's mounted token gives).
      const cluster = loadKubeConfig(testKubeconfig()).getCurrentCluster()!;
      const ca = cluster.caData ?? (cluster.caFile ? (await fs.readFile(cluster.caFile)).toString('base64') : undefined);
      tokenConfig = path.join(dir, 'sa.kubeconfig');
      await fs.writeFile(
        tokenConfig,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Config',
          clusters: [
            {
              name: 'c',
              cluster: { server: cluster.server, ...(ca ? { 'certificate-authority-data': ca } : { 'insecure-skip-tls-verify': true }) },
            },
          ],
          users: [{ name: 'benchgym', user: { token: token.stdout.trim() } }],
          contexts: [{ name: 'sa', context: { cluster: 'c', user: 'benchgym', namespace } }],
          'current-context': 'sa',
        }),
        { mode: 0o600 },
      );
    });
    after(async () => {
      if (server && server.exitCode === null && server.signalCode === null) {
        const exited = new Promise((resolve) => server!.once('exit', resolve));
        server.kill('SIGTERM');
        await exited;
      }
    });

    test('outside the Role is forbidden: secrets, pods of another namespace, other namespaces', async () => {
      const core = loadKubeConfig(tokenConfig).makeApiClient(CoreV1Api);
      const status = (p: Promise<unknown>) =>
        p.then(
          () => 200,
          (e: unknown) => (e instanceof ApiException ? e.code : -1),
        );
      assert.equal(await status(core.listNamespacedSecret({ namespace })), 403);
      assert.equal(await status(core.listNamespacedPod({ namespace: 'default' })), 403);
      assert.equal(await status(core.readNamespace({ name: 'default' })), 403);
      assert.equal(await status(core.listNamespacedService({ namespace })), 403);
      // ... and what the backend uses is allowed: its own namespace and its pods.
      assert.equal(await status(core.readNamespace({ name: namespace })), 200);
      assert.equal(await status(core.listNamespacedPod({ namespace })), 200);
    });

    test(
      'benchgym serve with only the token runs a kubernetes episode: start, exec, submit → reward 1',
      { timeout: 15 * 60_000 },
      async () => {
        const port = await freePort();
        const args = [
          path.join(PROJECT_ROOT, 'bin', 'benchgym.js'),
          'serve',
          '--suite',
          'examples',
          '--port',
          String(port),
          '--token',
          't',
          '--sandbox',
          'kubernetes',
          '--kubeconfig',
          tokenConfig,
          '--namespace',
          namespace,
          '--data-dir',
          path.join(dir, 'data'),
        ];
        server = spawn(process.execPath, args, {
          stdio: ['ignore', 'ignore', 'pipe'],
          env: { ...process.env, BENCHGYM_KUBERNETES_LOAD_IMAGE: path.join(PROJECT_ROOT, 'docker', 'cluster', 'load-image.sh') },
        });
        server.stderr!.on('data', (b) => (stderr += b));
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`serve did not start in 180 s: ${stderr}`)), 180_000);
          server!.stderr!.on('data', () => stderr.includes('MCP (Streamable HTTP)') && (clearTimeout(timer), resolve()));
          server!.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
        });
        const client = new Client({ name: 'benchgym-test', version: '0' });
        await client.connect(
          new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
            requestInit: { headers: { Authorization: 'Bearer t' } },
          }),
        );
        const call = async (name: string, a: Record<string, unknown>) =>
          (await client.callTool({ name, arguments: a }, undefined, {
            timeout: 120_000,
            resetTimeoutOnProgress: true,
            maxTotalTimeout: 14 * 60_000,
            onprogress: () => {},
          })) as CallToolResult;
        try {
          const started = await call('start_episode', { task_id: 'parse-duration' });
          assert.ok(!started.isError, `${JSON.stringify(started.content)}\n${stderr}`);
          const s = started.structuredContent as { episodeId: string; sandbox: { backend: string; isolation: string } };
          assert.equal(s.sandbox.backend, 'kubernetes');
          assert.match(s.sandbox.isolation, new RegExp(`kubernetes pod ${namespace}/`));
          const ran = await call('run_command', { episode_id: s.episodeId, command: 'echo exec-ok; id -u' });
          assert.ok(!ran.isError, JSON.stringify(ran.content));
          assert.match((ran.structuredContent as { stdout: string }).stdout, /exec-ok\n65534\n/);
          // A person's terminal: its ephemeral container is what the Role's pods/ephemeralcontainers is for.
          const ws = new WebSocket(`ws://127.0.0.1:${port}/ws/episodes/${s.episodeId}/pty?token=t`);
          let seen = '';
          ws.on('message', (data, binary) => {
            if (binary) seen += data.toString();
            else if (JSON.parse(data.toString()).type === 'ready') ws.send(Buffer.from('echo term-$((6*7)) $(id -u)\r'), { binary: true });
          });
          const closed = new Promise<string>((resolve) => ws.on('close', (code, reason) => resolve(`${code} ${reason}`)));
          try {
            await waitFor(() => seen, /term-42 65534/, 120_000).catch(async (err) =>
              assert.fail(
                `${(err as Error).message}; closed: ${await Promise.race([closed, new Promise((r) => setTimeout(() => r('open'), 100))])}`,
              ),
            );
          } finally {
            ws.close();
          }
          const gold = (await builtinRegistry().tasks('examples')).find((t) => t.id === 'parse-duration')!.solution!.files!;
          for (const [file, content] of Object.entries(gold))
            assert.ok(!(await call('create_file', { episode_id: s.episodeId, path: file, content, overwrite: true })).isError);
          const verdict = await call('submit', { episode_id: s.episodeId });
          assert.equal((verdict.structuredContent as { reward: number }).reward, 1, JSON.stringify(verdict.structuredContent));
        } finally {
          await client.close();
        }
      },
    );
  });
});
