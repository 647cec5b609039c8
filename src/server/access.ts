import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export interface AccessPolicy {
  /** Bearer token required on every request and upgrade, when set. */
  token?: string;
  /** Host names allowed in Origin headers besides loopback ones. */
  allowedOrigins?: string[];
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || host.startsWith('127.');
}

/**
 * The one check every HTTP request and WebSocket upgrade passes: a browser Origin must be
 * loopback (or allowed), and the bearer token must match when one is set. Browsers cannot
 * set Authorization on WebSocket upgrades, so a `token` query parameter is accepted too.
 * Returns a reason to refuse, or null.
 */
export function refuseReason(req: IncomingMessage, policy: AccessPolicy): { status: number; message: string } | null {
  const origin = req.headers.origin;
  if (origin) {
    let originHost: string;
    try {
      originHost = new URL(origin).hostname;
    } catch {
      return { status: 403, message: `invalid Origin header: ${origin}` };
    }
    if (!isLoopback(originHost) && !(policy.allowedOrigins ?? []).includes(originHost)) return { status: 403, message: `Origin ${origin} is not allowed` };
  }
  if (policy.token) {
    const header = String(req.headers.authorization ?? '');
    const query = new URL(req.url ?? '/', 'http://x').searchParams.get('token');
    const given = Buffer.from(header || (query ? `Bearer ${query}` : ''));
    const want = Buffer.from(`Bearer ${policy.token}`);
    if (given.length !== want.length || !timingSafeEqual(given, want)) return { status: 401, message: 'missing or wrong bearer token' };
  }
  return null;
}
