import { createHash } from 'node:crypto';

/** A short stable hash of a JSON-able value: the cache key of an env. */
export function contentKey(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);
}
