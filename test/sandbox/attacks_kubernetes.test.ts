import { CONTAINER_BACKENDS } from './container_backends.ts';
import { containerAttacks } from './attacks.cases.ts';

containerAttacks(
  CONTAINER_BACKENDS.find((kit) => kit.name === 'kubernetes')!,
  {
    // An exec through the API server and the kubelet is slower than docker exec's.
    forkBombMs: 30_000,
    floodBytes: 500 * 1024 ** 2,
  },
);
