import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { LineIndex } from '../../src/viewer/line_index.ts';
import { transcriptPage } from '../../src/viewer/transcript.ts';
import { parseResultQuery } from '../../src/viewer/query.ts';
import { expectGymError, tempDir } from '../helpers.ts';
import { writeTrajectories } from './fixture.ts';

describe('transcripts from trajectory files', () => {
  let dir: string;
  before(async () => {
    dir = await tempDir('benchgym-view-t-');
  });
  after(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  test("without the gym's trajectory (another machine), the agent's record of each tool call is shown", async () => {
    const agent = path.join(dir, 'a.jsonl');
    const gym = path.join(dir, 'gone', 'g.jsonl');
    await fs.mkdir(path.dirname(gym), { recursive: true });
    await writeTrajectories(agent, gym, { task: 't', sample: 0, episodeId: 'ep-1', status: 'failed', steps: 3, start: 0 });
    await fs.rm(path.dirname(gym), { recursive: true });
    const page = await transcriptPage(new LineIndex(), { agent }, 0, 100);
    const tools = page.items.filter((i) => i.kind === 'tool');
    assert.equal(tools.length, 3);
    assert.equal(tools[0]!.kind === 'tool' && tools[0]!.step, undefined, 'no step numbers: those are the gym’s');
    assert.equal(page.verdict, null);
    assert.equal(page.done, true);
  });

  test('a gym trajectory alone (a live episode): done once the verdict and its submit step are written, or at the end', async () => {
    const file = path.join(dir, 'live.jsonl');
    const w = (r: object) => fs.appendFile(file, JSON.stringify(r) + '\n');
    await w({ type: 'episode', episodeId: 'ep-2', startedAt: '2026-01-01T00:00:00.000Z' });
    await w({
      type: 'step',
      step: 1,
      tool: 'view_file',
      args: { path: 'a.py' },
      ok: true,
      observation: 'x',
      startedAt: '2026-01-01T00:00:01.000Z',
      durationMs: 1,
    });
    const index = new LineIndex();
    const one = await transcriptPage(index, { gym: new Map([[1, file]]) }, 0, 10);
    assert.deepEqual([one.total, one.done], [2, false]);
    await w({ type: 'verdict', verdict: { status: 'passed', reward: 1, tests: [{ name: 'a', status: 'passed' }], notes: [] }, diff: '' });
    assert.equal((await transcriptPage(index, { gym: new Map([[1, file]]) }, 0, 10)).done, false, 'the submit step is still to come');
    await w({
      type: 'step',
      step: 2,
      tool: 'submit',
      args: {},
      ok: true,
      observation: 'Verdict: PASSED',
      startedAt: '2026-01-01T00:00:02.000Z',
      durationMs: 1,
    });
    const done = await transcriptPage(index, { gym: new Map([[1, file]]) }, 1, 10);
    assert.deepEqual([done.total, done.done, done.verdict?.status], [3, true, 'passed']);
    assert.deepEqual(
      done.items.map((i) => (i.kind === 'tool' ? i.tool : i.kind)),
      ['view_file', 'submit'],
    );
  });

  test('the line index reads a line only once it is whole, and starts over on a replaced file', async () => {
    const file = path.join(dir, 'grow.jsonl');
    const index = new LineIndex();
    await fs.writeFile(file, '{"type":"a"}\n{"type":"b","at":"2026');
    assert.deepEqual(
      (await index.lines(file)).map((l) => l.type),
      ['a'],
    );
    await fs.appendFile(file, '-01-01T00:00:00Z"}\nnot json\n');
    const lines = await index.lines(file);
    assert.deepEqual(
      lines.map((l) => l.type),
      ['a', 'b', 'unreadable'],
    );
    assert.equal(lines[1]!.time, '2026-01-01T00:00:00Z');
    assert.deepEqual(await index.read(file, [lines[1]!]), [{ type: 'b', at: '2026-01-01T00:00:00Z' }]);
    await fs.writeFile(file, '{"type":"c"}\n');
    assert.deepEqual(
      (await index.lines(file)).map((l) => l.type),
      ['c'],
    );
    assert.deepEqual(await index.lines(path.join(dir, 'missing.jsonl')), []);
  });

  test('a path from a record is read only if it is a gym trajectory (DATA/trajectories/<episode>.jsonl)', async () => {
    const { isGymTrajectoryPath } = await import('../../src/viewer/transcript.ts');
    assert.equal(isGymTrajectoryPath('/data/trajectories/ep-1a2b.jsonl'), true);
    assert.equal(isGymTrajectoryPath('/srv/someone/.ssh/id_rsa'), false);
    assert.equal(isGymTrajectoryPath('/data/other/ep-1.jsonl'), false);
    assert.equal(isGymTrajectoryPath('/data/trajectories/../secrets/trajectories/x.jsonl'), false);
    assert.equal(isGymTrajectoryPath('trajectories/ep-1.jsonl'), false, 'relative');
    const agent = path.join(dir, 'evil.jsonl');
    const secret = path.join(dir, 'secret.jsonl');
    await fs.writeFile(secret, JSON.stringify({ type: 'step', tool: 'secret', startedAt: '2026-01-01T00:00:00Z' }) + '\n');
    await fs.writeFile(
      agent,
      JSON.stringify({ type: 'attempt', attempt: 1, gymTrajectory: secret, startedAt: '2026-01-01T00:00:00Z' }) + '\n',
    );
    const page = await transcriptPage(new LineIndex(), { agent }, 0, 10);
    assert.deepEqual(
      page.items.map((i) => i.kind),
      ['attempt'],
    );
  });

  test('table queries: metadata filters from m.<key>, defaults, and refusals that name the parameter', async () => {
    const q = parseResultQuery({ 'm.library': 'numpy', status: 'failed', offset: '100', sort: 'steps', dir: 'desc' });
    assert.deepEqual(q, { offset: 100, limit: 100, sort: 'steps', dir: 'desc', status: 'failed', q: '', meta: { library: 'numpy' } });
    await expectGymError(
      Promise.resolve().then(() => parseResultQuery({ status: 'meh' })),
      'INVALID_ARGUMENT',
      /status/,
    );
    await expectGymError(
      Promise.resolve().then(() => parseResultQuery({ offset: '-1' })),
      'INVALID_ARGUMENT',
      /offset/,
    );
  });
});
