import type { GymEvent } from '../episode/gym.ts';

const oneLine = (text: string, max = 300) => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 3)}...` : flat;
};

/**
 * The line `benchgym serve` logs for a gym event, or undefined for one it leaves out (an agent's
 * own mistakes, such as an edit that matched nothing: the trajectory has those).
 *
 * @example
 * episodeLogLine(event); // '2026-01-01T00:00:00Z submit  ep-1a2b examples/roman-numerals: passed, reward 1 (5/5 tests) in 3.1 s'
 */
export function episodeLogLine(e: GymEvent): string | undefined {
  const at = e.at.replace(/\.\d+Z$/, 'Z');
  const who = `${e.episodeId ?? '-'} ${e.suite}/${e.taskId}`;
  switch (e.type) {
    case 'episode_started':
      return `${at} start   ${who}${e.forkedFrom ? ` (fork of ${e.forkedFrom})` : ''}`;
    case 'episode_submitted': {
      const v = e.verdict;
      if (v.status === 'error')
        return `${at} submit  ${who}: error (not scored): ${v.error?.code ?? 'INTERNAL'}: ${oneLine(v.error?.message ?? 'scoring failed')}`;
      const passed = v.tests.filter((t) => t.status === 'passed').length;
      return (
        `${at} submit  ${who}: ${v.status}, reward ${v.reward} ` +
        `(${passed}/${v.tests.length} tests) in ${(v.durationMs / 1000).toFixed(1)} s`
      );
    }
    case 'episode_error':
      if (!e.infra) return undefined;
      return `${at} error   ${who}: ${e.tool}: ${e.error.code}: ${oneLine(e.error.message)}`;
    case 'episode_ended':
      return `${at} ${e.state === 'expired' ? 'expired' : 'end    '} ${who} (no submission)`;
  }
}
