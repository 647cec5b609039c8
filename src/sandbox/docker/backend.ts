import { z } from 'zod';
import { defineBuilder } from '../backend.ts';
import { CONTAINER_OPTIONS, imageOptionsOf, poolSizeOf } from '../container/options.ts';
import { DockerSandboxFactory } from './factory.ts';

/** `--sandbox docker`: its flags checked, one hardened container per episode. */
export const DOCKER_BUILDER = defineBuilder({
  options: z.object(CONTAINER_OPTIONS),
  create: async (o, ctx) =>
    new DockerSandboxFactory({
      serverId: o['server-id'],
      poolSize: poolSizeOf(o, ctx),
      maxContainers: o['max-containers'],
      images: imageOptionsOf(o, ctx),
    }),
});
