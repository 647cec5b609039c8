import { execFileSync } from 'node:child_process';
import { promises as fs, readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../../src/tasks/registry.ts';

/**
 * Fixture repositories for HumanEvo, built by git with fixed dates, holding both of the
 * paper's cases (Figure 1): a *later* commit adds a near-copy of a target function (future
 * context leakage) and a *later* commit deletes a helpful similar function (useful context
 * missing). Around them: the changes the builder must turn into tasks (one per dependency
 * level, one through a merge commit) and planted non-tasks it must reject for the right reason.
 */

export interface FixtureExpectation {
  /** qualname → dependency level of each task the builder must produce. */
  tasks: Record<string, 'standalone' | 'intra-class' | 'inter-class'>;
  /** reason → count of rejections. */
  rejected: Record<string, number>;
  /** The target whose retrieval shows both cases, the helper deleted later and the copy added later. */
  retrieval: { target: string; deletedHelper: string; futureCopy: string };
}

/** A repository grown commit by commit in a test (dated, with a fixed author). */
export class FixtureRepo {
  private tick = 0;
  /** When set, the date of the next commits (else hours of January 2024, one per commit). */
  at?: string;
  constructor(readonly dir: string) {}

  git(...args: string[]): string {
    const date =
      this.at ?? `2024-01-${String(1 + Math.floor(this.tick / 24)).padStart(2, '0')}T${String(this.tick % 24).padStart(2, '0')}:00:00Z`;
    return execFileSync('git', args, {
      cwd: this.dir,
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH,
        HOME: this.dir,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_AUTHOR_NAME: 'Fixture Dev',
        GIT_AUTHOR_EMAIL: 'dev@example.org',
        GIT_COMMITTER_NAME: 'Fixture Dev',
        GIT_COMMITTER_EMAIL: 'dev@example.org',
        GIT_AUTHOR_DATE: date,
        GIT_COMMITTER_DATE: date,
      },
    });
  }

  async write(files: Record<string, string | null>): Promise<void> {
    for (const [rel, content] of Object.entries(files)) {
      const abs = path.join(this.dir, rel);
      if (content === null) await fs.rm(abs, { force: true });
      else {
        await fs.mkdir(path.dirname(abs), { recursive: true });
        await fs.writeFile(abs, content);
      }
    }
  }

  /** Writes files and commits them; returns the commit id. */
  async commit(message: string, files: Record<string, string | null>): Promise<string> {
    await this.write(files);
    this.tick++;
    this.git('add', '-A');
    this.git('commit', '-q', '-m', message);
    return this.git('rev-parse', 'HEAD').trim();
  }

  /** A pull request: a branch with one commit, merged with --no-ff. */
  async pullRequest(branch: string, message: string, files: Record<string, string | null>): Promise<string> {
    this.git('checkout', '-q', '-b', branch);
    await this.commit(message, files);
    this.git('checkout', '-q', 'main');
    this.tick++;
    this.git('merge', '-q', '--no-ff', '-m', `Merge pull request #${this.tick} from ${branch}`, branch);
    this.git('branch', '-q', '-D', branch);
    return this.git('rev-parse', 'HEAD').trim();
  }

  async init(): Promise<void> {
    await fs.mkdir(this.dir, { recursive: true });
    this.git('init', '-q', '-b', 'main');
  }
}

// --- Python -----------------------------------------------------------------

const PY_STRINGS_V1 = `"""String helpers."""
import re


def normalize_title(title):
    """Lowercase a title and join its words with single dashes.

    Runs of characters other than letters and digits become one dash, and
    dashes at either end are dropped.
    """
    words = re.findall(r"[a-z0-9]+", title.lower())
    return "-".join(words)


def shout(text):
    """Return the text in upper case followed by an exclamation mark."""
    return text.upper() + "!"
`;

const PY_SLUGIFY = `

def slugify(title, sep="-"):
    """Turn a title into a URL slug.

    The title is lowercased, runs of characters other than letters and digits
    become a single separator, and separators at either end are dropped.
    """
    words = re.findall(r"[a-z0-9]+", title.lower())
    return sep.join(words)
`;

const PY_FUTURE_COPY = `

def slugify_heading(heading, sep="-"):
    """Turn a heading into a URL slug.

    The heading is lowercased, runs of characters other than letters and digits
    become a single separator, and separators at either end are dropped.
    """
    words = re.findall(r"[a-z0-9]+", heading.lower())
    return sep.join(words)
`;

