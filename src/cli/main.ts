import { VERSION } from '../version.ts';
import { Gym, type GymOptions } from '../episode/gym.ts';
import path from 'node:path';
import { GymError, toGymError } from '../errors.ts';
import { startHttpServer } from '../server/http.ts';
import { runStdioServer } from '../server/stdio.ts';
import { wsGymExtension } from '../server/ws_gym.ts';
import { wsMcpExtension } from '../server/ws_mcp.ts';
import { terminalExtension } from '../server/pty.ts';
import { validateTasks, type TaskValidation } from '../scoring/validate.ts';
import { builtinSuites, SuiteRegistry } from '../tasks/registry.ts';
import { existsSync } from 'node:fs';
import { DockerSandboxFactory } from '../sandbox/docker/index.ts';
import { dockerClient } from '../sandbox/docker/client.ts';
import { buildBaseImage, type BaseImageSpec } from '../env/baseImages.ts';
import { BASE_IMAGES, baseImageName } from '../env/images.ts';
import { intFlag, parseFlags } from './options.ts';
import { onShutdownSignals } from './shutdown.ts';
import { SESSION_DEFAULTS } from '../server/sessions.ts';
import { readManifest } from '../runner/manifest.ts';
import { runExperiment } from '../runner/runner.ts';
import { streamProgress } from '../runner/progress.ts';
import { writeReport } from '../runner/report.ts';
import { agentUnderTest, goldOptions } from '../runner/agents.ts';
import { shell } from './shell.ts';
import { score, SCORE_USAGE } from './score.ts';
import { buildTasksCmd, BUILD_TASKS_USAGE } from './build_tasks.ts';
import { scoringFlag } from '../scoring/mode.ts';

const USAGE = `benchgym: a gym server for code benchmarks

Usage:
  benchgym --version                                  print the version
  benchgym serve [--host 127.0.0.1] [--port 7420] [--sandbox local|docker] [--suite ID[=PATH]]... [--token T]
                 [--allow-origin NAME]... [--allow-host NAME]... [--session-idle S] [--max-sessions N] [--session-rate N]
  benchgym mcp [--suite ID[=PATH]]...                 MCP over stdio (for Claude Desktop / Claude Code)
  benchgym tasks [--suite ID[=PATH]]... [--json]      list the tasks of the served suites
  benchgym validate --suite ID[=PATH] [--dataset PATH] [--tasks a,b] [--concurrency N] [--json]
                                                      gold passes, start state fails, for every task
${SCORE_USAGE}
${BUILD_TASKS_USAGE}
  benchgym shell EPISODE_ID|TASK_ID [--url http://127.0.0.1:7420] [--token T] [--suite ID]
                                                      a terminal into an episode on a running server
                                                      (a task id starts an episode first; Ctrl-] detaches)
  benchgym run --suite ID[=PATH] [--dataset PATH] --agent NAME --model M [--base-url URL] --out DIR
               [--samples n] [--temperature t] [--concurrency c] [--tasks a,b] [--max-steps N]
               [--time-limit S] [--max-tokens N] [--pricing IN,OUT] [--retries N] [--agent-options JSON]
               [--gold] [--resume] [--sandbox local|docker] [--context NAME] [--prompt-variant NAME]
                                                      an agent over a suite: DIR/run.json, DIR/results.jsonl,
                                                      DIR/trajectories/ (--resume continues DIR)
  benchgym report DIR [DIR...] [--out PATH] [--by key1,key2]
                                                      report.md and report.html (pass@k, CIs, breakdowns,
                                                      comparisons of several runs)

Common options:
  --data-dir DIR     trajectories, scoring logs and sandboxes (default $BENCHGYM_HOME or ~/.cache/benchgym)
  --cache-dir DIR    built envs: venvs and the Maven repository (default $BENCHGYM_CACHE or the data dir)
  --repos-dir DIR    local git mirrors of repositories (bare or not: owner/name, owner__name, owner+name, ...) for
                     repository suites (swe-bench-java); else they are cloned from GitHub
  --isolation MODE   auto | bwrap | none: bubblewrap for the local sandbox (default auto)
  --scoring MODE     strict | faithful (serve, mcp, validate, run; default strict): strict turns each known
                     scoring trick into reward 0 with a TAMPER_SUSPECTED note, faithful is the benchmark's
                     own harness (docs/ARCHITECTURE.md#scoring-modes)
  --sandbox docker   one hardened container per episode; with --pool N (ready containers per
                     hot image, default 1), --max-containers N (default 32), --server-id ID,
                     --exact-python (refuse the nearest Python base image)
  benchgym images base [--python 3.11,3.9] [--java 17] [--all] [--from debootstrap|registry] [--force]
  benchgym images list                                base images present in the Docker engine
`;

