import { CONTAINER_BACKENDS } from './container_backends.ts';
import { containerConformance } from './conformance_containers.cases.ts';

containerConformance(
  CONTAINER_BACKENDS.find((kit) => kit.name === 'kubernetes')!,
  'cli',
);
