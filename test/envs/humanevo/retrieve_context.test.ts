import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jaccard, javaSnippets, pythonSnippets, rankSnippets, tokenSet } from '../../../envs/humanevo/tools/retrieve_context.ts';

test('tokenSet splits identifiers at underscores and camel case, lower-cased', () => {
  assert.deepEqual([...tokenSet('def slugifyTitle(title_text): return URLSlug 42')].sort(), [
    '42',
    'def',
    'return',
    'slugify',
    'text',
    'title',
    'urlslug',
  ]);
  assert.ok(tokenSet('slugifyTitle').has('slugify') && tokenSet('slugifyTitle').has('title'));
  assert.ok(tokenSet('title_text').has('title') && tokenSet('title_text').has('text'));
});

test('jaccard is |A∩B| / |A∪B|', () => {
  assert.equal(jaccard(new Set(['a', 'b', 'c']), new Set(['b', 'c', 'd'])), 2 / 4);
  assert.equal(jaccard(new Set(['a']), new Set(['a'])), 1);
  assert.equal(jaccard(new Set(['a']), new Set(['b'])), 0);
  assert.equal(jaccard(new Set(), new Set()), 0);
});

const PY = `import re

X = 1


@decorator
def top(a):
    """Top."""
    def inner():
        return a
    return inner


class Bag:
    """A bag."""

    def add(self, w):
        self.w = w

    @property
    def size(self):
        return (
            1
        )


async def fetch():
    return 2
`;

test(
  'Python snippets: functions with decorators, methods qualified by ' + 'class, nested functions inside their parent, the rest in windows',
  () => {
    const s = pythonSnippets('m.py', PY);
    const fns = s.filter((x) => x.symbol).map((x) => [x.symbol, x.startLine, x.endLine]);
    assert.deepEqual(fns, [
      ['top', 6, 11],
      ['Bag.add', 17, 18],
      ['Bag.size', 20, 24],
      ['fetch', 27, 28],
    ]);
    const windows = s.filter((x) => !x.symbol);
    assert.ok(windows.some((w) => w.code.includes('import re')));
    assert.ok(windows.some((w) => w.code.includes('class Bag')));
    assert.ok(!windows.some((w) => w.code.includes('def ')));
  },
);

test('Java snippets: methods with their Javadoc, qualified by class', () => {
  const src = 'class A {\n  /** Doc. */\n  int f() {\n    return 1;\n  }\n  static class B { void g() { } }\n}\n';
  const s = javaSnippets('A.java', src).filter((x) => x.symbol);
  assert.deepEqual(
    s.map((x) => [x.symbol, x.startLine, x.endLine]),
    [
      ['A.f', 2, 5],
      ['B.g', 6, 6],
    ],
  );
});

test('rankSnippets: highest Jaccard first, ties by path and line, zero scores and excluded snippets dropped, at most k', () => {
  const snippets = [
    { file: 'b.py', startLine: 1, endLine: 2, symbol: 'slug', code: 'make a url slug from a title' },
    { file: 'a.py', startLine: 5, endLine: 6, symbol: 'target', code: 'make a url slug from a title' },
    { file: 'a.py', startLine: 1, endLine: 2, symbol: 'other', code: 'make a url slug from a title' },
    { file: 'c.py', startLine: 1, endLine: 2, symbol: 'far', code: 'parse numbers' },
    { file: 'd.py', startLine: 1, endLine: 2, symbol: 'half', code: 'title words' },
  ];
  const hits = rankSnippets(snippets, 'url slug from a title', 3, (s) => s.symbol === 'target');
  assert.deepEqual(
    hits.map((h) => h.symbol),
    ['other', 'slug', 'half'],
  );
  assert.ok(hits[0]!.score > hits[2]!.score);
  assert.equal(rankSnippets(snippets, 'zzz', 5).length, 0);
});
