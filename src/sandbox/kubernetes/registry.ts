import type Docker from 'dockerode';
import { GymError } from '../../errors.ts';

/** `HOST/PREFIX` + the image's last path part: `benchgym/inst-abc:1` → `HOST/PREFIX/inst-abc:1`. */
export function registryName(image: string, registry: string): string {
  const last = image.split('/').at(-1)!;
  return `${registry.replace(/\/+$/, '')}/${last.includes(':') ? last : `${last}:latest`}`;
}

/** Tags a local image for the registry and pushes it (credentials: the Docker engine's own). */
export async function pushImage(docker: Docker, image: string, registry: string): Promise<string> {
  const target = registryName(image, registry);
  const colon = target.lastIndexOf(':');
  const repo = target.slice(0, colon);
  const tag = target.slice(colon + 1);
  try {
    await docker.getImage(image).tag({ repo, tag });
    const stream = await docker.getImage(target).push({});
    await new Promise<void>((resolve, reject) => {
      docker.modem.followProgress(stream, (err: Error | null, output: { error?: string }[]) => {
        const failed = err?.message ?? output?.find((o) => o.error)?.error;
        if (failed) reject(new Error(failed));
        else resolve();
      });
    });
  } catch (err) {
    throw new GymError('SANDBOX_UNAVAILABLE', `could not push ${image} to ${target}: ${(err as Error).message}`);
  }
  return target;
}
