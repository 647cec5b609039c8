import type { Gym } from '../episode/gym.ts';

/** An episode of the gym serving the viewer, as the live list shows it. */
export interface LiveEpisode {
  id: string;
  suite: string;
  task: string;
  state: string;
  steps: number;
  startedAt: string;
  lastActiveAt: string;
  sandbox: string;
  /** Set once scored. */
  status?: string;
  reward?: number;
}

/** The episodes a viewer under `benchgym serve` shows as they run. */
export interface LiveEpisodes {
  list(): LiveEpisode[];
  /** The episode's gym trajectory, or undefined for an episode the gym does not know (anymore). */
  trajectory(id: string): { file: string; running: boolean } | undefined;
}

export function gymLiveEpisodes(gym: Gym): LiveEpisodes {
  return {
    list: () =>
      gym
        .listEpisodes()
        .map((e) => ({
          id: e.id,
          suite: e.task.suite,
          task: e.task.id,
          state: e.state,
          steps: e.steps,
          startedAt: new Date(e.createdAt).toISOString(),
          lastActiveAt: new Date(e.lastActiveAt).toISOString(),
          sandbox: e.sandbox.backend,
          ...(e.verdict ? { status: e.verdict.status, reward: e.verdict.reward } : {}),
        }))
        .sort((a, b) => (a.startedAt < b.startedAt ? 1 : -1)),
    trajectory: (id) => {
      const e = gym.listEpisodes().find((x) => x.id === id);
      return e ? { file: e.trajectory.file, running: e.state === 'running' } : undefined;
    },
  };
}
