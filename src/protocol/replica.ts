import { z } from 'zod';
import { GymError, toGymError } from '../errors.ts';

/**
 * One server among several replicas (a Deployment behind a Service): each replica keeps its
 * episodes in memory, so an episode lives on the replica that started it. The replica's own
 * URL (`serve --advertise-url`, in a pod `http://$(POD_IP):7420`) is what `start_episode` and
 * `fork_episode` name as `mcpUrl`, and what a request for an episode it does not hold names.
 */

const AdvertiseUrl = z
  .string()
  .trim()
  .transform((s, ctx) => {
    let url: URL;
    try {
      url = new URL(s);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'not a URL' });
      return z.NEVER;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') ctx.addIssue({ code: 'custom', message: 'not http(s)' });
    if (url.username || url.password || url.search || url.hash)
      ctx.addIssue({ code: 'custom', message: 'only scheme, host, port and an optional path prefix' });
    // The URL parser takes `$(POD_IP)` as a host name: a variable Kubernetes did not expand (no such env in the pod) must not be advertised.
    if (!/^(\[[0-9a-f:.]+\]|[a-z0-9]([a-z0-9.-]*[a-z0-9])?)$/i.test(url.hostname))
      ctx.addIssue({ code: 'custom', message: `'${url.hostname}' is not a host name or IP address (an unexpanded variable?)` });
    return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  });

/** `--advertise-url` checked: an http(s) URL without credentials, query or fragment; no trailing slash. */
export function parseAdvertiseUrl(value: string): string {
  const parsed = AdvertiseUrl.safeParse(value);
  if (!parsed.success) {
    throw new GymError(
      'INVALID_ARGUMENT',
      `invalid --advertise-url '${value}': ${parsed.error.issues.map((i) => i.message).join('; ')} (e.g. http://10.0.0.7:7420; in a pod http://$(POD_IP):7420)`,
    );
  }
  return parsed.data;
}

/** An episode's own MCP endpoint on this replica, as an absolute URL. */
export function episodeMcpUrl(replicaUrl: string, mcpPath: string): string {
  return `${replicaUrl}${mcpPath}`;
}

/**
 * EPISODE_NOT_FOUND said as a replica says it: which replica was asked, and that another one
 * may hold the episode. Any other error is returned as it is.
 */
export function onReplica(err: unknown, replicaUrl: string | undefined): unknown {
  if (!replicaUrl) return err;
  const e = toGymError(err);
  if (e.code !== 'EPISODE_NOT_FOUND') return err;
  return new GymError(
    'EPISODE_NOT_FOUND',
    `${e.message} on replica ${replicaUrl}: each replica serves only the episodes it started (use the mcpUrl start_episode returned; an episode of a replica that stopped is lost)`,
    { ...e.details, replica: replicaUrl },
  );
}
