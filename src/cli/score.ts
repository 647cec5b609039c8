import path from 'node:path';
import { Gym, type GymOptions } from '../episode/gym.ts';
import { GymError } from '../errors.ts';
import { DockerSandboxFactory } from '../sandbox/docker/index.ts';
import { builtinSuites, SuiteRegistry } from '../tasks/registry.ts';
import { EXTRACTION_MODES, type ExtractionMode } from '../../envs/gitchameleon/extract.ts';
import { readPredictions, replayPredictions, summarize, type ReplayResult } from '../../envs/gitchameleon/replay.ts';
import { intFlag, parseFlags } from './options.ts';
import { scoreCli as scoreCoderEval } from '../../envs/codereval/replay.ts';
import { scoreCli as scoreSwebench } from '../../envs/swebench/replay.ts';
import { existsSync } from 'node:fs';
import { formatModeDifferences, replayScorer, type ReplayScoring } from '../scoring/compare.ts';
import { scoringFlag } from '../scoring/mode.ts';

export const SCORE_USAGE = `  benchgym score --suite gitchameleon --dataset PATH --predictions FILE [--mode extract|authors-sanitizer]
                 [--tasks a,b] [--concurrency N] [--json] [--scoring faithful|strict|both]
                                                      score published model outputs; agreement with their verdicts
  benchgym score --suite codereval --dataset PATH --predictions FILE_out.jsonl [--tasks a,b] [--concurrency N] [--json]
                 [--scoring faithful|strict|both]     CoderEval outputs: agreement with is_pass, Pass@k per level
                                                      (--scoring: faithful by default, the benchmark's harness; both:
                                                      faithful, and strict on its passes, listing where they differ)
  benchgym score --suite swe-bench-java --dataset FILE.jsonl --predictions all_preds.jsonl [--repos-dir DIR] [--out DIR]
                 [--tasks a,b] [--concurrency N] [--json]
                                                      SWE-bench predictions (instance_id, model_patch): OUT/results.json
                                                      (resolved ids) and OUT/logs/<instance_id>/ (default OUT ./swebench-run)`;

/**
 * `benchgym score`: replays a file of model outputs in the GitChameleon authors' format
 * (example_id, answer, optional passed). Each answer becomes sample_<id>.py, is scored
 * like a submission (hidden tests in a fresh sandbox) and, where the file has the
 * published verdict, compared with it. Problems whose env cannot exist here are counted
 * apart, never as failures.
 */
