import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { extractCodeBlocks, filesFromAnswer, isTestPath } from '../../agents/common/code.ts';
import { parseToolArguments, resolveApiKey, toOpenAITools, truncateObservation } from '../../agents/common/openai.ts';
import { AGENTS, createAgent, getAgent } from '../../agents/index.ts';

describe('code extraction', () => {
  test('labelled blocks in every common spelling', () => {
    const text = [
      'Intro.',
      '```python path=pkg/a.py',
      'A = 1',
      '```',
      '```python:pkg/b.py',
      'B = 2',
      '```',
      '```python c.py',
      'C = 3',
      '```',
      '**d.py**',
      '```python',
      'D = 4',
      '```',
      '```e.py',
      'E = 5',
      '```',
      '### File: src/main/java/F.java',
      '~~~~java',
      'class F {}',
      '```',
      'still F',
      '~~~~',
    ].join('\n');
    const blocks = extractCodeBlocks(text);
    assert.deepEqual(
      blocks.map((b) => [b.lang, b.path, b.code]),
      [
        ['python', 'pkg/a.py', 'A = 1\n'],
        ['python', 'pkg/b.py', 'B = 2\n'],
        ['python', 'c.py', 'C = 3\n'],
        ['python', 'd.py', 'D = 4\n'],
        ['python', 'e.py', 'E = 5\n'],
        ['java', 'src/main/java/F.java', 'class F {}\n```\nstill F\n'],
      ],
    );
  });

  test('files from an answer: labelled blocks win; one target takes the longest block of its language', () => {
    assert.deepEqual(filesFromAnswer('```python path=x.py\nX\n```', ['y.py'], 'python').files, { 'x.py': 'X\n' });
    const unlabelled =
      'Example:\n```python\nprint(1)\n```\nSolution:\n```python\ndef f():\n    ' +
      'return 42\n```\n```bash\npython -m pytest and more text than both\n```';
    assert.deepEqual(filesFromAnswer(unlabelled, ['f.py'], 'python').files, { 'f.py': 'def f():\n    return 42\n' });
    const ambiguous = filesFromAnswer('```python\nX\n```', ['a.py', 'b.py'], 'python');
    assert.deepEqual(ambiguous.files, {});
    assert.match(ambiguous.problem!, /label each with its path/);
    assert.match(filesFromAnswer('no code', ['a.py'], 'python').problem!, /no fenced code block/);
    assert.equal(extractCodeBlocks('```python path=../evil.py\nx\n```')[0]!.path, undefined);
  });

  test('test paths are not source', () => {
    for (const p of ['tests/test_x.py', 'test_x.py', 'pkg/x_test.py', 'conftest.py', 'src/test/java/FooTest.java', 'FooTest.java'])
      assert.ok(isTestPath(p), p);
    for (const p of ['roman.py', 'shop/cart.py', 'src/main/java/org/Brackets.java', 'testing_utils.py']) assert.ok(!isTestPath(p), p);
  });
});

describe('openai adapter helpers', () => {
  test('truncation keeps the head and the tail and says what was cut', () => {
    const text = Array.from({ length: 1000 }, (_, i) => `line ${i}`).join('\n');
    const cut = truncateObservation(text, 500);
    assert.ok(cut.length < 700);
    assert.match(cut, /^line 0\n/);
    assert.match(cut, /line 999$/);
    assert.match(cut, /characters \(\d+ lines\) omitted/);
    assert.equal(truncateObservation('short', 500), 'short');
  });

  test('MCP tools become function tools; $schema is dropped, exclusions apply', () => {
    const tools = toOpenAITools(
      [
        {
          name: 'view_file',
          description: 'Show a file',
          inputSchema: {
            $schema: 'http://json-schema.org/draft-07/schema#',
            type: 'object',
            properties: { path: { type: 'string' } },
            required: ['path'],
          },
        },
        { name: 'submit', inputSchema: { type: 'object' } },
        { name: 'end_episode', inputSchema: { type: 'object' } },
      ],
      { exclude: ['end_episode'] },
    );
    assert.deepEqual(tools, [
      {
        type: 'function',
        function: {
          name: 'view_file',
          description: 'Show a file',
          parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        },
      },
      { type: 'function', function: { name: 'submit', description: 'submit', parameters: { type: 'object', properties: {} } } },
    ]);
  });

  test('tool arguments: JSON objects only', () => {
    assert.deepEqual(parseToolArguments(''), { ok: true, args: {} });
    assert.deepEqual(parseToolArguments('{"a":1}'), { ok: true, args: { a: 1 } });
    assert.equal(parseToolArguments('[1]').ok, false);
    assert.equal(parseToolArguments('{').ok, false);
  });

  test('the API key: config, then the environment, then a placeholder', () => {
    const saved = { o: process.env.OPENAI_API_KEY, b: process.env.BENCHGYM_API_KEY };
    try {
      delete process.env.OPENAI_API_KEY;
      delete process.env.BENCHGYM_API_KEY;
      assert.equal(resolveApiKey({ model: 'm', apiKey: 'k' }), 'k');
      assert.equal(resolveApiKey({ model: 'm' }), 'no-key');
      process.env.BENCHGYM_API_KEY = 'b';
      assert.equal(resolveApiKey({ model: 'm' }), 'b');
      process.env.OPENAI_API_KEY = 'o';
      assert.equal(resolveApiKey({ model: 'm' }), 'o');
    } finally {
      if (saved.o === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved.o;
      if (saved.b === undefined) delete process.env.BENCHGYM_API_KEY;
      else process.env.BENCHGYM_API_KEY = saved.b;
    }
  });
});

describe('agent registry', () => {
  test('every agent is registered under its name with an options schema', () => {
    assert.deepEqual(Object.keys(AGENTS).sort(), ['feedback', 'replay', 'single-shot', 'swe-agent']);
    for (const [name, def] of Object.entries(AGENTS)) {
      assert.equal(def.name, name);
      assert.ok(def.description);
      assert.ok(def.options.safeParse({}).success, `${name} has defaults for every option`);
    }
    assert.equal((getAgent('swe-agent').options.parse({}) as { max_steps: number }).max_steps, 50);
    assert.equal((getAgent('feedback').options.parse({}) as { rounds: number }).rounds, 3);
  });

  test('unknown agents and invalid options are refused with a message', () => {
    assert.throws(() => getAgent('nope'), /unknown agent 'nope' \(known: .*swe-agent/);
    assert.throws(() => createAgent('swe-agent', { max_steps: 0 }), /invalid options for agent 'swe-agent': max_steps/);
    assert.ok(createAgent('feedback', { rounds: 2 }));
  });
});
