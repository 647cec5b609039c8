/**
 * SWE-bench-java: the original harness's procedure, replayed, against `benchgym score` of the
 * same gold patch (issue 15, "Done when" 3). Results: bench/results/swebench_harness.json and a
 * markdown table on stdout; documented in envs/swebench/README.md ("Scoring time against the
 * harness's procedure").
 *
 *   BENCHGYM_CACHE=DIR npx tsx bench/swebench_harness.ts --data DATA/swe-bench-java --mirrors MIRRORS \
 *     [--tasks a,b] [--procedures per-class,multi-swe-bench] [--max-classes N] [--skip-benchgym] [--dataset FILE]...
 *
 * The harness's procedure, per instance, in a fresh copy of the instance's start state (the
 * base commit plus the spec's build-setup commit, which the harness makes with its own `sed`
 * of the pom):
 *
 * - `per-class`: what SWE-bench-java's paper and issue 15 describe ("`mvn clean test
 *   -Dtest=<Class> -am` once per FAIL_TO_PASS class"), in the form Multi-SWE-bench's harness
 *   writes it (multi-swe-bench/multi-swe-bench, `multi_swe_bench/harness/repos/java/fasterxml/
 *   jackson_core.py`, lines 405-406, fix-run.sh of its jackson-core-980 image):
 *   `git apply --whitespace=nowarn test.patch fix.patch` (both under the image's home directory) then
 *   `mvn clean test -Dsurefire.useFile=false -Dmaven.test.skip=false -Dtest=<Class> -DfailIfNoTests=false -am`,
 *   with `-pl <module>` for a module's test id (SWE-bench-java's constants write
 *   `-D{test_spec}={test_func} -DfailIfNoTests=false -pl {module}`).
 * - `multi-swe-bench`: the fix-run.sh of each repository's default image in the same harness,
 *   the whole suite once: `mvn clean test -Dmaven.test.skip=false -DfailIfNoTests=false`
 *   (google/gson.py:162-163, fasterxml/jackson_core.py:207-208,
 *   fasterxml/jackson_dataformat_xml.py:193-194; alibaba/fastjson2.py:175-176 runs
 *   `./mvnw -V --no-transfer-progress -Pgen-javadoc -Pgen-dokka clean test -Dsurefire.useFile=false
 *   -Dmaven.test.skip=false -DfailIfNoTests=false`; apache/dubbo.py:162-163 adds
 *   `-Dsurefire.useFile=false`).
 *
 * Both run online (no `-o`), as in the harness's container, with the Maven repository already
 * warm (the shared `<cache>/m2` that benchgym's env build filled): a fair second run, no
 * downloads timed. Same JDK as benchgym's (the spec's, else the nearest installed), the same
 * `-D` overrides of the spec (without them these base commits do not build on JDK 17), the
 * same MAVEN_OPTS / JAVA_TOOL_OPTIONS. Host processes, no sandbox (the harness's container has
 * none either). `benchgym score` is the CLI as a user runs it: a predictions file with the
 * gold patch, `--concurrency 1`, env cached (the wall time includes the node start, the
 * sandbox, the patch steps and the one offline Maven build of FAIL_TO_PASS + PASS_TO_PASS).
 *
 * Heavy: one instance is several full Maven builds. Run it alone, `nice -n 10` on a shared
 * machine; it is not part of `npm run bench`.
 */
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { builtinSuites } from '../bin/builtins.ts';
import { chooseJdk, installedJdks } from '../src/env/jdk.ts';
import { gitStartState } from '../src/env/workspace.ts';
import { parseJavaTestId } from '../src/tasks/java_tests.ts';
import { SuiteRegistry } from '../src/tasks/registry.ts';
import type { Task } from '../src/tasks/schema.ts';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.join(BENCH_DIR, '..', 'bin', 'benchgym.js');
const RESULTS_FILE = path.join(BENCH_DIR, 'results', 'swebench_harness.json');
const SUITE = 'swe-bench-java';

/** One instance per repository that validated (README, "Validation"). */
const DEFAULT_TASKS = [
  'google__gson-1093',
  'fasterxml__jackson-core-370',
  'fasterxml__jackson-dataformat-xml-590',
  'alibaba__fastjson2-82',
  'apache__dubbo-7041',
];
type Procedure = 'per-class' | 'multi-swe-bench';

