import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Episode } from '../episode/episode.ts';
import { GymError } from '../errors.ts';
import { refuseReason, type AccessPolicy } from '../protocol/access.ts';
import { capabilityOfPath, isEpisodesPath, NO_EPISODE_ENDPOINT, type EpisodeEndpoint } from '../protocol/capability.ts';

export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer, params: Record<string, string>) => void;
/** A WebSocket endpoint of one episode, handed the episode its key opened. */
export type EpisodeUpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer, episode: Episode) => void;

const STATUS_TEXT: Readonly<Record<number, string>> = { 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found' };

/**
 * Routes HTTP upgrades (WebSocket) by path, after the same Host / Origin / token checks as
 * plain requests (refuseReason). The operator's endpoints register a pattern such as
 * `/ws/episodes/:id/pty` (the token applies); an episode's own register the endpoint below
 * `/episodes/<id>/<key>/` (`addEpisode('pty', ...)`): there the key opens the door instead,
 * and a wrong or missing one is a 404 that says nothing of whether the episode exists.
 */
export class UpgradeRouter {
  private readonly routes: { pattern: RegExp; keys: string[]; handler: UpgradeHandler }[] = [];
  private readonly episodeRoutes = new Map<string, EpisodeUpgradeHandler>();
  /** The paths registered, as given (`/ws`, `/episodes/:id/:key/pty`): what the landing page lists. */
  readonly paths: string[] = [];

  constructor(
    private readonly policy: AccessPolicy,
    private readonly episodeByKey?: (id: string, key: string) => Episode,
  ) {}

  add(path: string, handler: UpgradeHandler): void {
    const keys: string[] = [];
    const pattern = new RegExp(`^${path.replace(/:(\w+)/g, (_m, k: string) => (keys.push(k), '([^/]+)'))}$`);
    this.routes.push({ pattern, keys, handler });
    this.paths.push(path);
  }

  /** An episode's WebSocket endpoint, `/episodes/<id>/<key>/<endpoint>`. */
  addEpisode(endpoint: EpisodeEndpoint, handler: EpisodeUpgradeHandler): void {
    this.episodeRoutes.set(endpoint, handler);
    this.paths.push(`/episodes/:id/:key/${endpoint}`);
  }

  attach(server: Server): void {
    server.on('upgrade', (req, socket, head) => this.handle(req, socket, head));
  }

  private handle(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const refuse = (status: number, message: string) => {
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${message}\n`,
      );
    };
    let path: string;
    try {
      path = new URL(req.url ?? '/', 'http://x').pathname;
    } catch {
      return refuse(404, 'not a path');
    }
    const episodes = isEpisodesPath(path);
    const reason = refuseReason(req, episodes ? { ...this.policy, token: undefined } : this.policy);
    if (reason) return refuse(reason.status, reason.message);
    if (episodes) {
      const capability = capabilityOfPath(path);
      if (!capability) return refuse(404, `EPISODE_NOT_FOUND: ${NO_EPISODE_ENDPOINT}`);
      let episode: Episode;
      try {
        if (!this.episodeByKey) throw new Error('no episodes here');
        episode = this.episodeByKey(capability.id, capability.key);
      } catch (err) {
        return refuse(404, `EPISODE_NOT_FOUND: ${err instanceof GymError ? err.message : NO_EPISODE_ENDPOINT}`);
      }
      const handler = this.episodeRoutes.get(capability.endpoint);
      if (!handler)
        return refuse(
          404,
          `no WebSocket endpoint at /episodes/<episode_id>/<key>/${capability.endpoint} (an episode's are ${[...this.episodeRoutes.keys()].join(', ') || 'none'})`,
        );
      return handler(req, socket, head, episode);
    }
    for (const route of this.routes) {
      const m = route.pattern.exec(path);
      if (!m) continue;
      let params: Record<string, string>;
      try {
        params = Object.fromEntries(route.keys.map((k, i) => [k, decodeURIComponent(m[i + 1]!)]));
      } catch {
        return refuse(404, `no WebSocket endpoint at ${path} (a segment does not decode)`);
      }
      return route.handler(req, socket, head, params);
    }
    refuse(404, `no WebSocket endpoint at ${path}`);
  }
}