const PY_BAG = `"""A bag of words."""


class WordBag:
    """Counts words."""

    def __init__(self, words=()):
        self.counts = {}
        for word in words:
            self.add(word)

    def add(self, word):
        """Count one more occurrence of a word."""
        self.counts[word] = self.counts.get(word, 0) + 1

    def total(self):
        """The number of words counted."""
        return sum(self.counts.values())
`;

const PY_MOST_COMMON = `
    def most_common(self):
        """Return the word counted most often, or None for an empty bag.

        Ties go to the word that was counted first.
        """
        if not self.total():
            return None
        best = None
        for word, n in self.counts.items():
            if best is None or n > self.counts[best]:
                best = word
        return best
`;

const PY_TOKENIZER_V1 = `class Tokenizer:
    """Splits text into tokens."""

    sep = " "
    lower = False

    def split(self, text):
        """Split text on the separator, dropping empty pieces."""
        pieces = [p for p in text.split(self.sep) if p]
        return [p.lower() for p in pieces] if self.lower else pieces
`;

const PY_TOKENIZER_INIT = `
    def __init__(self, sep=" ", lower=False):
        self.sep = sep
        self.lower = lower
`;

const PY_TESTS_STRINGS_V1 = `from textkit.strings import normalize_title, shout


def test_normalize_title():
    assert normalize_title("  Hello, World!  ") == "hello-world"


def test_shout():
    assert shout("hey") == "HEY!"
`;

