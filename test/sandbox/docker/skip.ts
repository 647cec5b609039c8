import { dockerAvailable, dockerClient } from '../../../src/sandbox/docker/client.ts';
import { baseImageName } from '../../../src/env/images.ts';

/** Why the Docker backend cannot be tested here, or null when it can (CI starts dockerd and builds the images). */
export async function dockerSkipReason(images: string[] = [baseImageName('python', '3.11')]): Promise<string | null> {
  if (!(await dockerAvailable())) return 'no Docker daemon answers (start dockerd; .ci/run does)';
  const docker = dockerClient();
  for (const image of images) {
    if (!(await docker.getImage(image).inspect().then(() => true, () => false))) return `base image ${image} is missing (benchgym images base; .ci/run builds it)`;
  }
  return null;
}
