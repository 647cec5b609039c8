import { CONTAINER_BACKENDS } from './container_backends.ts';
import { containerAttacks } from './attacks.cases.ts';

containerAttacks(
  CONTAINER_BACKENDS.find((kit) => kit.name === 'docker')!,
  {
    forkBombMs: 20_000,
    // 2 GiB through the exec stream (5 GiB took over the 120 s limit on a loaded 2-core machine).
    floodBytes: 2 * 1024 ** 3,
  },
);