/** The Python fixture: `textkit`, a small package with a pytest suite. */
export async function buildPythonFixture(
  dir: string,
): Promise<{ repo: string; expect: FixtureExpectation; commits: Record<string, string> }> {
  const r = new FixtureRepo(dir);
  await r.init();
  const commits: Record<string, string> = {};
  let strings = PY_STRINGS_V1;
  let stringTests = PY_TESTS_STRINGS_V1;
  commits.initial = await r.commit('Initial textkit', {
    'textkit/__init__.py': '"""textkit: small text helpers."""\n',
    'textkit/strings.py': strings,
    'textkit/bag.py': PY_BAG,
    'textkit/tokenizer.py': PY_TOKENIZER_V1,
    'tests/test_strings.py': stringTests,
    'tests/test_bag.py': 'from textkit.bag import WordBag\n\n\ndef test_total():\n    assert WordBag(["a", "b", "a"]).total() == 3\n',
    'tests/test_tokenizer.py':
      'from textkit.tokenizer import Tokenizer\n\n\ndef test_split():\n    assert Tokenizer().split("a  b") == ["a", "b"]\n',
    'README.md': '# textkit\n',
  });
  // Task 1 (standalone): slugify; normalize_title, its helpful look-alike, is deleted later.
  strings += PY_SLUGIFY;
  stringTests +=
    '\n\ndef test_slugify():\n    from textkit.strings import slugify\n    assert slugify("  ' +
    'Hello, World!  ") == "hello-world"\n    assert slugify("A b", sep="_") == "a_b"\n';
  commits.slugify = await r.commit('Add slugify', { 'textkit/strings.py': strings, 'tests/test_strings.py': stringTests });
  // Task 2 (intra-class): a method built on its class's own members.
  commits.mostCommon = await r.commit('Add WordBag.most_common', {
    'textkit/bag.py': PY_BAG + PY_MOST_COMMON,
    'tests/test_bag.py':
      'from textkit.bag import WordBag\n\n\ndef test_total():\n    assert WordBag(["a", "b", "a"]).total() == 3\n\n\ndef ' +
      'test_most_common():\n    assert WordBag(["a", "b", "b"]).most_common() == "b"\n    assert WordBag().most_common() is None\n',
  });
  // Task 3 (inter-class), through a pull request's merge commit.
  commits.headline = await r.pullRequest('feature/report', 'Add headline_slug', {
    'textkit/report.py': `"""Reports on texts."""
from .bag import WordBag
from .strings import slugify


def headline_slug(text):
    """Slug of the most common word of a text, for a headline anchor; empty for no words."""
    bag = WordBag(text.split())
    word = bag.most_common()
    return slugify(word) if word else ""
`,
    'tests/test_report.py':
      'from textkit.report import headline_slug\n\n\ndef test_headline_slug():\n    ' +
      'assert headline_slug("Go go GO now") == "go"\n    assert headline_slug("") == ""\n',
  });
  // Non-task: a constructor.
  commits.init = await r.commit('Tokenizer takes options', {
    'textkit/tokenizer.py': PY_TOKENIZER_V1.replace('    def split', `${PY_TOKENIZER_INIT.slice(1)}\n    def split`),
    'tests/test_tokenizer.py':
      'from textkit.tokenizer import Tokenizer\n\n\ndef test_split():\n    assert Tokenizer().split("a  b") == ' +
      '["a", "b"]\n\n\ndef test_options():\n    assert Tokenizer(sep=",", lower=True).split("A,,b") == ["a", "b"]\n',
  });
  // Non-task: a trivial body.
  commits.version = await r.commit('Add version()', {
    'textkit/__init__.py': '"""textkit: small text helpers."""\n\n\ndef version():\n    """The package version."""\n    return "1.0"\n',
    'tests/test_version.py': 'import textkit\n\n\ndef test_version():\n    assert textkit.version() == "1.0"\n',
  });
  // Non-task: no docstring.
  strings += '\n\ndef title_case(text):\n    return " ".join(w.capitalize() for w in text.split())\n';
  stringTests += '\n\ndef test_title_case():\n    from textkit.strings import title_case\n    assert title_case("a b") == "A B"\n';
  commits.titleCase = await r.commit('Add title_case', { 'textkit/strings.py': strings, 'tests/test_strings.py': stringTests });
  // Non-task: the change's tests do not exercise the function it adds.
  strings +=
    '\n\ndef count_vowels(text):\n    """Count the vowels (a, e, i, o, u) in a text, ' +
    'in either case."""\n    return sum(1 for ch in text.lower() if ch in "aeiou")\n';
  stringTests += '\n\ndef test_shout_empty():\n    assert shout("") == "!"\n';
  commits.countVowels = await r.commit('Add count_vowels', { 'textkit/strings.py': strings, 'tests/test_strings.py': stringTests });
  // Non-task: the change breaks a test that passed before it (shout's output changes).
  strings =
    strings.replace('return text.upper() + "!"', 'return text.upper() + "!!"') +
    ('\n\ndef reverse_words(text):\n    """Reverse the order of the words of a text; ' +
      'words are separated by whitespace."""\n    return " ".join(reversed(text.split()))\n');
  stringTests +=
    '\n\ndef test_reverse_words():\n    from textkit.strings import reverse_words\n    assert reverse_words("a b  c") == "c b a"\n';
  commits.reverseWords = await r.commit('Add reverse_words; louder shout', {
    'textkit/strings.py': strings,
    'tests/test_strings.py': stringTests,
  });
  // Later: a near-copy of slugify (future context leakage), with no test change.
  strings += PY_FUTURE_COPY;
  commits.futureCopy = await r.commit('Add slugify_heading', { 'textkit/strings.py': strings });
  // Later: the helpful look-alike is deleted (useful context missing), its test with it.
  strings = strings.replace(/\n\ndef normalize_title[\s\S]*?return "-"\.join\(words\)\n/, '\n');
  stringTests = stringTests
    .replace('from textkit.strings import normalize_title, shout', 'from textkit.strings import shout')
    .replace(/\n\ndef test_normalize_title\(\):\n.*\n/, '\n');
  commits.deleteHelper = await r.commit('Remove normalize_title', { 'textkit/strings.py': strings, 'tests/test_strings.py': stringTests });
  return {
    repo: dir,
    commits,
    expect: {
      tasks: { slugify: 'standalone', 'WordBag.most_common': 'intra-class', headline_slug: 'inter-class' },
      rejected: {
        constructor: 1,
        'trivial-body': 1,
        'no-docstring': 1,
        'no-fail-to-pass': 1,
        'breaks-passing-tests': 1,
        'no-test-change': 1,
        'no-added-function': 1,
      },
      retrieval: { target: 'slugify', deletedHelper: 'normalize_title', futureCopy: 'slugify_heading' },
    },
  };
}

// --- Java -------------------------------------------------------------------

const PKG = 'src/main/java/org/benchgym/fixture';
const TPKG = 'src/test/java/org/benchgym/fixture';