const COMMON = {
  suite: { type: 'string', multiple: true },
  'data-dir': { type: 'string' },
  'cache-dir': { type: 'string' },
  sandbox: { type: 'string' },
  isolation: { type: 'string' },
  'server-id': { type: 'string' },
  pool: { type: 'string' },
  'max-containers': { type: 'string' },
  'exact-python': { type: 'boolean' },
  'repos-dir': { type: 'string' },
  scoring: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

interface CommonValues {
  suite?: string[];
  'data-dir'?: string;
  'cache-dir'?: string;
  sandbox?: string;
  isolation?: string;
  'server-id'?: string;
  pool?: string;
  'max-containers'?: string;
  'exact-python'?: boolean;
  'repos-dir'?: string;
  scoring?: string;
}

function gymFrom(values: CommonValues): Gym {
  const backend = values.sandbox ?? 'local';
  if (backend !== 'local' && backend !== 'docker') throw new GymError('INVALID_ARGUMENT', `invalid --sandbox: '${backend}' (local or docker)`);
  const isolation = values.isolation ?? 'auto';
  if (!['auto', 'bwrap', 'none'].includes(isolation)) throw new GymError('INVALID_ARGUMENT', `invalid --isolation: '${isolation}' (auto, bwrap or none)`);
  const reposDir = values['repos-dir'];
  if (reposDir !== undefined && !existsSync(reposDir)) throw new GymError('INVALID_ARGUMENT', `invalid --repos-dir: ${reposDir} does not exist`);
  const registry = new SuiteRegistry(builtinSuites({ reposDir }));
  for (const spec of values.suite?.length ? values.suite : ['examples']) registry.enable(spec);
  const cacheDir = values['cache-dir'] ?? process.env.BENCHGYM_CACHE;
  const opts: GymOptions = { registry, dataDir: values['data-dir'], cacheDir, isolation: isolation as GymOptions['isolation'], scoring: scoringFlag(values.scoring, 'strict') };
  if (backend === 'docker') {
    opts.sandboxes = new DockerSandboxFactory({
      serverId: values['server-id'] ?? 'default',
      poolSize: intFlag(values.pool, 'pool', 1, 0, 64),
      maxContainers: intFlag(values['max-containers'], 'max-containers', 32, 1, 4096),
      images: { exactPython: values['exact-python'] ?? false, ...(cacheDir ? { cacheDir } : {}) },
    });
  }
  return new Gym(opts);
}

/** Stops on SIGINT / SIGTERM within SHUTDOWN_DEADLINE_MS, even when something hangs (shutdown.ts). */
function onSignals(stop: () => Promise<void>): void {
  onShutdownSignals(stop);
}

async function serve(args: string[]): Promise<number> {
  const { values } = parseFlags(args, {
    ...COMMON,
    host: { type: 'string' },
    port: { type: 'string' },
    token: { type: 'string' },
    'allow-origin': { type: 'string', multiple: true },
    'allow-host': { type: 'string', multiple: true },
    'session-idle': { type: 'string' },
    'max-sessions': { type: 'string' },
    'session-rate': { type: 'string' },
  });
  const sessions = {
    sessionIdleMs: intFlag(values['session-idle'], 'session-idle', SESSION_DEFAULTS.idleMs / 1000, 1, 7 * 24 * 3600) * 1000,
    maxSessions: intFlag(values['max-sessions'], 'max-sessions', SESSION_DEFAULTS.max, 1, 100_000),
    sessionsPerSecond: intFlag(values['session-rate'], 'session-rate', SESSION_DEFAULTS.newPerSecond, 1, 100_000),
  };
  const gym = gymFrom(values);
  // A missing Docker daemon is reported now and on every call; the server stays up.
  await gym.sandboxes.init?.().catch((err) => process.stderr.write(`benchgym: ${toGymError(err).message}\n`));
  const server = await startHttpServer(gym, {
    host: values.host ?? '127.0.0.1',
    port: intFlag(values.port, 'port', 7420, 0, 65535),
    token: values.token ?? process.env.BENCHGYM_TOKEN,
    allowedOrigins: values['allow-origin'],
    allowedHosts: values['allow-host'],
    ...sessions,
    extensions: [wsGymExtension(), wsMcpExtension(sessions), terminalExtension()],
  });
  const suites = await gym.registry.list();
  const ws = server.url.replace(/^http/, 'ws');
  process.stderr.write(
    `benchgym serving ${suites.map((s) => `${s.id} (${s.taskCount} tasks)`).join(', ')} with the ${gym.sandboxes.backend} sandbox\n` +
      `  MCP (Streamable HTTP): ${server.url}/mcp\n  one episode:           ${server.url}/episodes/<episode_id>/mcp\n` +
      `  MCP (WebSocket):       ${ws}/mcp/ws\n  gym (WebSocket):       ${ws}/ws\n` +
      `  terminal (browser):    ${server.url}/episodes/<episode_id>/terminal\n`,
  );
  onSignals(async () => {
    await server.close();
    await gym.close();
  });
  await new Promise(() => {});
  return 0;
}

async function mcp(args: string[]): Promise<number> {
  const { values } = parseFlags(args, COMMON);
  const gym = gymFrom(values);
  onSignals(() => gym.close());
  await runStdioServer(gym);
  await gym.close();
  return 0;
}

async function tasks(args: string[]): Promise<number> {
  const { values } = parseFlags(args, { ...COMMON, json: { type: 'boolean' } });
  const gym = gymFrom(values);
  try {
    const out = [];
    for (const suite of gym.registry.suiteIds()) {
      for (const t of await gym.registry.tasks(suite)) out.push({ suite, id: t.id, title: t.title ?? t.id, language: t.language, kind: t.kind });
    }
    if (values.json) process.stdout.write(JSON.stringify(out, null, 2) + '\n');
    else for (const t of out) process.stdout.write(`${t.suite}/${t.id}\t${t.language}\t${t.kind}\t${t.title}\n`);
    return 0;
  } finally {
    await gym.close();
  }
}

async function validate(args: string[]): Promise<number> {
  const { values } = parseFlags(args, { ...COMMON, dataset: { type: 'string' }, tasks: { type: 'string' }, concurrency: { type: 'string' }, json: { type: 'boolean' } });
  if (!values.suite?.length) throw new GymError('INVALID_ARGUMENT', "missing --suite (e.g. --suite examples)");
  if (values.dataset) values.suite = [`${values.suite[0]!.split('=')[0]}=${values.dataset}`];
  const gym = gymFrom(values);
  try {
    const suite = gym.registry.suiteIds()[0]!;
    let list = await gym.registry.tasks(suite);
    if (values.tasks) {
      const wanted = values.tasks.split(',').map((s) => s.trim()).filter(Boolean);
      const unknown = wanted.filter((id) => !list.some((t) => t.id === id));
      if (unknown.length) throw new GymError('TASK_NOT_FOUND', `no task ${unknown.map((u) => `'${u}'`).join(', ')} in suite '${suite}'`);
      list = list.filter((t) => wanted.includes(t.id));
    }
    const concurrency = intFlag(values.concurrency, 'concurrency', 2, 1, 64);
    const results = await validateTasks(gym, list, concurrency, (v) => {
      // Progress on stderr in both modes: a long --json run shows how far it is.
      process.stderr.write(`${v.status.padEnd(11)} ${v.taskId} (${(v.durationMs / 1000).toFixed(1)} s)${v.reasons.length ? `: ${v.reasons.join('; ')}` : ''}\n`);
    });
    const by = (s: TaskValidation['status']) => results.filter((r) => r.status === s);
    if (values.json) process.stdout.write(JSON.stringify({ suite, results }, null, 2) + '\n');
    else {
      process.stdout.write(`\n${suite}: ${by('valid').length} valid, ${by('invalid').length} invalid, ${by('error').length} errors, ${by('unavailable').length} unavailable here (of ${results.length})\n`);
      for (const r of by('unavailable')) process.stdout.write(`  ENV_UNAVAILABLE ${r.taskId}: ${r.reasons.join('; ')}\n`);
    }
    return by('invalid').length + by('error').length > 0 ? 1 : 0;
  } finally {
    await gym.close();
  }
}

async function images(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, { python: { type: 'string' }, java: { type: 'string' }, from: { type: 'string' }, force: { type: 'boolean' }, all: { type: 'boolean' } });
  const sub = positionals[0] ?? 'list';
  const docker = dockerClient();
  if (sub === 'list') {
    for (const kind of ['python', 'java'] as const) {
      for (const version of Object.keys(BASE_IMAGES[kind])) {
        const tag = baseImageName(kind, version);
        const info = await docker.getImage(tag).inspect().catch(() => null);
        process.stdout.write(`${tag}\t${info ? `${Math.round(info.Size / 1e6)} MB` : 'missing'}\n`);
      }
    }
    return 0;
  }
  if (sub !== 'base') throw new GymError('INVALID_ARGUMENT', `unknown images command '${sub}' (base or list)`);
  const from = values.from ?? 'debootstrap';
  if (from !== 'debootstrap' && from !== 'registry') throw new GymError('INVALID_ARGUMENT', `invalid --from: '${from}' (debootstrap or registry)`);
  const specs: BaseImageSpec[] = [];
  const pythons = values.all ? Object.keys(BASE_IMAGES.python) : (values.python ?? (values.java ? '' : '3.11')).split(',').filter(Boolean);
  const javas = values.all ? Object.keys(BASE_IMAGES.java) : (values.java ?? (values.python ? '' : '17')).split(',').filter(Boolean);
  for (const version of pythons) specs.push({ kind: 'python', version });
  for (const version of javas) specs.push({ kind: 'java', version });
  for (const spec of specs) {
    const t0 = Date.now();
    const { tag, built } = await buildBaseImage(docker, spec, { from, force: values.force, onLine: (l) => process.stderr.write(`  ${l}\n`) });
    process.stdout.write(`${tag}\t${built ? `built in ${((Date.now() - t0) / 1000).toFixed(0)} s` : 'present'}\n`);
  }
  return 0;
}

