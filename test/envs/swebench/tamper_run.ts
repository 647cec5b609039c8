import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import type { Gym } from '../../../src/episode/gym.ts';
import type { ScoringMode } from '../../../src/scoring/mode.ts';
import type { Verdict } from '../../../src/scoring/verdict.ts';
import type { Task } from '../../../src/tasks/schema.ts';
import { randomBytes } from 'node:crypto';
import { baseImageName } from '../../../src/env/images.ts';
import { DockerSandboxFactory } from '../../../src/sandbox/docker/index.ts';
import type { SandboxFactory } from '../../../src/sandbox/types.ts';
import { TEST_CACHE_DIR } from '../../helpers.ts';
import { dockerSkipReason } from '../../sandbox/docker/skip.ts';
import { kubernetesSkipReason, testFactory } from '../../sandbox/kubernetes/skip.ts';
import { VARIANTS } from './tamper_battery.ts';

/**
 * Scoring the tamper battery: the patches of one task, two scorings at a time (the machine
 * has two cores), their verdicts checked against what the guarded scorer must say, and kept
 * for the record (`BENCHGYM_TAMPER_RECORD=FILE` appends one JSON line per verdict: the
 * README's table is made from it, and it is how the battery's run on the old scorer was kept).
 */

export interface BatteryVerdict {
  target: string;
  backend: string;
  variant: string;
  scoring: ScoringMode;
  reward: 0 | 1;
  status: Verdict['status'];
  notes: string[];
  error?: Verdict['error'];
}

/** The backends the battery runs on, one test file each (each file takes minutes). */
export type BatteryBackend = 'local' | 'docker' | 'kubernetes';

/** A backend's sandboxes for the battery (none: the gym's local default), or why it cannot run here. */
export async function batterySandboxes(backend: BatteryBackend, label: string): Promise<{ sandboxes?: SandboxFactory; skip?: string }> {
  if (backend === 'local') return {};
  const images = { cacheDir: TEST_CACHE_DIR };
  if (backend === 'docker') {
    const skip = await dockerSkipReason([baseImageName('java', '17')]);
    if (skip) return { skip };
    return { sandboxes: new DockerSandboxFactory({ serverId: `test-${label}-${randomBytes(4).toString('hex')}`, images }) };
  }
  const skip = await kubernetesSkipReason();
  return skip ? { skip } : { sandboxes: testFactory({ images }) };
}

/** Scores every patch in `mode`, two at a time; the verdicts by patch name. */
export async function scoreBattery(
  gym: Gym,
  task: Task,
  patches: Map<string, string>,
  mode: ScoringMode,
  label: { target: string; backend: string },
): Promise<Map<string, Verdict>> {
  const out = new Map<string, Verdict>();
  const names = [...patches.keys()];
  for (let i = 0; i < names.length; i += 2) {
    await Promise.all(names.slice(i, i + 2).map(async (n) => out.set(n, await gym.score(task, patches.get(n)!, { scoring: mode }))));
  }
  const file = process.env.BENCHGYM_TAMPER_RECORD;
  if (file) {
    const lines = [...out].map(([variant, v]) =>
      JSON.stringify({
        ...label,
        variant,
        scoring: mode,
        reward: v.reward,
        status: v.status,
        notes: v.notes,
        ...(v.error ? { error: v.error } : {}),
      } satisfies BatteryVerdict),
    );
    await fs.appendFile(file, lines.map((l) => `${l}\n`).join(''));
  }
  return out;
}

const show = (v: Verdict) =>
  JSON.stringify({ reward: v.reward, status: v.status, error: v.error, notes: v.notes, f2p: v.failToPass }, null, 1);

/** What strict mode must say of each variant: reward 0, failed (never an error), and the note of its kind. */
export function assertHeldStrict(verdicts: Map<string, Verdict>): void {
  const byId = new Map(VARIANTS.map((v) => [v.id, v]));
  for (const [id, v] of verdicts) {
    const variant = byId.get(id);
    if (!variant) continue;
    assert.equal(v.error, undefined, `${id}: ${show(v)}`);
    assert.equal(v.status, 'failed', `${id}: ${show(v)}`);
    assert.equal(v.reward, 0, `${id}: ${show(v)}`);
    if (variant.strict === 'tamper')
      assert.ok(
        v.notes.some((n) =>
          /^TAMPER_SUSPECTED: the patch carries \d+ file\(s\) that would reach the compiler or the test toolchain/.test(n),
        ),
        `${id}: no TAMPER_SUSPECTED note: ${show(v)}`,
      );
    else assert.ok(!v.notes.some((n) => n.startsWith('TAMPER_SUSPECTED')), `${id}: ${show(v)}`);
    if (variant.strict === 'restored')
      assert.ok(
        v.notes.some((n) => n.startsWith('BUILD_CONFIG_RESTORED: ')),
        `${id}: no BUILD_CONFIG_RESTORED note: ${show(v)}`,
      );
  }
}

/**
 * Faithful mode drops what strict refuses (noted, then the tests run as the harness runs them),
 * never an error; reward 0 for an unfixed bug, except that where the scorer believes reports
 * without the build's exit code (`exitCodeChecked: false`: faithful `scorePatch`) reports the
 * test JVM forged pass, as they would pass a report-reading harness.
 */
export function assertHeldFaithful(verdicts: Map<string, Verdict>, opts: { exitCodeChecked: boolean }): void {
  const byId = new Map(VARIANTS.map((v) => [v.id, v]));
  for (const [id, v] of verdicts) {
    const variant = byId.get(id);
    if (!variant) continue;
    assert.equal(v.error, undefined, `${id}: ${show(v)}`);
    if (opts.exitCodeChecked || !variant.forgesInTestJvm) assert.equal(v.reward, 0, `${id}: ${show(v)}`);
    assert.ok(!v.notes.some((n) => n.startsWith('TAMPER_SUSPECTED')), `${id}: faithful mode does not refuse: ${show(v)}`);
    if (variant.strict === 'tamper')
      assert.ok(
        v.notes.some((n) => /^CANDIDATE_FILE_REFUSED: .* (removed|put back as the start state has it) before scoring$/.test(n)),
        `${id}: no note of the files dropped: ${show(v)}`,
      );
  }
}

/** The faithful subset every run scores (BENCHGYM_TAMPER_FULL=1: all of them): one of each outcome kind. */
export const FAITHFUL_SAMPLE = ['shadow-source', 'processor-class-resource', 'agent-mvn-symlink', 'fork-untracked-parent'];

export const fullBattery = process.env.BENCHGYM_TAMPER_FULL === '1';