const JAVA_NORMALIZE = `
    /**
     * Lowercases a title and joins its words with single dashes.
     * Runs of characters other than letters and digits become one dash, and
     * dashes at either end are dropped.
     */
    public static String normalizeTitle(String title) {
        StringBuilder out = new StringBuilder();
        for (String word : title.toLowerCase().split("[^a-z0-9]+")) {
            if (word.isEmpty()) continue;
            if (out.length() > 0) out.append('-');
            out.append(word);
        }
        return out.toString();
    }
`;

const JAVA_SLUGIFY = `
    /**
     * Turns a title into a URL slug.
     * The title is lowercased, runs of characters other than letters and digits
     * become a single separator, and separators at either end are dropped.
     */
    public static String slugify(String title, String sep) {
        StringBuilder out = new StringBuilder();
        for (String word : title.toLowerCase().split("[^a-z0-9]+")) {
            if (word.isEmpty()) continue;
            if (out.length() > 0) out.append(sep);
            out.append(word);
        }
        return out.toString();
    }
`;

const JAVA_FUTURE_COPY = `
    /**
     * Turns a heading into a URL slug.
     * The heading is lowercased, runs of characters other than letters and digits
     * become a single separator, and separators at either end are dropped.
     */
    public static String slugifyHeading(String heading, String sep) {
        StringBuilder out = new StringBuilder();
        for (String word : heading.toLowerCase().split("[^a-z0-9]+")) {
            if (word.isEmpty()) continue;
            if (out.length() > 0) out.append(sep);
            out.append(word);
        }
        return out.toString();
    }
`;

function javaText(members: string): string {
  return `package org.benchgym.fixture;

/** String helpers. */
public final class Text {
    private Text() {}
${members}
    /** Returns the text in upper case followed by an exclamation mark. */
    public static String shout(String text) {
        return text.toUpperCase() + "!";
    }
}
`;
}

function javaBag(extra: string): string {
  return `package org.benchgym.fixture;

import java.util.LinkedHashMap;
import java.util.Map;

/** Counts words. */
public class WordBag {
    private final Map<String, Integer> counts = new LinkedHashMap<>();

    /** Counts one more occurrence of a word. */
    public void add(String word) {
        counts.merge(word, 1, Integer::sum);
    }

    /** The number of words counted. */
    public int total() {
        int n = 0;
        for (int c : counts.values()) n += c;
        return n;
    }
${extra}}
`;
}

const JAVA_MOST_COMMON = `
    /**
     * Returns the word counted most often, or null for an empty bag.
     * Ties go to the word that was counted first.
     */
    public String mostCommon() {
        if (total() == 0) return null;
        String best = null;
        for (Map.Entry<String, Integer> e : counts.entrySet()) {
            if (best == null || e.getValue() > counts.get(best)) best = e.getKey();
        }
        return best;
    }
`;

function javaTest(cls: string, body: string): string {
  return `package org.benchgym.fixture;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

class ${cls} {
${body}}
`;
}

const JT_NORMALIZE =
  '    @Test\n    void normalizeTitle() {\n        assertEquals("hello-world", Text.normalizeTitle("  Hello, World!  "));\n    }\n';
const JT_SHOUT = '    @Test\n    void shout() {\n        assertEquals("HEY!", Text.shout("hey"));\n    }\n';
const JT_SLUGIFY = '    @Test\n    void slugify() {\n        assertEquals("hello_world", Text.slugify("  Hello, World!  ", "_"));\n    }\n';
const JT_TOTAL =
  '    @Test\n    void total() {\n        WordBag b = new WordBag();\n        ' +
  'b.add("a");\n        b.add("a");\n        assertEquals(2, b.total());\n    }\n';

/**
 * The Java fixture: a Maven project (the examples' pom, so its Maven cache is shared) with JUnit 5
 * tests. `compileLevel` writes an older era's pom, `maven.compiler.source`/`target` instead of
 * release 17 (`1.6`: a level JDK 17's javac refuses).
 */