export async function score(args: string[]): Promise<number> {
  const { values } = parseFlags(args, {
    suite: { type: 'string' },
    dataset: { type: 'string' },
    predictions: { type: 'string' },
    mode: { type: 'string' },
    tasks: { type: 'string' },
    concurrency: { type: 'string' },
    json: { type: 'boolean' },
    'data-dir': { type: 'string' },
    'cache-dir': { type: 'string' },
    sandbox: { type: 'string' },
    isolation: { type: 'string' },
    'server-id': { type: 'string' },
    'repos-dir': { type: 'string' },
    out: { type: 'string' },
    scoring: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  const [suiteId, suitePath] = (values.suite ?? 'gitchameleon').split(/=(.*)/s) as [string, string | undefined];
  const dataset = values.dataset ?? suitePath;
  if (!dataset) throw new GymError('INVALID_ARGUMENT', `missing --dataset (the ${suiteId} dataset directory)`);
  const expected = suiteId === 'codereval' ? '_id, generate_results[{generate_code, is_pass}]' : suiteId === 'swe-bench-java' ? 'instance_id, model_patch' : 'example_id, answer[, passed]';
  if (!values.predictions) throw new GymError('INVALID_ARGUMENT', `missing --predictions (a JSON Lines file: ${expected})`);
  const reposDir = values['repos-dir'];
  if (reposDir !== undefined && !existsSync(reposDir)) throw new GymError('INVALID_ARGUMENT', `invalid --repos-dir: ${reposDir} does not exist`);
  const mode = (values.mode ?? 'extract') as ExtractionMode;
  if (!EXTRACTION_MODES.includes(mode)) throw new GymError('INVALID_ARGUMENT', `invalid --mode: '${values.mode}' (${EXTRACTION_MODES.join(' or ')})`);
  const isolation = values.isolation ?? 'auto';
  if (!['auto', 'bwrap', 'none'].includes(isolation)) throw new GymError('INVALID_ARGUMENT', `invalid --isolation: '${isolation}' (auto, bwrap or none)`);
  const scoring: ReplayScoring = scoringFlag(values.scoring, 'faithful', ['both'] as const);
  const backend = values.sandbox ?? 'local';
  if (backend !== 'local' && backend !== 'docker') throw new GymError('INVALID_ARGUMENT', `invalid --sandbox: '${backend}' (local or docker)`);

  const registry = new SuiteRegistry(builtinSuites({ reposDir }));
  registry.enable(`${suiteId}=${path.resolve(dataset)}`);
  const cacheDir = values['cache-dir'] ?? process.env.BENCHGYM_CACHE;
  // SWE-bench's own scorer takes the gym's mode (`both` replays it faithfully: its Maven runs have no strict-only check).
  const opts: GymOptions = { registry, dataDir: values['data-dir'], cacheDir, isolation: isolation as GymOptions['isolation'], scoring: scoring === 'strict' ? 'strict' : 'faithful' };
  if (backend === 'docker') opts.sandboxes = new DockerSandboxFactory({ serverId: values['server-id'] ?? 'default', poolSize: 0, maxContainers: 32, ...(cacheDir ? { images: { cacheDir } } : {}) });
  const gym = new Gym(opts);
  const scoreOne = replayScorer((task, patch, mode) => gym.score(task, patch, { scoring: mode }), scoring);
  try {
    if (suiteId === 'swe-bench-java') {
      const concurrency = intFlag(values.concurrency, 'concurrency', 2, 1, 64);
      return await scoreSwebench(gym, suiteId, { predictions: path.resolve(values.predictions), out: path.resolve(values.out ?? 'swebench-run'), tasks: values.tasks, concurrency, json: values.json });
    }
    if (suiteId === 'codereval') {
      const concurrency = intFlag(values.concurrency, 'concurrency', 2, 1, 64);
      return await scoreCoderEval(gym, suiteId, { predictions: path.resolve(values.predictions), tasks: values.tasks, concurrency, json: values.json, dataset: path.resolve(dataset), score: scoreOne });
    }
    const all = await registry.tasks(suiteId);
    if (!all.every((t) => t.metadata.form === 'v1' || t.metadata.form === 'v2')) {
      throw new GymError('INVALID_ARGUMENT', `score replays GitChameleon predictions; suite '${suiteId}' is not a GitChameleon suite`);
    }
    let predictions = await readPredictions(path.resolve(values.predictions));
    if (values.tasks) {
      const wanted = new Set(values.tasks.split(',').map((s) => s.trim()).filter(Boolean));
      const unknown = [...wanted].filter((id) => !all.some((t) => t.id === id));
      if (unknown.length) throw new GymError('TASK_NOT_FOUND', `no task ${unknown.map((u) => `'${u}'`).join(', ')} in suite '${suiteId}'`);
      predictions = predictions.filter((p) => wanted.has(p.taskId));
    }
    const concurrency = intFlag(values.concurrency, 'concurrency', 2, 1, 64);
    const line = (r: ReplayResult) =>
      `${r.ours.padEnd(11)} ${r.taskId}${r.theirs ? ` (published: ${r.theirs}${r.agree === false ? ', DISAGREE' : ''})` : ''} ${(r.durationMs / 1000).toFixed(1)} s${r.ours === 'passed' ? '' : `: ${r.reason}`}${r.strict ? `; strict: ${r.strict.status}${r.strict.status === 'passed' ? '' : ` (${r.strict.reason})`}` : ''}\n`;
    const results = await replayPredictions(new Map(all.map((t) => [t.id, t])), predictions, scoreOne, {
      mode,
      concurrency,
      onResult: (r) => !values.json && process.stderr.write(line(r)),
    });
    const summary = summarize(results);
    if (values.json) {
      process.stdout.write(JSON.stringify({ suite: suiteId, dataset: path.resolve(dataset), predictions: path.resolve(values.predictions), mode, scoring, summary, results }, null, 2) + '\n');
    } else {
      const out: string[] = [];
      const rate = (n: number, d: number) => (d ? `${((100 * n) / d).toFixed(1)}%` : 'n/a');
      const decided = summary.passed + summary.failed;
      out.push(`\n${suiteId}: ${summary.rows} predictions (mode ${mode}): ${summary.passed} passed, ${summary.failed} failed (${rate(summary.passed, decided)} of ${decided} scored); ${summary.unavailable} unavailable here, ${summary.errors} errors; scoring ${scoring}`);
      if (summary.compared) {
        out.push(`agreement with the published verdicts: ${summary.agreed}/${summary.compared} (${rate(summary.agreed, summary.compared)}); published ${summary.theirPassed} passed, ours ${summary.ourPassedOfCompared} on the same rows`);
        const disagreements = results.filter((r) => r.agree === false);
        for (const r of disagreements) out.push(`  DISAGREE ${r.taskId} (line ${r.line}): ours ${r.ours}, theirs ${r.theirs}: ${r.reason}`);
      }
      for (const r of results.filter((x) => x.ours === 'unavailable')) out.push(`  ENV_UNAVAILABLE ${r.taskId}: ${r.reason}`);
      for (const r of results.filter((x) => x.ours === 'error')) out.push(`  ERROR ${r.taskId}: ${r.reason}`);
      if (scoring === 'both') out.push(...formatModeDifferences(results.map((r) => ({ id: r.taskId, ours: r.ours, theirs: r.theirs, strict: r.strict }))));
      process.stdout.write(out.join('\n') + '\n');
    }
    return summary.errors > 0 ? 1 : 0;
  } finally {
    await gym.close();
  }
}
