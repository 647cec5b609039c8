import Docker from 'dockerode';
import { GymError } from '../../errors.ts';

/** A dockerode client; DOCKER_HOST / the default socket as the Docker CLI would use. */
export function dockerClient(): Docker {
  return new Docker();
}

/** Pings the daemon; a clear SANDBOX_UNAVAILABLE when it cannot be reached. */
export async function assertDockerReachable(docker: Docker): Promise<void> {
  try {
    await withTimeout(docker.ping(), 5000, 'ping');
  } catch (err) {
    throw new GymError(
      'SANDBOX_UNAVAILABLE',
      `the Docker daemon is not reachable (${(err as Error).message}); start it, or use --sandbox local`,
    );
  }
}

export async function dockerAvailable(docker: Docker = dockerClient()): Promise<boolean> {
  return assertDockerReachable(docker).then(
    () => true,
    () => false,
  );
}

export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
    }),
  ]);
}

/** Maps a dockerode error to a GymError: the daemon's failures are infrastructure failures. */
export function dockerError(err: unknown, what: string): GymError {
  if (err instanceof GymError) return err;
  const e = err as { statusCode?: number; json?: { message?: string }; message?: string };
  const message = e.json?.message ?? e.message ?? String(err);
  return new GymError('SANDBOX_UNAVAILABLE', `${what}: ${message}`, e.statusCode ? { statusCode: e.statusCode } : undefined);
}