interface CommandRun {
  command: string;
  exitCode: number | null;
  seconds: number;
  /** Surefire's summary lines of the run ("Tests run: ..."), the last few. */
  summary: string[];
}

interface InstanceRow {
  instance: string;
  repo: string;
  failToPassClasses: string[];
  harness: Partial<Record<Procedure, { seconds: number; measured: number; extrapolated: boolean; commands: CommandRun[] }>>;
  benchgym?: { seconds: number; resolved: boolean; line: string };
}

function run(
  command: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  logFile: string,
): Promise<{ exitCode: number | null; seconds: number; output: string }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => chunks.push(b));
    child.stderr.on('data', (b: Buffer) => chunks.push(b));
    child.on('close', async (code) => {
      const output = Buffer.concat(chunks).toString('utf8');
      await fs.appendFile(logFile, `$ ${command}\n${output}\nexit ${code}\n`);
      resolve({ exitCode: code, seconds: (Date.now() - started) / 1000, output });
    });
  });
}

/** The harness's test selection: one command per distinct FAIL_TO_PASS class (module kept for -pl). */
function failToPassClasses(task: Task): { module?: string; cls: string }[] {
  const seen = new Map<string, { module?: string; cls: string }>();
  for (const id of task.tests.failToPass) {
    const { module, pattern } = parseJavaTestId(id);
    const cls = pattern.split('#')[0]!;
    seen.set(`${module ?? ''}:${cls}`, { ...(module ? { module } : {}), cls });
  }
  return [...seen.values()];
}

function harnessCommands(task: Task, procedure: Procedure, specArgs: string[], maxClasses: number): string[] {
  const extra = specArgs.map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  if (procedure === 'per-class') {
    return failToPassClasses(task)
      .slice(0, maxClasses)
      .map(({ module, cls }) =>
        (
          `mvn clean test -Dsurefire.useFile=false -Dmaven.test.skip=false -Dtest=${cls} ` +
          `-DfailIfNoTests=false${module ? ` -pl ${module}` : ''} -am ${extra}`
        ).trim(),
      );
  }
  const repo = String(task.metadata.repo);
  if (repo === 'alibaba/fastjson2')
    return [
      (
        `./mvnw -V --no-transfer-progress -Pgen-javadoc -Pgen-dokka clean test ` +
        `-Dsurefire.useFile=false -Dmaven.test.skip=false -DfailIfNoTests=false ${extra}`
      ).trim(),
    ];
  if (repo === 'apache/dubbo')
    return [`mvn clean test -Dsurefire.useFile=false -Dmaven.test.skip=false -DfailIfNoTests=false ${extra}`.trim()];
  return [`mvn clean test -Dmaven.test.skip=false -DfailIfNoTests=false ${extra}`.trim()];
}

/**
 * One procedure on one instance. `per-class` runs at most `maxClasses` of the instance's
 * FAIL_TO_PASS classes (Multi-SWE-bench's fastjson2 records list hundreds: tests that did not
 * exist before the fix count as FAIL_TO_PASS); then `seconds` is extrapolated (the patch step
 * plus the mean command time × the class count) and `measured` holds what was run.
 */
