import { describe, test } from 'node:test';
import { dockerAvailable, dockerClient } from '../../../src/sandbox/docker/client.ts';
import { baseImageName } from '../../../src/env/images.ts';

let swept = false;

/** Removes what test servers (`test-*` server ids) left behind when a test process crashed, an hour on. */
async function sweepOldTestLeftovers(): Promise<void> {
  if (swept) return;
  swept = true;
  const docker = dockerClient();
  const filters = JSON.stringify({ label: ['benchgym.server'] });
  const cutoff = Date.now() / 1000 - 3600;
  for (const c of await docker.listContainers({ all: true, filters })) {
    if (c.Labels['benchgym.server']?.startsWith('test-') && c.Created < cutoff)
      await docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => {});
  }
  const { Volumes } = await docker.listVolumes({ filters });
  for (const v of Volumes ?? []) {
    const created = Date.parse((v as { CreatedAt?: string }).CreatedAt ?? '') / 1000;
    if (v.Labels?.['benchgym.server']?.startsWith('test-') && created < cutoff)
      await docker
        .getVolume(v.Name)
        .remove()
        .catch(() => {});
  }
}

/** Why the Docker backend cannot be tested here, or null when it can (CI starts dockerd and builds the images). */
export async function dockerSkipReason(images: string[] = [baseImageName('python', '3.11')]): Promise<string | null> {
  if (!(await dockerAvailable())) return 'no Docker daemon answers (start dockerd; .ci/run does)';
  const docker = dockerClient();
  for (const image of images) {
    if (
      !(await docker
        .getImage(image)
        .inspect()
        .then(
          () => true,
          () => false,
        ))
    )
      return `base image ${image} is missing (benchgym images base; .ci/run builds it)`;
  }
  await sweepOldTestLeftovers();
  return null;
}

/** A describe block for the Docker backend: one skipped test naming the reason when Docker cannot be tested here. */
export function describeDocker(name: string, body: () => void | Promise<void>): void {
  describeUnless(dockerSkipReason, name, body);
}

/** A describe block that is one skipped test, naming the reason, when `skipReason` gives one. */
export function describeUnless(skipReason: () => Promise<string | null>, name: string, body: () => void | Promise<void>): void {
  describe(name, async () => {
    const skip = await skipReason();
    if (skip) {
      test(`skipped: ${skip}`, { skip }, () => {});
      return;
    }
    await body();
  });
}
