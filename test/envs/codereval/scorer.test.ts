/**
 * scorer.py, the platform's replacement procedure: the target is found by its path from the
 * module, in the test file and in the agent's source file alike (boolean.py's `Symbol.pretty`
 * beside three other `pretty` methods). Needs only a Python interpreter.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { SCORER_SOURCE } from '../../../envs/codereval/index.ts';
import { findPython } from '../../../src/env/python.ts';
import { tempDir } from '../../helpers.ts';

// The test's own copy of the module: Expression.pretty first (ast.walk meets it first), then Symbol's.
const TEST = [
  'class Expression:',
  '    def pretty(self):',
  '        return "E"',
  'class Symbol(Expression):',
  '    def pretty(self):',
  '        return "S"',
  'if __name__ == "__main__":',
  '    assert Expression().pretty() == "E", "Expression.pretty was replaced"',
  '    assert Symbol().pretty() == "S!", "Symbol.pretty: " + Symbol().pretty()',
  '',
].join('\n');

describe('CoderEval scorer.py', () => {
  test(
    "a dotted --name replaces that class's method in the test " + 'and takes that method from the source; a bare name the first',
    async (t) => {
      const python = await findPython('3.11');
      if (!python) return t.skip('no Python 3.11 here');
      const dir = await tempDir('codereval-scorer-path-');
      try {
        await fs.writeFile(path.join(dir, 'scorer.py'), SCORER_SOURCE);
        await fs.writeFile(path.join(dir, 'mod_pretty_passk_validte.py'), TEST);
        // The agent's file: Expression.pretty untouched, Symbol.pretty implemented.
        await fs.writeFile(path.join(dir, 'mod.py'), TEST.split('if __name__')[0]!.replace('return "S"', 'return "S!"'));
        const score = (name: string, candidate?: string) => {
          try {
            execFileSync(
              python,
              [
                'scorer.py',
                '--test',
                'mod_pretty_passk_validte.py',
                '--name',
                name,
                '--source',
                'mod.py',
                '--candidate',
                candidate ?? '.none',
                '--timeout',
                '30',
              ],
              { cwd: dir, stdio: 'pipe', env: { PATH: process.env.PATH } },
            );
            return 'passed';
          } catch (e) {
            return String((e as { stderr?: Buffer }).stderr ?? e);
          }
        };
        assert.equal(score('Symbol.pretty'), 'passed');
        // By name alone the first `pretty` (Expression's) is taken from the source and replaced: the old, wrong rule.
        assert.match(score('pretty'), /AssertionError: Symbol\.pretty: S\n/);
        // A raw candidate goes where the path says.
        await fs.writeFile(path.join(dir, 'cand.py'), 'def pretty(self):\n    return "S!"');
        assert.equal(score('Symbol.pretty', 'cand.py'), 'passed');
        assert.match(score('pretty', 'cand.py'), /Expression\.pretty was replaced/);
        // A path the file does not have falls back to the name's rule.
        assert.match(score('Other.pretty', 'cand.py'), /Expression\.pretty was replaced/);
        // The test file is put back after each run.
        assert.equal(await fs.readFile(path.join(dir, 'mod_pretty_passk_validte.py'), 'utf8'), TEST);
      } finally {
        await fs.rm(dir, { recursive: true, force: true });
      }
    },
  );

  test(
    "inside a project the test runs with no .git, as the platform's copy had none (put back " +
      "after, also after a run cut short), and with the image's variables given by --setenv",
    async (t) => {
      const python = await findPython('3.11');
      if (!python) return t.skip('no Python 3.11 here');
      const dir = await tempDir('codereval-scorer-git-');
      try {
        await fs.mkdir(path.join(dir, '.codereval'));
        await fs.writeFile(path.join(dir, '.codereval', 'scorer.py'), SCORER_SOURCE);
        execFileSync('git', ['init', '-q'], { cwd: dir });
        const check = [
          'import os, subprocess',
          'def f():',
          '    return 1',
          'if __name__ == "__main__":',
          '    assert not os.path.exists(".git")',
          '    r = subprocess.run(["git", "rev-parse", "--git-dir"], cwd="/home/travis/builds/repos/o---r", capture_output=True)',
          '    assert r.returncode == 128, r',
          '    assert os.environ.get("JAVA_HOME") == "/jdk", os.environ.get("JAVA_HOME")',
          '',
        ].join('\n');
        await fs.writeFile(path.join(dir, 'mod_f_passk_validte.py'), check);
        await fs.writeFile(path.join(dir, 'mod.py'), 'def f():\n    return 1\n');
        const score = (extra = ['--setenv', 'JAVA_HOME=/jdk']) =>
          execFileSync(
            python,
            [
              '.codereval/scorer.py',
              '--test',
              'mod_f_passk_validte.py',
              '--name',
              'f',
              '--source',
              'mod.py',
              '--candidate',
              '.none',
              '--timeout',
              '30',
              '--root-alias',
              '/home/travis/builds/repos/o---r',
              ...extra,
            ],
            { cwd: dir, stdio: 'pipe', env: { PATH: process.env.PATH, HOME: dir, GIT_CEILING_DIRECTORIES: path.dirname(dir) } },
          );
        assert.throws(() => score([]), /JAVA_HOME/);
        assert.throws(
          () => score(['--setenv', 'no value']),
          (e: { status?: number; stderr?: Buffer }) => e.status === 2 && /--setenv 'no value' is not NAME=VALUE/.test(String(e.stderr)),
        );
        score();
        assert.ok((await fs.stat(path.join(dir, '.git', 'HEAD'))).isFile(), '.git is back');
        // A run cut short left it aside: the next run puts it back first, and after.
        await fs.rename(path.join(dir, '.git'), path.join(dir, '.codereval-dot-git'));
        score();
        assert.ok((await fs.stat(path.join(dir, '.git', 'HEAD'))).isFile());
        await assert.rejects(fs.stat(path.join(dir, '.codereval-dot-git')));
      } finally {
        await fs.rm(dir, { recursive: true, force: true });
      }
    },
  );
});
