import type Docker from 'dockerode';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GymError } from '../../errors.ts';

/** `HOST/PREFIX` + the image's last path part: `benchgym/inst-abc:1` → `HOST/PREFIX/inst-abc:1`. */
export function registryName(image: string, registry: string): string {
  const last = image.split('/').at(-1)!;
  return `${registry.replace(/\/+$/, '')}/${last.includes(':') ? last : `${last}:latest`}`;
}

/** What the engine's push API takes as X-Registry-Auth. */
export interface RegistryAuth {
  username?: string;
  password?: string;
  identitytoken?: string;
  serveraddress?: string;
}

/**
 * The credentials `docker login` stored for the registry's host, as the docker CLI reads them
 * ($DOCKER_CONFIG/config.json, else ~/.docker/config.json, `auths.<host>`): the engine's push API
 * does not look them up itself. None (an empty auth) for a registry that needs none. Credential
 * helpers (`credsStore`) are not run: log in with a plain `auths` entry for benchgym to use it.
 */
export async function registryAuth(
  registry: string,
  configDir = process.env.DOCKER_CONFIG ?? path.join(os.homedir(), '.docker'),
): Promise<RegistryAuth> {
  const host = registry.split('/')[0]!;
  let config: { auths?: Record<string, { auth?: string; identitytoken?: string }> };
  try {
    config = JSON.parse(await fs.readFile(path.join(configDir, 'config.json'), 'utf8'));
  } catch {
    return {};
  }
  const entry = Object.entries(config.auths ?? {}).find(
    ([k]) => k === host || k.replace(/^https?:\/\//, '').replace(/\/.*$/, '') === host,
  )?.[1];
  if (!entry) return {};
  if (entry.identitytoken) return { identitytoken: entry.identitytoken, serveraddress: host };
  if (!entry.auth) return {};
  const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? {} : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1), serveraddress: host };
}

/** Tags a local image for the registry and pushes it, with the credentials of `docker login` for its host. */
export async function pushImage(docker: Docker, image: string, registry: string): Promise<string> {
  const target = registryName(image, registry);
  const colon = target.lastIndexOf(':');
  const repo = target.slice(0, colon);
  const tag = target.slice(colon + 1);
  try {
    await docker.getImage(image).tag({ repo, tag });
    const stream = await docker.getImage(target).push({ authconfig: await registryAuth(registry) });
    await new Promise<void>((resolve, reject) => {
      docker.modem.followProgress(stream, (err: Error | null, output: { error?: string }[]) => {
        const failed = err?.message ?? output?.find((o) => o.error)?.error;
        if (failed) reject(new Error(failed));
        else resolve();
      });
    });
  } catch (err) {
    // The registry's name of the image is of no use once the push failed (only that tag goes).
    await docker
      .getImage(target)
      .remove({ noprune: true })
      .catch(() => {});
    throw new GymError('SANDBOX_UNAVAILABLE', `could not push ${image} to ${target}: ${(err as Error).message}`);
  }
  return target;
}