export async function buildJavaFixture(
  dir: string,
  opts: { compileLevel?: string } = {},
): Promise<{ repo: string; expect: FixtureExpectation; commits: Record<string, string> }> {
  const r = new FixtureRepo(dir);
  await r.init();
  let pom = readFileSync(path.join(PROJECT_ROOT, 'envs/examples/tasks/java-bracket-matcher/workspace/pom.xml'), 'utf8');
  if (opts.compileLevel) {
    const level =
      `<maven.compiler.source>${opts.compileLevel}</maven.compiler.source>\n    ` +
      `<maven.compiler.target>${opts.compileLevel}</maven.compiler.target>`;
    pom = pom.replace(/<maven\.compiler\.release>17<\/maven\.compiler\.release>/, level);
    if (!pom.includes(level)) throw new Error("the examples' pom no longer sets maven.compiler.release 17");
  }
  const commits: Record<string, string> = {};
  commits.initial = await r.commit('Initial project', {
    'pom.xml': pom,
    '.gitignore': 'target/\n',
    [`${PKG}/Text.java`]: javaText(JAVA_NORMALIZE),
    [`${PKG}/WordBag.java`]: javaBag(''),
    [`${TPKG}/TextTest.java`]: javaTest('TextTest', JT_NORMALIZE + JT_SHOUT),
    [`${TPKG}/WordBagTest.java`]: javaTest('WordBagTest', JT_TOTAL),
  });
  // Task 1 (standalone): Text.slugify; normalizeTitle, its look-alike, is deleted later.
  commits.slugify = await r.commit('Add Text.slugify', {
    [`${PKG}/Text.java`]: javaText(JAVA_NORMALIZE + JAVA_SLUGIFY),
    [`${TPKG}/TextTest.java`]: javaTest('TextTest', JT_NORMALIZE + JT_SHOUT + JT_SLUGIFY),
  });
  // Tasks 2 (intra-class) and 3 (inter-class), one pull request.
  commits.report = await r.pullRequest('feature/headline', 'Add WordBag.mostCommon and Headline.anchor', {
    [`${PKG}/WordBag.java`]: javaBag(JAVA_MOST_COMMON),
    [`${PKG}/Headline.java`]: `package org.benchgym.fixture;

/** Headlines. */
public final class Headline {
    private Headline() {}

    /** The slug of the most common word of a text, for a headline anchor; empty for no words. */
    public static String anchor(String text) {
        WordBag bag = new WordBag();
        for (String w : text.split("\\\\s+")) if (!w.isEmpty()) bag.add(w);
        String word = bag.mostCommon();
        return word == null ? "" : Text.slugify(word, "-");
    }
}
`,
    [`${TPKG}/WordBagTest.java`]: javaTest(
      'WordBagTest',
      JT_TOTAL +
        ('    @Test\n    void mostCommon() {\n        WordBag b = new WordBag();\n        assertNull(b.mostCommon());\n        ' +
          'b.add("a");\n        b.add("b");\n        b.add("b");\n        assertEquals("b", b.mostCommon());\n    }\n'),
    ),
    [`${TPKG}/HeadlineTest.java`]: javaTest(
      'HeadlineTest',
      '    @Test\n    void anchor() {\n        assertEquals("go", Headline.anchor("Go ' +
        'go go now"));\n        assertEquals("", Headline.anchor(""));\n    }\n',
    ),
  });
  // Non-tasks: a constructor, and a trivial body.
  commits.ctor = await r.commit('WordBag from words', {
    [`${PKG}/WordBag.java`]: javaBag(
      JAVA_MOST_COMMON +
        ('\n    /** A bag holding the given words. */\n    public WordBag(java.util.List<String> words) {\n        for (String w ' +
          ': words) add(w);\n    }\n\n    /** An empty bag. */\n    public WordBag() {\n        this(java.util.List.of());\n    }\n'),
    ),
    [`${TPKG}/WordBagTest.java`]: javaTest(
      'WordBagTest',
      JT_TOTAL +
        '    @Test\n    void fromWords() {\n        assertEquals(3, new WordBag(java.util.List.of("a", "b", "a")).total());\n    }\n',
    ),
  });
  commits.version = await r.commit('Add Text.version', {
    [`${PKG}/Text.java`]: javaText(
      JAVA_NORMALIZE +
        JAVA_SLUGIFY +
        '\n    /** The library version. */\n    public static String version() {\n        return "1.0";\n    }\n',
    ),
    [`${TPKG}/TextTest.java`]: javaTest(
      'TextTest',
      JT_NORMALIZE + JT_SHOUT + JT_SLUGIFY + '    @Test\n    void version() {\n        assertEquals("1.0", Text.version());\n    }\n',
    ),
  });
  const versionFn = '\n    /** The library version. */\n    public static String version() {\n        return "1.0";\n    }\n';
  // Later: the near-copy (future context leakage), no test change.
  commits.futureCopy = await r.commit('Add Text.slugifyHeading', {
    [`${PKG}/Text.java`]: javaText(JAVA_NORMALIZE + JAVA_SLUGIFY + versionFn + JAVA_FUTURE_COPY),
  });
  // Later: the look-alike is deleted (useful context missing).
  commits.deleteHelper = await r.commit('Remove Text.normalizeTitle', {
    [`${PKG}/Text.java`]: javaText(JAVA_SLUGIFY + versionFn + JAVA_FUTURE_COPY),
    [`${TPKG}/TextTest.java`]: javaTest('TextTest', JT_SHOUT + JT_SLUGIFY),
  });
  return {
    repo: dir,
    commits,
    expect: {
      tasks: { 'Text.slugify': 'standalone', 'WordBag.mostCommon': 'intra-class', 'Headline.anchor': 'inter-class' },
      rejected: { constructor: 3, 'trivial-body': 1, 'no-test-change': 1, 'no-added-function': 1 },
      retrieval: { target: 'Text.slugify', deletedHelper: 'Text.normalizeTitle', futureCopy: 'Text.slugifyHeading' },
    },
  };
}

