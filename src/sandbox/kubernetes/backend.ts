import path from 'node:path';
import { z } from 'zod';
import { defineBuilder } from '../backend.ts';
import { CONTAINER_OPTIONS, imageOptionsOf, poolSizeOf } from '../container/options.ts';
import { KubernetesSandboxFactory, loadImageBy } from './factory.ts';

/** `--sandbox kubernetes`: its flags checked, one hardened pod per episode. */
export const KUBERNETES_BUILDER = defineBuilder({
  options: z.object({
    ...CONTAINER_OPTIONS,
    kubeconfig: z.string().optional(),
    namespace: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, "a DNS label: lower-case letters, digits, '-'")
      .default('benchgym'),
    registry: z
      .string()
      .regex(/^[A-Za-z0-9.-]+(:\d+)?(\/[a-z0-9._/-]+)?$/, 'HOST[:PORT]/PREFIX')
      .optional(),
    'runtime-class': z.string().optional(),
  }),
  create: async (o, ctx) => {
    const loader = process.env.BENCHGYM_KUBERNETES_LOAD_IMAGE;
    return new KubernetesSandboxFactory({
      ...(o.kubeconfig ? { kubeconfig: path.resolve(o.kubeconfig) } : {}),
      namespace: o.namespace,
      ...(o.registry ? { registry: o.registry } : {}),
      ...(o['runtime-class'] ? { runtimeClassName: o['runtime-class'] } : {}),
      // Without a registry: a program that puts each env image on the nodes (the project cluster's load-image.sh).
      ...(!o.registry && loader ? { loadImage: loadImageBy(loader) } : {}),
      serverId: o['server-id'],
      poolSize: poolSizeOf(o, ctx),
      maxPods: o['max-containers'],
      images: imageOptionsOf(o, ctx),
    });
  },
});