function numberFlag(value: string | undefined, name: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max) throw new GymError('INVALID_ARGUMENT', `invalid --${name}: '${value}' (a number from ${min} to ${max})`);
  return n;
}

function listFlag(value: string | undefined): string[] | undefined {
  const list = value?.split(',').map((s) => s.trim()).filter(Boolean);
  return list?.length ? list : undefined;
}

/** An option given on the command line wins; on --resume one left out comes from run.json; else the default. */
function pick<T>(given: T | undefined, previous: T | null | undefined, fallback: T): T {
  if (given !== undefined) return given;
  if (previous !== undefined && previous !== null) return previous;
  return fallback;
}

async function runCmd(args: string[]): Promise<number> {
  const { values } = parseFlags(args, {
    ...COMMON,
    dataset: { type: 'string' },
    agent: { type: 'string' },
    model: { type: 'string' },
    'base-url': { type: 'string' },
    samples: { type: 'string' },
    temperature: { type: 'string' },
    concurrency: { type: 'string' },
    tasks: { type: 'string' },
    'max-steps': { type: 'string' },
    'time-limit': { type: 'string' },
    'max-tokens': { type: 'string' },
    pricing: { type: 'string' },
    retries: { type: 'string' },
    'agent-options': { type: 'string' },
    gold: { type: 'boolean' },
    out: { type: 'string' },
    resume: { type: 'boolean' },
    context: { type: 'string' },
    'prompt-variant': { type: 'string' },
  });
  if (!values.out) throw new GymError('INVALID_ARGUMENT', 'missing --out DIR (the run directory)');
  const outDir = path.resolve(values.out);
  const previous = values.resume ? await readManifest(outDir) : undefined;
  const prev = previous?.options;

  const suiteSpec = values.suite?.[0];
  const suite = suiteSpec?.split('=')[0] ?? previous?.suite;
  if (!suite) throw new GymError('INVALID_ARGUMENT', 'missing --suite (e.g. --suite examples)');
  const givenDataset = values.dataset ?? (suiteSpec?.includes('=') ? suiteSpec.slice(suiteSpec.indexOf('=') + 1) : undefined);
  const dataset = pick(givenDataset !== undefined ? path.resolve(givenDataset) : undefined, prev?.dataset as string | null | undefined, null);
  const agentName = values.agent ?? previous?.agent;
  if (!agentName) throw new GymError('INVALID_ARGUMENT', 'missing --agent NAME (e.g. --agent swe-agent)');
  const model = values.model ?? previous?.model ?? (agentName === 'replay' ? 'none' : undefined);
  if (!model) throw new GymError('INVALID_ARGUMENT', `missing --model (the model name the '${agentName}' agent calls)`);
  let givenAgentOptions: Record<string, unknown> | undefined;
  if (values['agent-options'] !== undefined) {
    try {
      givenAgentOptions = JSON.parse(values['agent-options']) as Record<string, unknown>;
    } catch (err) {
      throw new GymError('INVALID_ARGUMENT', `invalid --agent-options: ${(err as Error).message} (a JSON object)`);
    }
    if (!givenAgentOptions || typeof givenAgentOptions !== 'object' || Array.isArray(givenAgentOptions)) throw new GymError('INVALID_ARGUMENT', 'invalid --agent-options: a JSON object');
  }
  const agentOptions = pick(givenAgentOptions, prev?.agentOptions as Record<string, unknown> | undefined, {});
  const gold = pick(values.gold, prev?.gold as boolean | undefined, false);
  const sandbox = pick(values.sandbox, prev?.sandbox as string | undefined, 'local');
  // A run recorded before scoring modes existed was scored as faithful is now; it resumes so.
  const legacyRun = prev !== undefined && prev !== null && !('scoring' in prev);
  const scoring = legacyRun ? scoringFlag(values.scoring, 'faithful') : scoringFlag(values.scoring ?? (prev?.scoring as string | undefined), 'strict');
  const samples = pick(values.samples !== undefined ? intFlag(values.samples, 'samples', 1, 1, 1000) : undefined, prev?.samples, 1);
  const temperature = pick(numberFlag(values.temperature, 'temperature', 0, 2), prev?.temperature, null);
  const maxSteps = pick(values['max-steps'] !== undefined ? intFlag(values['max-steps'], 'max-steps', 250, 1, 100_000) : undefined, prev?.maxSteps, null);
  const timeLimitMs = pick(values['time-limit'] !== undefined ? intFlag(values['time-limit'], 'time-limit', 7200, 1, 7 * 24 * 3600) * 1000 : undefined, prev?.timeLimitMs, null);
  const maxTokens = pick(values['max-tokens'] !== undefined ? intFlag(values['max-tokens'], 'max-tokens', 4096, 1, 10_000_000) : undefined, prev?.maxTokens, null);
  let givenPricing: { prompt: number; completion: number } | undefined;
  if (values.pricing !== undefined) {
    const [a, b] = values.pricing.split(',');
    const promptPrice = numberFlag(a, 'pricing', 0, 1e6);
    const completionPrice = numberFlag(b, 'pricing', 0, 1e6);
    if (promptPrice === undefined || completionPrice === undefined) throw new GymError('INVALID_ARGUMENT', `invalid --pricing: '${values.pricing}' (USD per 1M prompt and completion tokens, e.g. 0.15,0.60)`);
    givenPricing = { prompt: promptPrice, completion: completionPrice };
  }
  const pricing = pick(givenPricing, prev?.pricing, null);
  const baseURL = pick(values['base-url'], prev?.baseURL, null);
  const taskIds = pick(listFlag(values.tasks), prev?.tasks, null);
  const context = pick(values.context, prev?.context as string | undefined, null);
  const promptVariant = pick(values['prompt-variant'], prev?.promptVariant as string | undefined, null);
  const concurrency = intFlag(values.concurrency, 'concurrency', previous?.settings?.concurrency ?? 2, 1, 64);
  const retries = intFlag(values.retries, 'retries', previous?.settings?.retries ?? 2, 0, 20);

  const agent = await agentUnderTest(agentName, agentOptions, gold);
  const gym = gymFrom({ ...values, sandbox, scoring, suite: [dataset ? `${suite}=${dataset}` : suite] });
  const stop = new AbortController();
  let interrupted = false;
  const onSignal = () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    process.stderr.write('\nbenchgym run: stopping (episodes in flight are not recorded; --resume runs them again); Ctrl-C again to quit at once\n');
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    await gym.sandboxes.init?.();
    if (gold) {
      const all = await gym.registry.tasks(suite);
      for (const t of taskIds ? all.filter((x) => taskIds.includes(x.id)) : all) goldOptions(t);
    }
    const outcome = await runExperiment({
      gym,
      outDir,
      suite,
      agent,
      model: {
        model,
        ...(baseURL ? { baseURL } : {}),
        ...(temperature !== null ? { temperature } : {}),
        ...(maxTokens !== null ? { maxTokens } : {}),
        ...(pricing ? { pricing } : {}),
        ...(process.env.OPENAI_API_KEY ?? process.env.BENCHGYM_API_KEY ? { apiKey: process.env.OPENAI_API_KEY ?? process.env.BENCHGYM_API_KEY } : {}),
      },
      samples,
      tasks: taskIds ?? undefined,
      concurrency,
      retries,
      maxSteps: maxSteps ?? undefined,
      timeLimitMs: timeLimitMs ?? undefined,
      context: context ?? undefined,
      promptVariant: promptVariant ?? undefined,
      resume: values.resume,
      options: { dataset, sandbox, gold, agentOptions, ...(legacyRun ? {} : { scoring }) },
      progress: streamProgress(process.stderr),
      signal: stop.signal,
    });
    const scored = outcome.results.filter((r) => !r.infra);
    const infra = outcome.results.length - scored.length;
    const passed = scored.filter((r) => r.status === 'passed').length;
    const total = outcome.manifest.taskIds.length * samples;
    process.stdout.write(
      `${outcome.manifest.runId}: ${outcome.results.length}/${total} results${outcome.skipped ? ` (${outcome.skipped} from before the resume)` : ''}; ` +
        `${passed}/${scored.length} samples passed${infra ? `; ${infra} infrastructure failures (not counted)` : ''}\n` +
        `  ${path.join(outDir, 'results.jsonl')}\n  report: benchgym report ${outDir}\n`,
    );
    if (outcome.aborted) return 130;
    return infra > 0 ? 1 : 0;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await gym.close();
  }
}

async function report(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, { out: { type: 'string' }, by: { type: 'string' } });
  if (!positionals.length) throw new GymError('INVALID_ARGUMENT', 'give one or more run directories: benchgym report DIR [DIR...]');
  const out = values.out ?? (positionals.length === 1 ? positionals[0]! : '.');
  const written = await writeReport(positionals, out, { keys: listFlag(values.by) });
  process.stdout.write(`${written.md}\n${written.html}\n`);
  return 0;
}

const COMMANDS: Record<string, (args: string[]) => Promise<number>> = { serve, mcp, tasks, validate, images, shell, run: runCmd, report, score, 'build-tasks': buildTasksCmd };

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === '--version' || command === '-V' || command === 'version') {
    process.stdout.write(`benchgym ${VERSION}\n`);
    return 0;
  }
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE);
    return command ? 0 : 2;
  }
  const run = COMMANDS[command];
  if (!run) {
    process.stderr.write(`benchgym: unknown command '${command}'\n\n${USAGE}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  try {
    return await run(rest);
  } catch (err) {
    const e = toGymError(err);
    process.stderr.write(`benchgym ${command}: ${e.code}: ${e.message}\n`);
    return 2;
  }
}