// --- Two Python eras ---------------------------------------------------------

const ERA_SETUP_PY = `from setuptools import setup

setup(
    name="confkit",
    version="0.1",
    packages=["confkit"],
    python_requires=">=3.5, <3.8",
    classifiers=[
        "Programming Language :: Python :: 3",
        "Programming Language :: Python :: 3.5",
        "Programming Language :: Python :: 3.6",
        "Programming Language :: Python :: 3.7",
    ],
)
`;

const ERA_MERGE_OLD = `"""Merging configuration mappings."""
from collections import Mapping  # the ABCs left the collections module in Python 3.10


def is_mapping(value):
    """Whether a value is a mapping (a dict or any other Mapping)."""
    return isinstance(value, Mapping)
`;

const ERA_DEEP_MERGE = `

def deep_merge(base, override):
    """Merge two mappings recursively into a new dict.

    The keys of override win, except that where both values are mappings they are
    merged the same way; neither argument is changed.
    """
    merged = dict(base)
    for key, value in override.items():
        if key in merged and isinstance(merged[key], Mapping) and isinstance(value, Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged
`;

const ERA_MERGE_NEW = `"""Merging configuration mappings."""
from collections.abc import Mapping


def is_mapping(value):
    """Whether a value is a mapping (a dict or any other Mapping)."""
    match value:
        case Mapping():
            return True
        case _:
            return False
`;

const ERA_PYPROJECT = `[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "confkit"
version = "1.0"
requires-python = ">=3.10"
classifiers = [
    "Programming Language :: Python :: 3.10",
    "Programming Language :: Python :: 3.11",
]
`;

const ERA_SHAPE = `"""What shape a configuration value has."""
from collections.abc import Mapping


def describe(value):
    """Describe the shape of a configuration value.

    A mapping is "mapping with N keys", a list or a tuple "sequence of N items",
    None "nothing", and anything else the name of its type.
    """
    match value:
        case Mapping():
            return f"mapping with {len(value)} keys"
        case list() | tuple():
            return f"sequence of {len(value)} items"
        case None:
            return "nothing"
        case _:
            return type(value).__name__
`;

const ERA_TEST_MERGE = `from confkit.merge import is_mapping


def test_is_mapping():
    assert is_mapping({})
    assert not is_mapping([])
`;

const ERA_TEST_DEEP_MERGE = `

def test_deep_merge():
    from confkit.merge import deep_merge
    base = {"a": 1, "db": {"host": "x", "port": 1}}
    assert deep_merge(base, {"db": {"port": 2}, "b": 3}) == {"a": 1, "db": {"host": "x", "port": 2}, "b": 3}
    assert base == {"a": 1, "db": {"host": "x", "port": 1}}
    assert deep_merge({"a": {"b": 1}}, {"a": 5}) == {"a": 5}
`;

/**
 * A repository whose history spans two Python eras, no dependencies: `confkit` in 2019
 * declares Python 3.5-3.7 (setup.py python_requires and classifiers, tox envlist) and
 * imports `Mapping` from `collections` (gone in 3.10); in 2023 it moves to a
 * pyproject.toml declaring 3.10 and 3.11 and uses `match` statements (a syntax error
 * before 3.10). One task in each era: `deep_merge` (2019) and `describe` (2023); the
 * move itself adds no function.
 */
