/** The function scanners (Python through ast, Java by a declaration scan), stubbing and the helpers around them. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { briefOf, isTestPath, pythonFunctions, stubFunction } from '../../../envs/humanevo/functions.ts';
import { javaMethods, stubJavaMethod } from '../../../envs/humanevo/java.ts';
import { importedFiles, similarFiles, siblingFiles } from '../../../envs/humanevo/prompts.ts';

const PY = `import os
import json as j
from .helpers import assist
from thirdparty import Thing

LIMIT = 3


def standalone(xs):
    """Sum of squares, using only builtins and the standard library."""
    total = 0
    for x in xs:
        total += x * x
    return total + len(os.sep) + len(j.dumps(xs))


def uses_module(x):
    """Calls a function of this module."""
    return standalone([x]) + LIMIT


def uses_import(x):
    """Calls a function imported from the project."""
    return assist(x)


def uses_third_party(x):
    """Uses only a third-party class."""
    return Thing(x).value * 2


def trivial():
    """Nothing to write."""
    return LIMIT


def oneliner(x): return [x, x]


def doc_only():
    """Only a docstring."""


class Box:
    size = 2

    def __init__(self, v):
        self.v = v

    def doubled(self):
        """Uses its own members."""
        return self.v * self.size + self.helper()

    def helper(self):
        return 1

    async def fetch(self):
        """Uses another class of the project."""
        return assist(self.v)

    @staticmethod
    def make(v):
        """A static method with a decorator."""
        result = Box(v)
        return result
`;

test('Python: levels (standalone, intra-class, inter-class), trivial bodies, constructors, signatures', async () => {
  const fns = (await pythonFunctions({ 'pkg/mod.py': PY }, ['pkg'])).get('pkg/mod.py');
  assert.ok(Array.isArray(fns));
  const by = Object.fromEntries(fns.map((f) => [f.qualname, f]));
  assert.equal(by.standalone!.dependency, 'standalone');
  assert.equal(by.uses_module!.dependency, 'inter-class');
  assert.deepEqual(by.uses_module!.projectRefs, ['LIMIT', 'standalone']);
  assert.equal(by.uses_import!.dependency, 'inter-class');
  assert.equal(by.uses_third_party!.dependency, 'standalone');
  assert.equal(by['Box.doubled']!.dependency, 'intra-class');
  assert.deepEqual(by['Box.doubled']!.classRefs, ['helper', 'size', 'v']);
  assert.equal(by['Box.fetch']!.dependency, 'inter-class');
  assert.equal(by['Box.make']!.dependency, 'intra-class');
  assert.equal(by.trivial!.trivial, true);
  assert.equal(by.doc_only!.trivial, true);
  assert.equal(by.standalone!.trivial, false);
  assert.equal(by['Box.__init__']!.isConstructor, true);
  assert.equal(
    by['Box.make']!.lines[0] + 1,
    by['Box.make']!.bodyLine! - 2,
    'the decorator starts the function; the docstring comes before the body',
  );
  assert.equal(by['Box.make']!.signature, '    def make(v):');
  assert.equal(by.oneliner!.oneLine, true);
  assert.equal(by.standalone!.docstring, 'Sum of squares, using only builtins and the standard library.');
  const broken = (await pythonFunctions({ 'bad.py': 'def f(:\n' }, [])).get('bad.py');
  assert.match(String(broken), /SyntaxError/);
});

test('Python: a stub keeps signature and docstring, raises, and still parses (one-liners and docstring-only bodies too)', async () => {
  const fns = (await pythonFunctions({ 'pkg/mod.py': PY }, ['pkg'])).get('pkg/mod.py') as Awaited<
    ReturnType<typeof pythonFunctions>
  > extends Map<string, infer V>
    ? Exclude<V, string>
    : never;
  for (const name of ['standalone', 'oneliner', 'doc_only', 'Box.doubled', 'Box.make', 'Box.fetch']) {
    const fn = fns.find((f) => f.qualname === name)!;
    const stubbed = stubFunction('python', PY, fn);
    execFileSync('python3', ['-c', 'import ast, sys; ast.parse(sys.stdin.read())'], { input: stubbed });
    const after = (await pythonFunctions({ 'pkg/mod.py': stubbed }, ['pkg'])).get('pkg/mod.py') as typeof fns;
    const again = after.find((f) => f.qualname === name)!;
    assert.equal(again.signature, fn.signature, name);
    assert.equal(again.docstring, fn.docstring, name);
    assert.match(
      stubbed
        .split('\n')
        .slice(again.lines[0] - 1, again.lines[1])
        .join('\n'),
      /raise NotImplementedError/,
      name,
    );
    assert.equal(after.length, fns.length, `${name}: the other functions are untouched`);
  }
});

const JAVA = `package p;

import java.util.List;
import p.util.Helper;

/** A class. */
public class Shop<T extends Comparable<T>> {
    private final List<T> items;
    private int count = 0;
    static final String NAME = "x";

