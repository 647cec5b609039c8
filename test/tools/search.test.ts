import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Gym } from '../../src/episode/gym.ts';
import { expectGymError, makeGym, startExample, testContext } from '../helpers.ts';

type Hit = { path: string; line: number; text: string };
let gym: Gym;
let cleanup: () => Promise<void>;
let id: string;
const search = async (args: Record<string, unknown>) => {
  const r = await gym.callTool('search', args, testContext(), id);
  return { ...r, hits: (r.data as { matches: Hit[] }).matches, total: (r.data as { total: number }).total };
};

before(async () => {
  ({ gym, cleanup } = await makeGym());
  id = await startExample(gym, 'roman-numerals');
  const sb = gym.episode(id).sandbox;
  await sb.writeFile('notes/special.txt', 'price is a.b(c) [x]*\nabc\nPRICE upper\n');
  await sb.writeFile('notes/blob.bin', Buffer.concat([Buffer.from('price is a.b(c)'), Buffer.from([0, 1, 2])]));
  await sb.writeFile('many.txt', Array.from({ length: 30 }, (_, i) => `needle ${i}`).join('\n') + '\n');
});
after(() => cleanup());

test('a literal search prints path:line: text', async () => {
  const r = await search({ query: 'raise NotImplementedError' });
  assert.deepEqual(
    r.hits.map((h) => `${h.path}:${h.line}`),
    ['roman.py:22', 'roman.py:39'],
  );
  assert.match(
    r.text,
    /^2 matching lines for "raise NotImplementedError" in 1 file \(\d+ files searched\):\nroman\.py:22: {5}raise NotImplementedError$/m,
  );
});

test('regular-expression characters are literal unless regex=true', async () => {
  const literal = await search({ query: 'a.b(c) [x]*' });
  assert.deepEqual(
    literal.hits.map((h) => `${h.path}:${h.line}`),
    ['notes/special.txt:1'],
  );
  const regex = await search({ query: '^def (to|from)_roman\\(', regex: true });
  assert.deepEqual(
    regex.hits.map((h) => `${h.path}:${h.line}`),
    ['roman.py:11', 'roman.py:25'],
  );
  const noRegex = await search({ query: '^def (to|from)_roman\\(' });
  assert.equal(noRegex.total, 0);
});

test('case-insensitive search', async () => {
  assert.equal((await search({ query: 'price', path: 'notes' })).total, 1);
  assert.equal((await search({ query: 'price', path: 'notes', case_sensitive: false })).total, 2);
});

test('a glob restricts the files searched; binary files are skipped', async () => {
  const r = await search({ query: 'roman', glob: 'tests/**' });
  assert.ok(r.hits.length > 0);
  assert.ok(
    r.hits.every((h) => h.path.startsWith('tests/')),
    JSON.stringify(r.hits),
  );
  const py = await search({ query: 'import', glob: '*.py' });
  assert.ok(py.hits.every((h) => h.path.endsWith('.py')));
  assert.ok(!(await search({ query: 'price is' })).hits.some((h) => h.path.endsWith('.bin')));
});

test('max_results caps the hits and reports the total', async () => {
  const r = await search({ query: 'needle', max_results: 5 });
  assert.equal(r.hits.length, 5);
  assert.equal(r.total, 30);
  assert.match(r.text, /\[showing the first 5 of 30 matching lines: narrow the search or raise max_results\]/);
  assert.equal((r.data as { truncated: boolean }).truncated, true);
});

test(
  'the counts match what is returned: lines, files with a match, files ' +
    'searched (binaries are not), with and without truncation, literal and regex',
  async () => {
    const sb = gym.episode(id).sandbox;
    await sb.writeFile('counts/a.txt', 'hit one\nmiss\nhit two\n');
    await sb.writeFile('counts/b.txt', 'hit three\n');
    await sb.writeFile('counts/c.txt', 'nothing\n');
    await sb.writeFile('counts/d.bin', Buffer.concat([Buffer.from('hit in a binary\n'), Buffer.from([0, 0, 0])]));
    for (const regex of [false, true]) {
      for (const max_results of [100, 2]) {
        const r = await gym.callTool('search', { query: 'hit', path: 'counts', regex, max_results }, testContext(), id);
        const d = r.data as { matches: Hit[]; total: number; files: number; filesSearched: number; truncated: boolean };
        const what = `regex=${regex} max_results=${max_results}`;
        assert.equal(d.total, 3, what);
        assert.equal(d.files, 2, what);
        assert.equal(d.filesSearched, 3, `${what}: the binary is skipped, not searched`);
        assert.equal(d.matches.length, Math.min(3, max_results), what);
        assert.equal(d.truncated, max_results < 3, what);
        assert.deepEqual(
          d.matches.map((h) => `${h.path}:${h.line}`),
          ['counts/a.txt:1', 'counts/a.txt:3', 'counts/b.txt:1'].slice(0, max_results),
          what,
        );
        assert.match(r.text, /^3 matching lines for "hit" in 2 files \(3 files searched\):/, what);
      }
    }
    // A pattern matching an empty line does not count the phantom line after a final newline.
    const empty = await gym.callTool('search', { query: '^$', regex: true, path: 'counts' }, testContext(), id);
    assert.equal((empty.data as { total: number }).total, 0);
  },
);

test('no matches says so', async () => {
  const r = await search({ query: 'xyzzy-not-here' });
  assert.equal(r.hits.length, 0);
  assert.match(r.text, /^No matches for "xyzzy-not-here"/);
});

test('an invalid regular expression is an invalid argument naming the query', async () => {
  await expectGymError(search({ query: '(unclosed', regex: true }), 'INVALID_ARGUMENT', /'query'/);
  await expectGymError(search({ query: '' }), 'INVALID_ARGUMENT', /'query'/);
});

test('a catastrophic regex (^(a+)+$) neither blocks the event loop nor other episodes', async () => {
  await gym.episode(id).sandbox.writeFile('redos.txt', `${'a'.repeat(30)}b\n`);
  const other = await startExample(gym, 'roman-numerals');
  // The largest gap between ticks of a 10 ms timer while the search runs: what every other episode waits.
  let last = Date.now();
  let worstGap = 0;
  const ticker = setInterval(() => {
    const now = Date.now();
    worstGap = Math.max(worstGap, now - last);
    last = now;
  }, 10);
  const started = Date.now();
  const searching = search({ query: '^(a+)+$', regex: true, glob: 'redos.txt' }).then(
    (r) => ({ ok: true as const, r }),
    (err: unknown) => ({ ok: false as const, err }),
  );
  try {
    await new Promise((r) => setTimeout(r, 200));
    const t0 = Date.now();
    const view = await gym.callTool('view_file', { path: 'roman.py' }, testContext(), other);
    const viewMs = Date.now() - t0;
    assert.match(view.text, /def to_roman/);
    const outcome = await searching;
    const searchMs = Date.now() - started;
    assert.ok(searchMs < 15_000, `search returned after ${searchMs} ms`);
    if (!outcome.ok) assert.match(String((outcome.err as Error).message), /regular expression ran for more than/);
    assert.ok(viewMs < 1000, `view_file of another episode took ${viewMs} ms during the search`);
    // Idle, the gap stays near 10 ms; the bound leaves room for a loaded CI machine (matched on the event loop, it is the whole search).
    assert.ok(worstGap < 500, `the event loop was blocked for ${worstGap} ms`);
  } finally {
    clearInterval(ticker);
    await searching;
  }
  // The episode goes on: the next search works.
  assert.equal((await search({ query: 'aaab', glob: 'redos.txt' })).total, 1);
});