async function replayHarness(
  task: Task,
  procedure: Procedure,
  startDir: string,
  env: NodeJS.ProcessEnv,
  scratch: string,
  maxClasses: number,
): Promise<{ seconds: number; measured: number; extrapolated: boolean; commands: CommandRun[] }> {
  const work = path.join(scratch, `${task.id}-${procedure}`);
  await fs.rm(work, { recursive: true, force: true });
  await fs.cp(startDir, work, { recursive: true });
  await fs.writeFile(path.join(scratch, 'test.patch'), task.tests.hidden.patch ?? '');
  await fs.writeFile(path.join(scratch, 'fix.patch'), task.solution?.patch ?? '');
  const log = path.join(scratch, `${task.id}-${procedure}.log`);
  const commands: CommandRun[] = [];
  const started = Date.now();
  const apply = `git apply --whitespace=nowarn ${path.join(scratch, 'test.patch')} ${path.join(scratch, 'fix.patch')}`;
  const applied = await run(apply, work, env, log);
  // Recorded without this machine's paths.
  commands.push({ command: apply.split(scratch).join('SCRATCH'), exitCode: applied.exitCode, seconds: applied.seconds, summary: [] });
  if (applied.exitCode !== 0) throw new Error(`${task.id}: the patches do not apply: ${applied.output.slice(-500)}`);
  const specArgs = task.tests.hidden.runner.type === 'maven' ? task.tests.hidden.runner.args : [];
  for (const command of harnessCommands(task, procedure, specArgs, maxClasses)) {
    const r = await run(command, work, env, log);
    const summary = r.output
      .split('\n')
      .filter((l) => /Tests run: \d+, Failures/.test(l))
      .slice(-3)
      .map((l) => l.replace(/^\[\w+\]\s*/, '').trim());
    commands.push({ command, exitCode: r.exitCode, seconds: r.seconds, summary });
    process.stderr.write(`  ${procedure}: exit ${r.exitCode} in ${r.seconds.toFixed(1)} s: ${command.slice(0, 140)}\n`);
  }
  await fs.rm(work, { recursive: true, force: true });
  const measured = (Date.now() - started) / 1000;
  const classes = failToPassClasses(task).length;
  if (procedure !== 'per-class' || classes <= maxClasses) return { seconds: measured, measured, extrapolated: false, commands };
  const builds = commands.slice(1);
  const mean = builds.reduce((a, c) => a + c.seconds, 0) / builds.length;
  return { seconds: commands[0]!.seconds + mean * classes, measured, extrapolated: true, commands };
}

