import { Gym, type GymOptions } from '../episode/gym.ts';
import { GymError, toGymError } from '../errors.ts';
import { startHttpServer } from '../server/http.ts';
import { runStdioServer } from '../server/stdio.ts';
import { wsGymExtension } from '../server/ws_gym.ts';
import { wsMcpExtension } from '../server/ws_mcp.ts';
import { terminalExtension } from '../server/pty.ts';
import { validateTasks, type TaskValidation } from '../scoring/validate.ts';
import { SuiteRegistry } from '../tasks/registry.ts';
import { DockerSandboxFactory } from '../sandbox/docker/index.ts';
import { dockerClient } from '../sandbox/docker/client.ts';
import { buildBaseImage, type BaseImageSpec } from '../env/baseImages.ts';
import { BASE_IMAGES, baseImageName } from '../env/images.ts';
import { intFlag, parseFlags } from './options.ts';
import { shell } from './shell.ts';

const USAGE = `benchgym: a gym server for code benchmarks

Usage:
  benchgym serve [--host 127.0.0.1] [--port 7420] [--sandbox local|docker] [--suite ID[=PATH]]... [--token T]
  benchgym mcp [--suite ID[=PATH]]...                 MCP over stdio (for Claude Desktop / Claude Code)
  benchgym tasks [--suite ID[=PATH]]... [--json]      list the tasks of the served suites
  benchgym validate --suite ID[=PATH] [--dataset PATH] [--tasks a,b] [--concurrency N] [--json]
                                                      gold passes, start state fails, for every task
  benchgym shell EPISODE_ID|TASK_ID [--url http://127.0.0.1:7420] [--token T] [--suite ID]
                                                      a terminal into an episode on a running server
                                                      (a task id starts an episode first; Ctrl-] detaches)

Common options:
  --data-dir DIR     trajectories, scoring logs and sandboxes (default $BENCHGYM_HOME or ~/.cache/benchgym)
  --cache-dir DIR    built envs: venvs and the Maven repository (default $BENCHGYM_CACHE or the data dir)
  --isolation MODE   auto | bwrap | none: bubblewrap for the local sandbox (default auto)
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
}

function gymFrom(values: CommonValues): Gym {
  const backend = values.sandbox ?? 'local';
  if (backend !== 'local' && backend !== 'docker') throw new GymError('INVALID_ARGUMENT', `invalid --sandbox: '${backend}' (local or docker)`);
  const isolation = values.isolation ?? 'auto';
  if (!['auto', 'bwrap', 'none'].includes(isolation)) throw new GymError('INVALID_ARGUMENT', `invalid --isolation: '${isolation}' (auto, bwrap or none)`);
  const registry = new SuiteRegistry();
  for (const spec of values.suite?.length ? values.suite : ['examples']) registry.enable(spec);
  const opts: GymOptions = { registry, dataDir: values['data-dir'], cacheDir: values['cache-dir'] ?? process.env.BENCHGYM_CACHE, isolation: isolation as GymOptions['isolation'] };
  if (backend === 'docker') {
    opts.sandboxes = new DockerSandboxFactory({
      serverId: values['server-id'] ?? 'default',
      poolSize: intFlag(values.pool, 'pool', 1, 0, 64),
      maxContainers: intFlag(values['max-containers'], 'max-containers', 32, 1, 4096),
      images: { exactPython: values['exact-python'] ?? false },
    });
  }
  return new Gym(opts);
}

function onSignals(stop: () => Promise<void>): void {
  let stopping = false;
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      if (stopping) process.exit(1);
      stopping = true;
      void stop().finally(() => process.exit(0));
    });
  }
}

async function serve(args: string[]): Promise<number> {
  const { values } = parseFlags(args, { ...COMMON, host: { type: 'string' }, port: { type: 'string' }, token: { type: 'string' } });
  const gym = gymFrom(values);
  // A missing Docker daemon is reported now and on every call; the server stays up.
  await gym.sandboxes.init?.().catch((err) => process.stderr.write(`benchgym: ${toGymError(err).message}\n`));
  const server = await startHttpServer(gym, {
    host: values.host ?? '127.0.0.1',
    port: intFlag(values.port, 'port', 7420, 0, 65535),
    token: values.token ?? process.env.BENCHGYM_TOKEN,
    extensions: [wsGymExtension(), wsMcpExtension(), terminalExtension()],
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
      if (!values.json) process.stderr.write(`${v.status.padEnd(11)} ${v.taskId} (${(v.durationMs / 1000).toFixed(1)} s)${v.reasons.length ? `: ${v.reasons.join('; ')}` : ''}\n`);
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

const COMMANDS: Record<string, (args: string[]) => Promise<number>> = { serve, mcp, tasks, validate, images, shell };

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
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
