/** "did you mean" for mistyped flags (every command) and command names. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILTINS } from '../../bin/builtins.ts';
import { cliCommands, main } from '../../src/cli/main.ts';
import { closest, editDistance, parseFlags } from '../../src/cli/options.ts';

async function capture(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  let stdout = '';
  let stderr = '';
  // The test runner's own messages (bytes) pass through: the CLI writes strings, and commands load while those flow.
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) =>
    typeof chunk === 'string' ? ((stdout += chunk), true) : out(chunk, ...rest)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) =>
    typeof chunk === 'string' ? ((stderr += chunk), true) : err(chunk, ...rest)) as typeof process.stderr.write;
  try {
    return { code: await main(argv, BUILTINS), stdout, stderr };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
}

test('closest: typos, swaps and unique prefixes; nothing for a word far from all', () => {
  assert.equal(editDistance('prot', 'port'), 1, 'a swap is one edit');
  assert.equal(closest('prot', ['port', 'host', 'token']), 'port');
  assert.equal(closest('concurency', ['concurrency', 'context']), 'concurrency');
  assert.equal(closest('agent-option', ['agent-options', 'agent']), 'agent-options');
  assert.equal(closest('valid', ['validate', 'view']), 'validate', 'a unique prefix');
  assert.equal(closest('frobnicate', ['serve', 'run', 'validate']), undefined);
  assert.equal(closest('x', ['serve', 'run']), undefined);
});

test("parseFlags names the unknown flag and the one it is a typo of; other errors stay node's", () => {
  const flags = { port: { type: 'string' }, host: { type: 'string' }, help: { type: 'boolean', short: 'h' } } as const;
  assert.throws(() => parseFlags(['--prot', '7000'], flags), {
    code: 'INVALID_ARGUMENT',
    message: /^unknown option --prot; did you mean --port\?/,
  });
  assert.throws(() => parseFlags(['--host=a', '--prot=7000'], flags), /unknown option --prot; did you mean --port\?/);
  assert.throws(
    () => parseFlags(['--nothing-like-it'], flags),
    (e: Error) => /unknown option --nothing-like-it/.test(e.message) && !/did you mean/.test(e.message),
  );
  assert.throws(() => parseFlags(['-x'], flags), /unknown option -x/);
  assert.throws(() => parseFlags(['--port'], flags), /--port/, 'a flag without its value');
  assert.equal(parseFlags(['--port', '1', '--', '--prot'], flags).values.port, '1', 'after --, nothing is a flag');
});

test('every command refuses an unknown flag by name, and suggests the flag a typo is close to', async () => {
  for (const command of cliCommands(BUILTINS)) {
    const r = await capture([command.name, '--zzz-no-such-flag']);
    assert.equal(r.code, 2, command.name);
    assert.match(r.stderr, new RegExp(`^benchgym ${command.name}: INVALID_ARGUMENT: unknown option --zzz-no-such-flag`, 'm'), command.name);
  }
  const typos: Array<[string, string, string]> = [
    ['serve', '--prot', '--port'],
    ['mcp', '--suiet', '--suite'],
    ['tasks', '--jsno', '--json'],
    ['validate', '--concurency', '--concurrency'],
    ['score', '--predictons', '--predictions'],
    ['shell', '--tokn', '--token'],
    ['run', '--agnet', '--agent'],
    ['run', '--rerun-error', '--rerun-errors'],
    ['report', '--bye', '--by'],
    ['images', '--froce', '--force'],
  ];
  for (const [name, typo, meant] of typos) {
    const r = await capture([name, typo, 'x']);
    assert.equal(r.code, 2, `${name} ${typo}`);
    assert.match(r.stderr, new RegExp(`unknown option ${typo}; did you mean ${meant}\\?`), `${name} ${typo}: ${r.stderr}`);
  }
});

test('a mistyped command name is answered with the command it is close to', async () => {
  const r = await capture(['serv', '--port', '7000']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^benchgym: unknown command 'serv'; did you mean 'serve'\?/);
  assert.match((await capture(['vaildate'])).stderr, /did you mean 'validate'\?/);
  const far = await capture(['frobnicate']);
  assert.match(far.stderr, /unknown command 'frobnicate'\n/);
  assert.doesNotMatch(far.stderr, /did you mean/);
});