export async function buildTwoEraFixture(dir: string): Promise<{ repo: string; commits: Record<string, string> }> {
  const r = new FixtureRepo(dir);
  await r.init();
  const commits: Record<string, string> = {};
  r.at = '2019-03-01T10:00:00Z';
  commits.initial = await r.commit('Initial confkit', {
    'setup.py': ERA_SETUP_PY,
    'tox.ini': '[tox]\nenvlist = py35, py36, py37\n\n[testenv]\ncommands = pytest\n',
    'confkit/__init__.py': '"""confkit: configuration helpers."""\n',
    'confkit/merge.py': ERA_MERGE_OLD,
    'tests/test_merge.py': ERA_TEST_MERGE,
  });
  r.at = '2019-04-01T10:00:00Z';
  commits.deepMerge = await r.commit('Add deep_merge', {
    'confkit/merge.py': ERA_MERGE_OLD + ERA_DEEP_MERGE,
    'tests/test_merge.py': ERA_TEST_MERGE + ERA_TEST_DEEP_MERGE,
  });
  r.at = '2023-03-01T10:00:00Z';
  commits.modernise = await r.commit('Python 3.10+: pyproject.toml, collections.abc, match', {
    'setup.py': null,
    'tox.ini': null,
    'pyproject.toml': ERA_PYPROJECT,
    'confkit/merge.py': ERA_MERGE_NEW + ERA_DEEP_MERGE,
    'tests/test_merge.py':
      ERA_TEST_MERGE.replace('    assert not is_mapping([])\n', '    assert not is_mapping([])\n    assert not is_mapping(None)\n') +
      ERA_TEST_DEEP_MERGE,
  });
  r.at = '2023-04-01T10:00:00Z';
  commits.describe = await r.commit('Add describe', {
    'confkit/shape.py': ERA_SHAPE,
    'tests/test_shape.py':
      'from confkit.shape import describe\n\n\ndef test_describe():\n    assert describe({"a": ' +
      '1}) == "mapping with 1 keys"\n    assert describe((1, 2)) == "sequence of 2 ' +
      'items"\n    assert describe(None) == "nothing"\n    assert describe(1.5) == "float"\n',
  });
  return { repo: dir, commits };
}

/**
 * A target that moves after it was written: `shout` is added to `wordy/__init__.py` with its
 * test, and a later commit moves it into `wordy/voice.py` (the package re-exports it), as
 * pydash's 2014 functions moved into modules. One task; its ignored start state has the
 * target in `wordy/voice.py`.
 */
export async function buildMovedTargetFixture(dir: string): Promise<{ repo: string; commits: Record<string, string> }> {
  const r = new FixtureRepo(dir);
  await r.init();
  const commits: Record<string, string> = {};
  const whisper = 'def whisper(text):\n    """Lower-case text."""\n    return text.lower()\n';
  const shout =
    'def shout(text):\n    """Upper-case text and end it with an exclamation mark, once."""\n    return text.upper().rstrip("!") + "!"\n';
  commits.initial = await r.commit('Initial wordy', {
    'wordy/__init__.py': `"""wordy: tone helpers."""\n\n\n${whisper}`,
    'tests/test_wordy.py': 'from wordy import whisper\n\n\ndef test_whisper():\n    assert whisper("Hi") == "hi"\n',
  });
  commits.shout = await r.commit('Add shout', {
    'wordy/__init__.py': `"""wordy: tone helpers."""\n\n\n${whisper}\n\n${shout}`,
    'tests/test_wordy.py':
      'from wordy import shout, whisper\n\n\ndef test_whisper():\n    assert whisper("Hi") == ' +
      '"hi"\n\n\ndef test_shout():\n    assert shout("hi") == "HI!"\n    assert shout("hey!!") == "HEY!"\n',
  });
  commits.move = await r.commit('Move the tones into wordy/voice.py', {
    'wordy/__init__.py': '"""wordy: tone helpers."""\nfrom .voice import shout, whisper\n\n__all__ = ["shout", "whisper"]\n',
    'wordy/voice.py': `"""The tones."""\n\n\n${whisper}\n\n${shout}`,
  });
  return { repo: dir, commits };
}
