import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { KubernetesSandboxFactory } from '../../../src/sandbox/kubernetes/index.ts';

/**
 * A scripted API server (no cluster needed): init's calls answer at once; the pod watch sends
 * its headers only after `watchDelayMs`, as kube-apiserver does when no event is waiting.
 */
async function scriptedApi(watchDelayMs: number) {
  const watches: { closedByClient: Promise<void> }[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.searchParams.get('watch') === 'true') {
      const closedByClient = new Promise<void>((resolve) => res.on('close', () => resolve()));
      watches.push({ closedByClient });
      setTimeout(() => {
        if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).flushHeaders();
      }, watchDelayMs);
      return;
    }
    if (req.method === 'GET' && url.pathname.endsWith('/pods')) return json(200, { kind: 'PodList', items: [] });
    if (req.method === 'GET') return json(200, { kind: 'Namespace', metadata: { name: 'benchgym-test' } });
    req.resume().on('end', () => json(409, { kind: 'Status', code: 409, reason: 'AlreadyExists' }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return {
    kc,
    watches,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

test('a factory closed while its pod watch is still connecting closes the watch when it connects', async () => {
  // A registry test closed its factory 120 ms after init; the watch connected afterwards and,
  // unaborted, stayed open (the server ends a watch after 30 to 60 minutes).
  const api = await scriptedApi(300);
  try {
    const factory = new KubernetesSandboxFactory({ kc: api.kc, namespace: 'benchgym-test', serverId: 'close-test' });
    await factory.init();
    await factory.close();
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(api.watches.length, 1, 'init starts one pod watch');
    const closed = await Promise.race([
      api.watches[0]!.closedByClient.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), 5000)),
    ]);
    assert.equal(closed, true, 'the watch was still open 5 s after close()');
  } finally {
    await api.close().catch(() => {});
  }
});
