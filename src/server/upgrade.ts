import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { refuseReason, type AccessPolicy } from './access.ts';

export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer, params: Record<string, string>) => void;

/**
 * Routes HTTP upgrades (WebSocket) by path, after the same Host / Origin / token checks
 * as plain requests (refuseReason). Each WebSocket endpoint registers a pattern such as `/ws/episodes/:id/pty`.
 */
export class UpgradeRouter {
  private readonly routes: { pattern: RegExp; keys: string[]; handler: UpgradeHandler }[] = [];

  constructor(private readonly policy: AccessPolicy) {}

  add(path: string, handler: UpgradeHandler): void {
    const keys: string[] = [];
    const pattern = new RegExp(`^${path.replace(/:(\w+)/g, (_m, k: string) => (keys.push(k), '([^/]+)'))}$`);
    this.routes.push({ pattern, keys, handler });
  }

  attach(server: Server): void {
    server.on('upgrade', (req, socket, head) => this.handle(req, socket, head));
  }

  private handle(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const refuse = (status: number, message: string) => {
      socket.end(`HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : status === 403 ? 'Forbidden' : 'Not Found'}\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${message}\n`);
    };
    const reason = refuseReason(req, this.policy);
    if (reason) return refuse(reason.status, reason.message);
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    for (const route of this.routes) {
      const m = route.pattern.exec(path);
      if (!m) continue;
      const params = Object.fromEntries(route.keys.map((k, i) => [k, decodeURIComponent(m[i + 1]!)]));
      return route.handler(req, socket, head, params);
    }
    refuse(404, `no WebSocket endpoint at ${path}`);
  }
}
