import { ApiException, KubeConfig } from '@kubernetes/client-node';
import { existsSync } from 'node:fs';
import { GymError } from '../../errors.ts';

/**
 * The user's cluster credentials: a kubeconfig file when named, else $KUBECONFIG / ~/.kube/config,
 * else the in-cluster service account (loadFromDefault tries them in that order).
 */
export function loadKubeConfig(kubeconfig?: string): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (kubeconfig) {
      if (!existsSync(kubeconfig)) throw new GymError('INVALID_ARGUMENT', `no kubeconfig at '${kubeconfig}'`);
      kc.loadFromFile(kubeconfig);
    } else kc.loadFromDefault();
  } catch (err) {
    if (err instanceof GymError) throw err;
    throw new GymError('SANDBOX_UNAVAILABLE', `could not load the Kubernetes configuration: ${(err as Error).message}`);
  }
  if (!kc.getCurrentCluster())
    throw new GymError('SANDBOX_UNAVAILABLE', 'no Kubernetes cluster configured: pass --kubeconfig, set $KUBECONFIG, or run in a cluster');
  return kc;
}

/** The HTTP status of a failed API call, or undefined. */
export function apiStatus(err: unknown): number | undefined {
  return err instanceof ApiException ? err.code : undefined;
}

/** A failed API call as a GymError naming what was being done and the server's message. */
export function kubeError(err: unknown, what: string): GymError {
  if (err instanceof GymError) return err;
  let detail = (err as Error)?.message ?? String(err);
  if (err instanceof ApiException) {
    const body = err.body as unknown;
    let message: string | undefined;
    if (typeof body === 'string') {
      try {
        message = (JSON.parse(body) as { message?: string }).message;
      } catch {
        message = body;
      }
    } else message = (body as { message?: string } | undefined)?.message;
    detail = `HTTP ${err.code}${message ? `: ${message}` : ''}`;
  }
  return new GymError('SANDBOX_UNAVAILABLE', `${what}: ${detail}`);
}

/** A value Kubernetes accepts as a label value (63 characters of [A-Za-z0-9._-], alphanumeric at both ends). */
export function labelValue(s: string): string {
  const v = s
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .slice(0, 63)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
  return v || 'x';
}
