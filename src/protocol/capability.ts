import { randomBytes } from 'node:crypto';
import { digestsEqual, type Episode } from '../episode/episode.ts';
import type { Gym } from '../episode/gym.ts';
import { GymError } from '../errors.ts';

/**
 * An episode's URL is its capability: its own endpoints live below `/episodes/<id>/<key>/`,
 * where `<key>` is an unguessable secret only the caller of start_episode, reset or
 * fork_episode receives. The key, not the server's token, opens them; the operator's endpoints
 * (`/mcp`, `/ws`, `/view/`, `/health`, the operator's terminals) never accept a key.
 */

/** The endpoints an episode has below `/episodes/<id>/<key>/`. */
export type EpisodeEndpoint = 'mcp' | 'mcp/ws' | 'terminal' | 'pty';

/** An episode's own endpoint, e.g. `/episodes/ep-…/<key>/mcp`: whoever holds it works on that episode and nothing else. */
export function episodePath(episode: Pick<Episode, 'id' | 'key'>, endpoint: EpisodeEndpoint): string {
  return `/episodes/${encodeURIComponent(episode.id)}/${episode.key}/${endpoint}`;
}

/** Said of every refused capability: the same words whether the episode is unknown or the key wrong or missing. */
export const NO_EPISODE_ENDPOINT =
  "no episode endpoint at this address: an episode's endpoints are /episodes/<episode_id>/<key>/..., " +
  'the mcpPath (or mcpUrl) that start_episode or fork_episode returned; an episode is also removed an hour after it ends';

const CAPABILITY_PATH = /^\/episodes\/([^/]+)\/([^/]+)\/(.+)$/;

/**
 * Whether a path lies below `/episodes/` (any case, as the router matches it): the episodes'
 * part of the server, where only a key opens anything and the operator's token is not asked for.
 */
export function isEpisodesPath(pathname: string): boolean {
  return /^\/episodes(\/|$)/i.test(pathname);
}

/**
 * The episode id, key and endpoint a path names when it lies below `/episodes/<id>/<key>/`,
 * else undefined (the path is the operator's). Segments are decoded; one that does not decode
 * yields empty strings, which name no episode.
 */
export function capabilityOfPath(pathname: string): { id: string; key: string; endpoint: string } | undefined {
  const m = CAPABILITY_PATH.exec(pathname);
  if (!m) return undefined;
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return '';
    }
  };
  return { id: decode(m[1]!), key: decode(m[2]!), endpoint: m[3]! };
}

// Compared against when the id names no episode, so that a miss costs what a wrong key does.
const NO_KEY = randomBytes(24).toString('base64url');

/**
 * The episode `id` and `key` name together, the key compared in constant time; otherwise
 * EPISODE_NOT_FOUND with NO_EPISODE_ENDPOINT, which says nothing of whether `id` exists.
 */
export function episodeByKey(gym: Gym, id: string, key: string): Episode {
  const episode = gym.findEpisode(id);
  const matches = episode ? episode.keyMatches(key) : digestsEqual(key, NO_KEY) && false;
  if (!episode || !matches) throw new GymError('EPISODE_NOT_FOUND', NO_EPISODE_ENDPOINT);
  return episode;
}

/** `text` with every episode key in an endpoint path replaced, for logs, trajectories and error messages. */
export function withoutEpisodeKeys(text: string): string {
  return text.replace(/(\/episodes\/[^/\s]+\/)[^/\s]+(?=\/)/g, '$1<key>');
}
