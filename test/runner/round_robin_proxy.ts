import net from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP load balancer standing in for a Kubernetes Service: each new connection goes to the
 * next backend in turn; a backend that refuses the connection is skipped for the next one (as
 * a Service drops a pod whose readiness probe fails). `connections` counts those each backend took.
 */
export async function roundRobinProxy(
  backends: number[],
): Promise<{ url: string; connections: Map<number, number>; close: () => Promise<void> }> {
  let next = 0;
  const connections = new Map<number, number>(backends.map((p) => [p, 0]));
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.pause();
    const first = next++ % backends.length;
    const tryBackend = (i: number) => {
      if (i === backends.length) return client.destroy();
      const port = backends[(first + i) % backends.length]!;
      const upstream = net.connect(port, '127.0.0.1');
      sockets.add(upstream);
      upstream.once('error', () => (upstream.readyState === 'opening' ? tryBackend(i + 1) : client.destroy()));
      upstream.once('connect', () => {
        connections.set(port, connections.get(port)! + 1);
        upstream.on('error', () => client.destroy());
        upstream.on('close', () => {
          sockets.delete(upstream);
          client.destroy();
        });
        client.on('close', () => upstream.destroy());
        client.on('error', () => upstream.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
    };
    tryBackend(0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A port free now on 127.0.0.1 (a server told its own URL before it listens needs one). */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}