    /** Makes a shop. */
    public Shop(List<T> items) {
        this.items = items;
    }

    /**
     * Counts items above a bound.
     * @param bound the bound
     */
    @Deprecated
    public int above(T bound) throws IllegalStateException {
        int n = 0;
        for (T t : items) if (t.compareTo(bound) > 0) n++;
        return n + count;
    }

    public String label() { return NAME; }

    int viaHelper(int x) {
        Runnable r = new Runnable() { public void run() { System.out.println("{"); } };
        return Helper.twice(x);
    }

    static int pure(int a, int b) {
        String s = "}{";
        return Math.max(a, b) + s.length();
    }

    interface Visitor { void visit(String s); }

    enum Kind { A, B; int code() { return ordinal() + 1; } }
}
`;

test('Java: methods and constructors, Javadoc, levels, trivial bodies; anonymous classes and strings with braces do not confuse it', () => {
  const fns = javaMethods(JAVA, new Set(['Shop', 'Helper']));
  const by = Object.fromEntries(fns.map((f) => [f.qualname, f]));
  assert.deepEqual(Object.keys(by).sort(), ['Kind.code', 'Shop.Shop', 'Shop.above', 'Shop.label', 'Shop.pure', 'Shop.viaHelper']);
  assert.equal(by['Shop.Shop']!.isConstructor, true);
  assert.equal(by['Shop.above']!.docstring, 'Counts items above a bound.\n@param bound the bound');
  assert.equal(by['Shop.above']!.signature, '@Deprecated\n    public int above(T bound) throws IllegalStateException');
  assert.equal(by['Shop.above']!.dependency, 'intra-class');
  assert.equal(by['Shop.viaHelper']!.dependency, 'inter-class');
  assert.equal(by['Shop.pure']!.dependency, 'standalone');
  assert.equal(by['Shop.label']!.trivial, true);
  assert.equal(by['Shop.above']!.trivial, false);
  assert.equal(by['Shop.viaHelper']!.docstring, null);
});

test('Java: a stub keeps the Javadoc and signature and the rest of the file', () => {
  const fn = javaMethods(JAVA).find((f) => f.qualname === 'Shop.pure')!;
  const stubbed = stubJavaMethod(JAVA, fn);
  assert.match(
    stubbed,
    new RegExp(
      String.raw`    static int pure\(int a, int b\) \{\n        \/\/ TODO: implement\n        throw new ` +
        String.raw`UnsupportedOperationException\("Not implemented yet"\);\n    \}\n\n    interface Visitor`,
    ),
  );
  assert.deepEqual(
    javaMethods(stubbed).map((f) => f.qualname),
    javaMethods(JAVA).map((f) => f.qualname),
  );
});

test('briefOf takes the first sentence; test paths by language', () => {
  assert.equal(briefOf('Turn a title into a slug. Then more.\n\nDetails.'), 'Turn a title into a slug.');
  assert.equal(briefOf('No full stop\nacross lines'), 'No full stop across lines');
  assert.ok(isTestPath('python', 'tests/test_x.py') && isTestPath('python', 'pkg/test_y.py') && isTestPath('python', 'conftest.py'));
  assert.equal(isTestPath('python', 'pkg/testing_tools_impl.py'), false);
  assert.equal(isTestPath('python', 'pkg/strings.py'), false);
  assert.ok(isTestPath('java', 'src/test/java/p/ATest.java') && !isTestPath('java', 'src/main/java/p/A.java'));
});

test('static contexts: imported, sibling and similarly named files', () => {
  const files = ['pkg/__init__.py', 'pkg/strings.py', 'pkg/bag.py', 'pkg/sub/strings_util.py', 'other/string_tools.py', 'pkg/helpers.py'];
  const src = 'from .bag import WordBag\nfrom . import helpers\nimport pkg.sub.strings_util\nimport os\n';
  assert.deepEqual(importedFiles('python', 'pkg/strings.py', src, files), [
    'pkg/__init__.py',
    'pkg/bag.py',
    'pkg/helpers.py',
    'pkg/sub/strings_util.py',
  ]);
  assert.deepEqual(siblingFiles('pkg/strings.py', files), ['pkg/__init__.py', 'pkg/bag.py', 'pkg/helpers.py']);
  assert.deepEqual(similarFiles('pkg/strings.py', files), ['pkg/sub/strings_util.py']);
  const jfiles = ['src/main/java/p/A.java', 'src/main/java/p/util/Helper.java'];
  assert.deepEqual(importedFiles('java', 'src/main/java/p/A.java', 'import p.util.Helper;\nimport java.util.List;\n', jfiles), [
    'src/main/java/p/util/Helper.java',
  ]);
});
