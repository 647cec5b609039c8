import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Gym } from '../../../src/episode/gym.ts';
import { workerPool } from '../../../src/pool.ts';
import { DockerSandboxFactory } from '../../../src/sandbox/docker/index.ts';
import { goldPatch } from '../../../src/scoring/gold.ts';
import type { Verdict } from '../../../src/scoring/verdict.ts';
import type { Task } from '../../../src/tasks/schema.ts';
import { builtinRegistry, makeGym } from '../../helpers.ts';
import { SKIP_WITHOUT_DATA, V2_DIR } from '../../envs/gitchameleon/data.ts';
import { GITCHAMELEON_TASK } from './gitchameleon_task.ts';
import { kubernetesSkipReason, testFactory } from './skip.ts';

const CODE_EQ = /^(\s*(?:if|elif|while|return)\b[^\n]*?) == /m;

/**
 * The gold solution with the `==` of its first condition turned into `!=`: a wrong patch
 * that still compiles, some tests passing, some failing; undefined when there is none.
 */
function wrongSolution(task: Task): Task | undefined {
  const files = Object.entries(task.solution?.files ?? {});
  const at = files.findIndex(([, content]) => CODE_EQ.test(String(content)));
  if (at < 0) return undefined;
  const mutated = files.map(([rel, content], i) => [rel, i === at ? String(content).replace(CODE_EQ, '$1 != ') : content] as const);
  return { ...task, solution: { files: Object.fromEntries(mutated) } };
}

/** What must be equal between two backends' verdicts on the same patch. */
function comparable(v: Verdict) {
  return {
    status: v.status,
    reward: v.reward,
    tests: v.tests.map((t) => `${t.name}: ${t.status}`).sort(),
    failToPass: v.failToPass,
    passToPass: v.passToPass,
    error: v.error?.code,
    exitCode: v.exitCode,
    timedOut: v.timedOut ?? false,
    notes: v.notes,
  };
}

type Case = { task: Task; patches: { label: string; patch: string }[] };

/**
 * The same tasks scored on docker and on kubernetes, the verdicts compared field by field:
 * the examples suite (gold, and a wrong patch or the untouched start state, each) and a
 * GitChameleon problem (gold, untouched). A difference is a backend bug, whichever side is right.
 */
describe('kubernetes verdicts equal docker verdicts on the same tasks', async () => {
  const skip = await kubernetesSkipReason();
  if (skip) {
    test(`skipped: ${skip}`, { skip }, () => {});
    return;
  }
  const cases: Case[] = [];
  const verdicts = new Map<string, { docker: Verdict; kubernetes: Verdict }>();
  const gyms: { cleanup: () => Promise<void> }[] = [];

  before(async () => {
    const suites = SKIP_WITHOUT_DATA ? builtinRegistry('examples') : builtinRegistry('examples', `gitchameleon=${V2_DIR}`);
    const tasks = await suites.tasks('examples');
    if (!SKIP_WITHOUT_DATA) tasks.push(await suites.task('gitchameleon', GITCHAMELEON_TASK));
    const docker = await makeGym({
      registry: suites,
      sandboxes: new DockerSandboxFactory({ serverId: `test-verdicts-${randomBytes(4).toString('hex')}`, poolSize: 0 }),
    });
    const kubernetes = await makeGym({ registry: suites, sandboxes: testFactory() });
    gyms.push(docker, kubernetes);
    // The patches are made once (on docker) and scored by both.
    // Gold and, within the time CI gives, one failing patch per task: a wrong one
    // where the gold has a condition to break, else the untouched start state.
    // A Maven run is the longest by far: the Java task gets the wrong patch only (some tests pass, some fail), and goes first.
    for (const task of tasks) {
      const wrong = task.suite === 'examples' ? wrongSolution(task) : undefined;
      const failing = wrong ? { label: 'wrong', patch: await goldPatch(wrong, docker.gym.sandboxes) } : { label: 'untouched', patch: '' };
      const patches =
        task.language === 'java' && wrong ? [failing] : [{ label: 'gold', patch: await goldPatch(task, docker.gym.sandboxes) }, failing];
      cases.push({ task, patches });
    }
    const runs = cases
      .flatMap((c) => c.patches.map((p) => ({ task: c.task, ...p })))
      .sort((a, b) => Number(b.task.language === 'java') - Number(a.task.language === 'java'));
    const score = (gym: Gym) => async (r: (typeof runs)[number]) => gym.score(r.task, r.patch);
    const [onDocker, onKubernetes] = await Promise.all([collect(runs, score(docker.gym)), collect(runs, score(kubernetes.gym))]);
    runs.forEach((r, i) => verdicts.set(`${r.task.suite}/${r.task.id} ${r.label}`, { docker: onDocker[i]!, kubernetes: onKubernetes[i]! }));
  });
  after(async () => {
    await Promise.all(gyms.map((g) => g.cleanup()));
  });

  test('every task and patch was scored on both', (t) => {
    assert.ok(cases.length >= 6, `${cases.length} tasks`);
    assert.equal(
      verdicts.size,
      cases.reduce((n, c) => n + c.patches.length, 0),
    );
    assert.ok([...verdicts.keys()].filter((k) => k.endsWith(' wrong')).length >= 3, 'wrong patches: at least three tasks');
    for (const [key, v] of verdicts)
      t.diagnostic(
        `${key}: docker ${v.docker.status} ${v.docker.durationMs} ms, kubernetes ${v.kubernetes.status} ${v.kubernetes.durationMs} ms`,
      );
  });

  test('the verdicts are the expected ones on docker (gold 1, untouched and wrong 0)', () => {
    for (const [key, { docker }] of verdicts) {
      assert.notEqual(docker.status, 'error', `${key}: ${docker.error?.code}: ${docker.error?.message}`);
      assert.equal(docker.reward, key.endsWith(' gold') ? 1 : 0, key);
    }
  });

  // One test per task, so a difference names its task.
  for (const name of [
    'examples/inventory-discount-bug',
    'examples/java-bracket-matcher',
    'examples/median-edge-cases',
    'examples/parse-duration',
    'examples/roman-numerals',
    'examples/semver-pinned',
    ...(SKIP_WITHOUT_DATA ? [] : [`gitchameleon/${GITCHAMELEON_TASK}`]),
  ]) {
    test(`${name}: kubernetes gives docker's verdict, field by field`, () => {
      const keys = [...verdicts.keys()].filter((k) => k.startsWith(`${name} `));
      assert.ok(keys.length >= 1, `${name} was scored`);
      for (const key of keys) {
        const { docker, kubernetes } = verdicts.get(key)!;
        assert.deepEqual(
          comparable(kubernetes),
          comparable(docker),
          `${key}: kubernetes ${kubernetes.status} (${kubernetes.error?.code ?? ''} ` +
            `${kubernetes.error?.message ?? ''}), docker ${docker.status}`,
        );
      }
    });
  }
});

/** Scores every run, three at a time, results in input order. */
async function collect<T>(runs: T[], score: (r: T) => Promise<Verdict>): Promise<Verdict[]> {
  const out: Verdict[] = new Array(runs.length);
  await workerPool(runs, 3, async (r, i) => {
    out[i] = await score(r);
  });
  return out;
}