async function benchgymScore(
  task: Task,
  dataset: string,
  mirrors: string,
  cacheDir: string,
  scratch: string,
): Promise<{ seconds: number; resolved: boolean; line: string }> {
  const predictions = path.join(scratch, `${task.id}.preds.jsonl`);
  await fs.writeFile(
    predictions,
    JSON.stringify({ instance_id: task.id, model_patch: task.solution?.patch ?? '', model_name_or_path: 'gold' }) + '\n',
  );
  const out = path.join(scratch, `${task.id}-benchgym`);
  await fs.rm(out, { recursive: true, force: true });
  const args = [
    BIN,
    'score',
    '--suite',
    SUITE,
    '--dataset',
    dataset,
    '--predictions',
    predictions,
    '--repos-dir',
    mirrors,
    '--out',
    out,
    '--tasks',
    task.id,
    '--concurrency',
    '1',
    '--cache-dir',
    cacheDir,
  ];
  const r = await run(
    `node ${args.map((a) => `'${a}'`).join(' ')}`,
    process.cwd(),
    process.env,
    path.join(scratch, `${task.id}-benchgym.log`),
  );
  const results = JSON.parse(await fs.readFile(path.join(out, 'results.json'), 'utf8').catch(() => '{}')) as { resolved_ids?: string[] };
  const line = r.output.split('\n').find((l) => l.includes(task.id) && /resolved|unresolved|ERROR/.test(l)) ?? '';
  return { seconds: r.seconds, resolved: Boolean(results.resolved_ids?.includes(task.id)), line: line.trim() };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      data: { type: 'string' },
      mirrors: { type: 'string' },
      tasks: { type: 'string' },
      procedures: { type: 'string' },
      'skip-benchgym': { type: 'boolean' },
      scratch: { type: 'string' },
      'max-classes': { type: 'string' },
      // More SWE-bench or Multi-SWE-bench files (a swebench-reconstruct output, say), searched first.
      dataset: { type: 'string', multiple: true },
    },
  });
  const data = values.data ?? process.env.BENCHGYM_SWEBENCH_DATA;
  const mirrors = values.mirrors ?? process.env.BENCHGYM_MIRRORS;
  const cacheDir = process.env.BENCHGYM_CACHE;
  if (!data || !mirrors || !cacheDir)
    throw new Error('--data DIR (the swe-bench-java data), --mirrors DIR and BENCHGYM_CACHE (a warm env cache) are needed');
  const ids = values.tasks ? values.tasks.split(',') : DEFAULT_TASKS;
  const procedures = (values.procedures ?? 'per-class').split(',') as Procedure[];
  const datasets = [
    ...(values.dataset ?? []).map((d) => path.resolve(d)),
    path.join(data, 'google__gson_swe-bench-java_reconstructed.jsonl'),
    path.join(data, 'multi-swe-bench-bytedance-java'),
  ];
  const scratch = values.scratch ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-harness-bench-')));
  const jdks = await installedJdks();
  const maxClasses = Number(values['max-classes'] ?? 5);

  const rows: InstanceRow[] = [];
  for (const id of ids) {
    let task: Task | undefined;
    let dataset = '';
    for (const d of datasets) {
      const registry = new SuiteRegistry(builtinSuites({ reposDir: mirrors }));
      registry.enable(`${SUITE}=${d}`);
      task = await registry.task(SUITE, id).catch(() => undefined);
      if (task) {
        dataset = d;
        break;
      }
    }
    if (!task || task.workspace.type !== 'git' || task.env.kind !== 'java') throw new Error(`${id}: not a Maven instance of the datasets`);
    process.stderr.write(`${id}\n`);
    const startDir = await gitStartState(cacheDir, task.workspace);
    const jdk = chooseJdk(task.env.jdk, jdks);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      MAVEN_OPTS: `-Dmaven.repo.local=${path.join(cacheDir, 'm2')}`,
      JAVA_TOOL_OPTIONS: '-Xss4m',
      ...(jdk ? { JAVA_HOME: jdk.home, PATH: `${path.join(jdk.home, 'bin')}:${process.env.PATH ?? ''}` } : {}),
    };
    const row: InstanceRow = {
      instance: id,
      repo: String(task.metadata.repo),
      failToPassClasses: failToPassClasses(task).map((c) => (c.module ? `${c.module}:${c.cls}` : c.cls)),
      harness: {},
    };
    for (const p of procedures) row.harness[p] = await replayHarness(task, p, startDir, env, scratch, maxClasses);
    if (!values['skip-benchgym']) {
      row.benchgym = await benchgymScore(task, dataset, mirrors, cacheDir, scratch);
      process.stderr.write(`  benchgym score: ${row.benchgym.seconds.toFixed(1)} s (${row.benchgym.line})\n`);
    }
    rows.push(row);
    const previous = JSON.parse(await fs.readFile(RESULTS_FILE, 'utf8').catch(() => '{"instances":[]}')) as { instances: InstanceRow[] };
    // A later run of other procedures (or with --skip-benchgym) adds to the instance's row.
    const before = previous.instances.find((r) => r.instance === id);
    const merged = [
      ...previous.instances.filter((r) => r.instance !== id),
      {
        ...before,
        ...row,
        harness: { ...before?.harness, ...row.harness },
        ...((row.benchgym ?? before?.benchgym) ? { benchgym: row.benchgym ?? before?.benchgym } : {}),
      },
    ];
    await fs.mkdir(path.dirname(RESULTS_FILE), { recursive: true });
    await fs.writeFile(
      RESULTS_FILE,
      JSON.stringify(
        {
          machine:
            `${os.cpus().length} cores, ${Math.round(os.totalmem() / 1024 ** 3)}` + ` GiB, load ${os.loadavg()[0]!.toFixed(1)} at the end`,
          jdk: jdk?.major,
          instances: merged,
        },
        null,
        2,
      ) + '\n',
    );
  }

  const head = [
    'instance',
    'FAIL_TO_PASS classes',
    ...procedures.map((p) => `harness ${p} (s)`),
    'benchgym score (s)',
    ...procedures.map((p) => `ratio ${p}`),
  ];
  console.log(`| ${head.join(' | ')} |\n|${head.map(() => '---').join('|')}|`);
  const extrapolation = (h: { commands: unknown[]; measured: number }) =>
    ` (extrapolated from ${h.commands.length - 1} classes: ${h.measured.toFixed(1)})`;
  for (const r of rows) {
    const b = r.benchgym?.seconds;
    const cells = [
      r.instance,
      String(r.failToPassClasses.length),
      ...procedures.map((p) =>
        r.harness[p] ? `${r.harness[p]!.seconds.toFixed(1)}` + `${r.harness[p]!.extrapolated ? extrapolation(r.harness[p]!) : ''}` : '—',
      ),
      b?.toFixed(1) ?? '—',
      ...procedures.map((p) => (b && r.harness[p] ? `${(r.harness[p]!.seconds / b).toFixed(2)}×` : '—')),
    ];
    console.log(`| ${cells.join(' | ')} |`);
  }
}

await main();
