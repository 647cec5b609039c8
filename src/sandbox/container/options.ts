import { z } from 'zod';
import { wholeNumberFlag, type SandboxBackendContext } from '../backend.ts';

/** The flags both container backends (Docker, Kubernetes) take, checked. */
export const CONTAINER_OPTIONS = {
  'server-id': z.string().min(1, 'a name').default('default'),
  pool: wholeNumberFlag(0, 64),
  'max-containers': wholeNumberFlag(1, 4096, 32),
  'exact-python': z.boolean().default(false),
};

export type ContainerOptionValues = z.output<z.ZodObject<typeof CONTAINER_OPTIONS>>;

/** Ready containers per hot image: `--pool`, else 1 for episodes and none for scoring (each sandbox scores once). */
export function poolSizeOf(o: ContainerOptionValues, ctx: SandboxBackendContext): number {
  return o.pool ?? (ctx.purpose === 'scoring' ? 0 : 1);
}

/** The image builder's options of a backend's context. */
export function imageOptionsOf(o: ContainerOptionValues, ctx: SandboxBackendContext) {
  return {
    exactPython: o['exact-python'],
    ...(ctx.cacheDir ? { cacheDir: ctx.cacheDir } : {}),
    ...(ctx.gradle ? { gradle: ctx.gradle } : {}),
  };
}
