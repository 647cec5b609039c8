/** The TypeScript side of cutting Python functions: stubs, the platform test's target, the plain-interpreter check. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  functionBlock,
  joinLayout,
  replaceTarget,
  scanLines,
  splitLayout,
  stubOf,
  targetFunction,
  targetPath,
} from '../../../envs/codereval/pysource.ts';
import { platformNeeds } from '../../../envs/codereval/platform.ts';

const METHOD = [
  '@classmethod',
  '    def make(cls, a,',
  '             b=")"):',
  '        """Make one.',
  '',
  'Unindented docstring line.',
  '        """',
  '        x = (a +',
  '  b)',
  '        return cls(x)',
].join('\n');

describe('Python source cutting', () => {
  test('continuation lines: inside strings, brackets and after a backslash', () => {
    const info = scanLines('a = """x\ny"""\nb = (1,\n2)\nc = 1 + \\\n 2\n# only a comment\n');
    assert.deepEqual(
      info.map((l) => l.continuation),
      [false, true, false, true, false, true, false, false],
    );
    assert.equal(info[6]!.blank, true);
  });

  test('a stub keeps decorators, the whole signature and the original docstring, and raises', () => {
    const stub = stubOf(METHOD);
    assert.equal(
      stub,
      [
        '@classmethod',
        '    def make(cls, a,',
        '             b=")"):',
        '        """Make one.',
        '',
        'Unindented docstring line.',
        '        """',
        '        raise NotImplementedError',
      ].join('\n'),
    );
  });

  test('a human-labelled stub has the label as its docstring, escaped', () => {
    const stub = stubOf(METHOD, 'Builds one from """a""" and b.\\n');
    assert.match(stub, /^ {8}"""\n {8}Builds one from \\"\\"\\"a\\"\\"\\" and b\.\\\\n\n {8}"""\n {8}raise NotImplementedError$/m);
    assert.ok(!stub.includes('Unindented docstring line'));
  });

  test('the target is the least nested function of that name, else _name; its block ends at its last statement', () => {
    const src = [
      'class A:',
      '    def f(self):',
      '        return 1',
      '',
      'def f(x):',
      '    """doc',
      'text at column 0',
      '    """',
      '    return x',
      '',
      '# trailing',
      'y = f(2)',
    ].join('\n');
    const span = targetFunction(src, 'f')!;
    assert.deepEqual([span.def, span.end, span.column], [4, 9, 0]);
    assert.deepEqual(functionBlock(src, 'f'), ['def f(x):', '    """doc', 'text at column 0', '    """', '    return x']);
    assert.equal(targetFunction('def _g():\n    pass\n', 'g')!.def, 0);
    assert.equal(targetFunction('def gg():\n    pass\n', 'g'), undefined);
  });

  test(
    "the target's path is the classes around its placeholder; a path picks " +
      "that class's method, a missing one falls back to the least nested",
    () => {
      // boolean.py: four `pretty` methods, the task is Symbol's (the platform replaced the ground truth where it stood).
      const context = [
        'class Expression:',
        '    def pretty(self):',
        '        return "E"',
        '',
        'if True:',
        '    class Symbol(Expression):',
        '        """Doc with',
        'class Fake: at column 0',
        '        """',
        '        <PLACEHOLDER>',
        '',
        'def top():',
        '    pass',
      ].join('\n');
      assert.equal(targetPath(context, 'pretty'), 'Symbol.pretty');
      assert.equal(targetPath('<PLACEHOLDER>\n', 'f'), 'f');
      assert.equal(targetPath('no placeholder', 'f'), 'f');
      const src = [
        'def pretty():',
        '    return 0',
        'class Expression:',
        '    def pretty(self):',
        '        return 1',
        'class Symbol(Expression):',
        '    def pretty(self):',
        '        return 2',
        '    class Inner:',
        '        def pretty(self):',
        '            return 3',
      ].join('\n');
      assert.equal(targetFunction(src, 'Symbol.pretty')!.def, 6);
      assert.equal(targetFunction(src, 'Symbol.Inner.pretty')!.def, 9);
      assert.equal(targetFunction(src, 'pretty')!.def, 0);
      // A test file may hold the method as a module-level function: the path falls back to the name's rule.
      assert.equal(targetFunction(src, 'Other.pretty')!.def, 0);
      assert.deepEqual(replaceTarget(src, 'Symbol.pretty', ['def pretty(self):', '    return 42'])!.split('\n').slice(5, 8), [
        'class Symbol(Expression):',
        '    def pretty(self):',
        '        return 42',
      ]);
    },
  );

  test("replaceTarget puts a block at the function's column and keeps the file's decorators", () => {
    const src = ['class A:', '    @property', '    def f(self):', '        return 1', '    def g(self):', '        return 2'].join('\n');
    const out = replaceTarget(src, 'f', ['def f(self):', '    return 42']);
    assert.equal(
      out,
      ['class A:', '    @property', '    def f(self):', '        return 42', '    def g(self):', '        return 2'].join('\n'),
    );
  });

  test("CoderEval's layout (first line unindented, the others at their column) round-trips", () => {
    const { decorators, block } = splitLayout(METHOD, '    ');
    assert.deepEqual(decorators, ['@classmethod']);
    assert.equal(block[0], 'def make(cls, a,');
    // Lines left of the function's column (inside strings and brackets) come back at the column.
    assert.equal(joinLayout(decorators, block, '    '), METHOD.replace('\nUnindented', '\n    Unindented').replace('\n  b)', '\n    b)'));
  });
});

describe('which test files run on a plain interpreter', () => {
  test('the standard library and dill are enough; imports in functions, try blocks and TYPE_CHECKING do not count', () => {
    const src = [
      'import os, sys',
      'from collections import OrderedDict',
      'import typing as t',
      'if t.TYPE_CHECKING:',
      '    import typing_extensions',
      'try:',
      '    import ujson as json',
      'except ImportError:',
      '    import json',
      'def f(',
      '    a,',
      '):',
      '    """from neo4j import x"""',
      '    import requests',
      'if __name__ == "__main__":',
      '    import dill',
      '    sys.path.append("/home/travis/builds/repos/x/")',
      '    # open("/home/travis/builds/repos/x/data")',
    ].join('\n');
    assert.deepEqual(platformNeeds(src), []);
  });

  test('a third-party import, a relative import, or a file of the image make it need the image', () => {
    assert.deepEqual(platformNeeds('import requests\nfrom . import util\n'), ['imports its own package (relative import), requests']);
    assert.deepEqual(platformNeeds('if __name__ == "__main__":\n    import yaml\n'), ['imports yaml']);
    assert.deepEqual(platformNeeds('def f():\n    os.chdir("/home/travis/builds/repos/p")\n'), ['reads /home/travis/builds/repos/p']);
  });
});
