import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import { GymError } from '../errors.ts';
import { isLoopbackHost, loopbackHostNames, refuseReason, type AccessPolicy } from '../protocol/access.ts';
import { DEFAULT_VIEW_PORT } from '../protocol/viewer_links.ts';
import { viewerErrorHandler, viewerRouter, type ViewerSources } from './router.ts';

export interface ViewerServerOptions {
  host?: string;
  port?: number;
  /** Required to bind beyond loopback, as for `benchgym serve`. */
  token?: string;
  allowedHosts?: string[];
  allowedOrigins?: string[];
}

export interface RunningViewer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * `benchgym view`'s server: the viewer at `/`, behind the same access rules as `benchgym
 * serve` (loopback by default; a token to bind elsewhere; Host and Origin checked).
 */
export async function startViewerServer(sources: ViewerSources, opts: ViewerServerOptions = {}): Promise<RunningViewer> {
  const host = opts.host ?? '127.0.0.1';
  const port = opts.port ?? DEFAULT_VIEW_PORT;
  const loopback = isLoopbackHost(host);
  if (!loopback && !opts.token)
    throw new GymError(
      'UNAUTHORIZED',
      `binding to ${host} exposes the viewer beyond this machine: give a token (--token or BENCHGYM_TOKEN)`,
    );
  const policy: AccessPolicy = {
    token: opts.token,
    allowedOrigins: opts.allowedOrigins,
    allowedHosts: loopback
      ? loopbackHostNames(host, opts.allowedHosts)
      : opts.allowedHosts?.length
        ? opts.allowedHosts.map((h) => h.toLowerCase())
        : undefined,
  };
  const app = express();
  app.disable('x-powered-by');
  app.use((req: Request, res: Response, next: NextFunction) => {
    const reason = refuseReason(req, policy);
    if (reason) return void res.status(reason.status).type('text/plain').send(`${reason.message}\n`);
    next();
  });
  app.use('/', viewerRouter(sources));
  app.use((_req: Request, res: Response) => void res.status(404).type('text/plain').send('not found\n'));
  app.use(viewerErrorHandler);
  const http = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(port, host, (err?: Error) => {
      if (!err) return resolve(s);
      const code = (err as NodeJS.ErrnoException).code;
      reject(
        code === 'EADDRINUSE'
          ? new GymError(
              'INVALID_ARGUMENT',
              `port ${port} on ${host} is already in use: stop what listens there or choose another with --port`,
            )
          : new GymError('INTERNAL', `could not listen on ${host}:${port}: ${err.message}`),
      );
    });
  });
  const address = http.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}/`,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}
