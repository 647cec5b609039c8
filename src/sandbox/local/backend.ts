import { z } from 'zod';
import { defineBuilder } from '../backend.ts';
import { LocalInstanceFactory } from './instance.ts';

/** `--sandbox local`: `--isolation` checked, the sandboxes in the data folder (LocalInstanceFactory). */
export const LOCAL_BUILDER = defineBuilder({
  options: z.object({ isolation: z.enum(['auto', 'bwrap', 'none'], { error: 'auto, bwrap or none' }).default('auto') }),
  create: async ({ isolation }, ctx) =>
    new LocalInstanceFactory({
      dataDir: ctx.dataDir,
      ...(ctx.cacheDir ? { cacheDir: ctx.cacheDir } : {}),
      isolation,
      ...(ctx.gradle ? { gradle: ctx.gradle } : {}),
      privatePaths: ctx.privatePaths,
    }),
});
