/**
 * The Java build guard's own cost inside real scorings (issue 33): `benchgym score`'s scoring of
 * each instance's gold patch (strict and faithful, one at a time), with the guard's two steps
 * timed where they run (`readStartState` before the patch, `enforce` after it) next to the whole
 * scoring. Whole scorings are dominated by Maven and, on a shared machine, by its load; the
 * guard's steps are what the change added, so they are the figure to read. Documented in
 * docs/BENCHMARKS.md ("SWE-bench-java: the build guard's cost").
 *
 *   BENCHGYM_MIRRORS=MIRRORS npx tsx bench/java_guard.ts --dataset DATA/swe-bench-java/google__gson_swe-bench-java_reconstructed.jsonl \
 *     [--cache DIR] [--tasks a,b] [--rounds N] [--sandbox local|docker]
 *
 * Prints a markdown table and writes bench/results/java_guard.json. Heavy (one Maven build per
 * scoring); not part of `npm run bench`.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { builtinSuites, localGym } from '../bin/builtins.ts';
import { DockerSandboxFactory } from '../src/sandbox/docker/index.ts';
import { JavaBuildGuard } from '../src/scoring/java_guard.ts';
import type { ScoringMode } from '../src/scoring/mode.ts';
import { SuiteRegistry } from '../src/tasks/registry.ts';

const { values } = parseArgs({
  options: {
    dataset: { type: 'string' },
    cache: { type: 'string' },
    tasks: { type: 'string' },
    rounds: { type: 'string', default: '1' },
    sandbox: { type: 'string', default: 'local' },
  },
});
const mirrors = process.env.BENCHGYM_MIRRORS;
if (!values.dataset || !mirrors) {
  console.error('usage: BENCHGYM_MIRRORS=DIR npx tsx bench/java_guard.ts --dataset FILE.jsonl [--cache DIR] [--tasks a,b] [--rounds N]');
  console.error('       [--sandbox local|docker]');
  process.exit(2);
}
if (values.sandbox !== 'local' && values.sandbox !== 'docker') {
  console.error(`--sandbox: local or docker, not '${values.sandbox}'`);
  process.exit(2);
}
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) {
  console.error(`--rounds: a positive integer, not '${values.rounds}'`);
  process.exit(2);
}

// The guard's steps, timed where the scorer calls them (one scoring at a time, so the last call is this scoring's).
const steps = { readStartState: [] as number[], enforce: [] as number[] };
for (const name of ['readStartState', 'enforce'] as const) {
  const original = JavaBuildGuard.prototype[name] as (...args: unknown[]) => Promise<void>;
  (JavaBuildGuard.prototype as unknown as Record<string, unknown>)[name] = async function (this: JavaBuildGuard, ...args: unknown[]) {
    const t0 = performance.now();
    try {
      return await original.apply(this, args);
    } finally {
      steps[name].push(performance.now() - t0);
    }
  };
}

const registry = new SuiteRegistry(builtinSuites({ reposDir: mirrors }));
registry.enable(`swe-bench-java=${values.dataset}`);
const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-bench-guard-'));
const cacheDir = values.cache ?? process.env.BENCHGYM_CACHE ?? path.join(os.tmpdir(), 'benchgym-bench-cache');
const docker = () => new DockerSandboxFactory({ serverId: `bench-guard-${process.pid}`, images: { cacheDir } });
const sandboxes = values.sandbox === 'docker' ? { sandboxes: docker() } : {};
const gym = localGym({ registry, dataDir, cacheDir, ...sandboxes });

interface Row {
  task: string;
  mode: ScoringMode;
  round: number;
  reward: number;
  scoringMs: number;
  readStartStateMs: number;
  enforceMs: number;
}
const rows: Row[] = [];
try {
  const all = await gym.registry.tasks('swe-bench-java');
  const wanted = values.tasks ? new Set(values.tasks.split(',')) : undefined;
  for (const task of all.filter((t) => !wanted || wanted.has(t.id))) {
    const gold = task.solution?.patch;
    if (!gold) throw new Error(`${task.id} has no gold patch`);
    await gym.sandboxes.prepare(task);
    for (let round = 1; round <= rounds; round++) {
      for (const mode of ['strict', 'faithful'] as const) {
        const t0 = performance.now();
        const v = await gym.score(task, gold, { scoring: mode });
        const scoringMs = performance.now() - t0;
        const row = {
          task: task.id,
          mode,
          round,
          reward: v.reward,
          scoringMs,
          readStartStateMs: steps.readStartState.at(-1)!,
          enforceMs: steps.enforce.at(-1)!,
        };
        rows.push(row);
        const guard = `guard ${row.readStartStateMs.toFixed(0)} + ${row.enforceMs.toFixed(0)} ms`;
        console.error(
          `${task.id} ${mode} #${round}: reward ${v.reward}${v.error ? ` (${v.error.code})` : ''}, ${(scoringMs / 1000).toFixed(1)} s; ${guard}`,
        );
      }
    }
  }
} finally {
  await gym.close();
  await fs.rm(dataDir, { recursive: true, force: true });
}

const out = path.join(import.meta.dirname, 'results', 'java_guard.json');
await fs.mkdir(path.dirname(out), { recursive: true });
const record = { date: new Date().toISOString(), sandbox: values.sandbox, load: os.loadavg(), rows };
await fs.writeFile(out, `${JSON.stringify(record, null, 2)}\n`);
console.log('| instance | mode | reward | scoring s | guard: start state ms | guard: enforce ms | guard share |');
console.log('|---|---|---:|---:|---:|---:|---:|');
for (const r of rows) {
  const share = ((r.readStartStateMs + r.enforceMs) / r.scoringMs) * 100;
  const cells = [
    r.task,
    r.mode,
    r.reward,
    (r.scoringMs / 1000).toFixed(1),
    r.readStartStateMs.toFixed(0),
    r.enforceMs.toFixed(0),
    `${share.toFixed(2)}%`,
  ];
  console.log(`| ${cells.join(' | ')} |`);
}
