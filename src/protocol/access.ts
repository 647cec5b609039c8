import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIPv4, isIPv6 } from 'node:net';

export interface AccessPolicy {
  /** Bearer token required on every request and upgrade, when set. */
  token?: string;
  /** Origins allowed besides loopback ones: host names (`app.example`) or whole origins (`https://app.example:8443`). */
  allowedOrigins?: string[];
  /** Host header names accepted (port ignored); unset: no Host check (a non-loopback bind, where the token protects). */
  allowedHosts?: string[];
}

/**
 * Whether a host name (as `URL.hostname` gives it, IPv6 in brackets, or a bind address)
 * names this machine: `localhost`, an IPv4 literal in 127.0.0.0/8, or `::1`. Parsed as an
 * IP literal, never matched by prefix (`127.evil.example` is a DNS name anyone can own).
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  if (h === 'localhost') return true;
  if (isIPv4(h)) return Number(h.split('.')[0]) === 127;
  const bare = h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
  if (!isIPv6(bare)) return false;
  try {
    // The URL parser normalises IPv6 (0:0:0:0:0:0:0:1 is [::1]).
    return new URL(`http://[${bare}]/`).hostname === '[::1]';
  } catch {
    return false;
  }
}

/** The host name of a Host header, as the MCP SDK's own Host check parses it (port dropped, IPv6 in brackets), or null. */
export function hostOfHeader(header: string | undefined): string | null {
  if (!header) return null;
  try {
    const url = new URL(`http://${header}`);
    // A Host header is host[:port] only: anything else (user info, a path) is not a host we serve.
    if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) return null;
    return url.hostname;
  } catch {
    return null;
  }
}

/** Host header names a server bound to `bindHost` accepts: its own address, localhost, 127.0.0.1, [::1] and the configured ones. */
export function loopbackHostNames(bindHost: string, extra: string[] = []): string[] {
  const own = isIPv6(bindHost) ? `[${bindHost}]` : bindHost.toLowerCase();
  return [...new Set([own, 'localhost', '127.0.0.1', '[::1]', ...extra.map((h) => h.toLowerCase())])];
}

function originAllowed(origin: string, allowed: string[]): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  // An opaque origin ("null", file:) has no host; only http(s) pages are ours.
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (isLoopbackHost(url.hostname)) return true;
  return allowed.some((entry) => {
    if (entry.includes('://')) {
      try {
        return new URL(entry).origin === url.origin;
      } catch {
        return false;
      }
    }
    return entry.toLowerCase() === url.hostname;
  });
}

/**
 * The one check every HTTP request and WebSocket upgrade passes: the Host header must be
 * one the server answers to (when it has such a list), a browser Origin must be loopback
 * (or allowed), and the bearer token must match when one is set. Browsers cannot set
 * Authorization on WebSocket upgrades, so a `token` query parameter is accepted too, and
 * Basic credentials whose password is the token (what a URL's user info becomes).
 * Returns a reason to refuse, or null.
 */
export function refuseReason(req: IncomingMessage, policy: AccessPolicy): { status: number; message: string } | null {
  if (policy.allowedHosts) {
    const host = hostOfHeader(req.headers.host);
    if (host === null) return { status: 403, message: `Invalid Host header: ${req.headers.host ?? '(none)'}` };
    if (!policy.allowedHosts.includes(host)) return { status: 403, message: `Invalid Host: ${host}` };
  }
  const origin = req.headers.origin;
  if (origin !== undefined) {
    if (!originAllowed(String(origin), policy.allowedOrigins ?? []))
      return { status: 403, message: `Origin ${String(origin)} is not allowed` };
  }
  if (policy.token) {
    const header = String(req.headers.authorization ?? '');
    const query = new URL(req.url ?? '/', 'http://x').searchParams.get('token');
    // Any other scheme gives no token at all.
    const bearer = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : header ? undefined : (query ?? '');
    const given = basicPassword(header) ?? bearer;
    if (given === undefined || !sameSecret(given, policy.token)) return { status: 401, message: 'missing or wrong bearer token' };
  }
  return null;
}

/**
 * The password of `Authorization: Basic base64(user:password)`, else undefined. Clients that
 * cannot set headers but take a URL (OpenEnv's, which pass `http://user:TOKEN@host/...` on as
 * Basic credentials) give the token as the password; the user name is not looked at.
 */
function basicPassword(header: string): string | undefined {
  const m = /^Basic ([A-Za-z0-9+/=]+)$/.exec(header);
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}

/** Compares two secrets in time that depends on neither (their SHA-256 digests have one length). */
function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}
