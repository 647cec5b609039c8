import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Gym } from '../../src/episode/gym.ts';
import { docCandidates } from '../../src/tools/view_docs.ts';
import { expectGymError, makeGym, startExample, testContext } from '../helpers.ts';

let gym: Gym;
let cleanup: () => Promise<void>;
let id: string;
const call = (name: string, args: Record<string, unknown> = {}, episode = id) => gym.callTool(name, args, testContext(), episode);

before(async () => {
  ({ gym, cleanup } = await makeGym());
  id = await startExample(gym, 'semver-pinned');
});
after(() => cleanup());

test('renders the docs of the pinned, installed version (semver 2.13.0, not 3.x)', async () => {
  const r = await call('view_docs', { symbol: 'semver.VersionInfo.bump_major' });
  assert.equal(r.data.found, true, r.text);
  assert.match(r.text, /^Documentation of semver\.VersionInfo\.bump_major \(semver 2\.13\.0, \/.+\/site-packages\/semver\.py\)\n/);
  assert.match(r.text, /bump_major\(self\)/);
  assert.equal(r.data.resolved, 'semver.VersionInfo.bump_major');
  const gone = await call('view_docs', { symbol: 'semver.Version.is_compatible' });
  assert.equal(gone.data.found, false, 'semver 3 API is not in 2.13.0');
  assert.match(gone.text, /^No documentation for semver\.Version\.is_compatible\./);
});

test('a workspace module cannot stand in for the library', async () => {
  await call('create_file', { path: 'semver.py', content: '"""fake semver"""\nVersionInfo = None\n' });
  const r = await call('view_docs', { symbol: 'semver' });
  assert.match(r.text, /site-packages\/semver\.py/);
  assert.doesNotMatch(r.text, /fake semver/);
});

test('long pages are cut at max_chars; bad symbols are refused and Java episodes have no view_docs', async () => {
  const r = await call('view_docs', { symbol: 'semver', max_chars: 600 });
  assert.equal(r.data.truncated, true);
  assert.match(r.text, /\[cut at 600 of \d+ characters; ask for more with max_chars\]$/);
  await expectGymError(call('view_docs', { symbol: 'os; rm -rf /' }), 'INVALID_ARGUMENT', /'symbol'/);
  const java = await startExample(gym, 'java-bracket-matcher');
  // A Java episode is not offered view_docs at all (the tool applies to Python tasks only).
  await expectGymError(
    call('view_docs', { symbol: 'java.lang.String' }, java),
    'TOOL_NOT_AVAILABLE',
    /'view_docs' is not a tool of suite 'examples' episodes/,
  );
});

test("candidates: as given, then in the task's library, then a search of its submodules", () => {
  assert.deepEqual(docCandidates('numpy.round_'), ['numpy.round_']);
  assert.deepEqual(docCandidates('log_ndtr', 'torch'), ['log_ndtr', 'torch.log_ndtr', 'search:torch:log_ndtr']);
  assert.deepEqual(docCandidates('special.log_ndtr', 'torch'), [
    'special.log_ndtr',
    'torch.special.log_ndtr',
    'search:torch:special.log_ndtr',
  ]);
  assert.deepEqual(docCandidates('torch.special', 'torch'), ['torch.special']);
});
