import path from 'node:path';
import { Gym } from '../../episode/gym.ts';
import { GymError } from '../../errors.ts';
import { defaultDataDir } from '../../project.ts';
import type { ReplayFlag, ReplayFlagValues } from '../../replay/adapter.ts';
import { replay } from '../../replay/driver.ts';
import { withStartStateCheck, readValidated } from '../../replay/start_state.ts';
import { replayScorer, type ReplayScoring } from '../../scoring/compare.ts';
import { scoringFlag } from '../../scoring/mode.ts';
import { SuiteRegistry } from '../../tasks/registry.ts';
import type { Suite } from '../../tasks/suite.ts';
import type { CliCommand } from '../command.ts';
import { loadSuites, type Composition } from '../composition.ts';
import { backendFlags, backendNamed, backendUsage, parseBackendOptions } from '../../sandbox/backend.ts';
import { cacheDirOf, reposDirFlag, sandboxContext } from '../gym_options.ts';
import { intFlag, listFlag, parseFlags } from '../options.ts';

/** The driver's flags; a suite's replay adds its own (ReplayAdapter.flags). */
const SCORE_FLAGS = {
  suite: { type: 'string' },
  dataset: { type: 'string' },
  predictions: { type: 'string' },
  tasks: { type: 'string' },
  concurrency: { type: 'string' },
  json: { type: 'boolean' },
  'exclude-errors': { type: 'boolean' },
  'data-dir': { type: 'string' },
  'cache-dir': { type: 'string' },
  sandbox: { type: 'string' },
  'repos-dir': { type: 'string' },
  scoring: { type: 'string' },
  gradle: { type: 'string' },
  validated: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const replayable = (suites: Suite[]) => suites.filter((s) => s.replay);

function usage(root: Composition, all: Suite[]): string {
  const suites = replayable(all);
  return `benchgym score: replays a file of a benchmark's published model outputs. Each output is scored like a
submission (the hidden tests in a fresh sandbox) and compared with the published verdict where the file has one;
tasks whose env cannot exist here are counted apart, never as failures. Exit 1 on scoring errors.

Usage:
${suites.length ? suites.map((s) => s.replay!.usage).join('\n') : '  benchgym score --suite ID --dataset PATH --predictions FILE   (no suite registered here has a replay)'}

Options (every suite):
  --suite ID[=PATH]  the suite whose outputs these are (default ${suites[0]?.id ?? 'none'}); PATH: its dataset
  --dataset PATH     the suite's dataset (the same as --suite ID=PATH; a suite that needs one says so)
  --predictions FILE the published outputs, JSON Lines
  --tasks a,b        only the outputs of these task ids
  --concurrency N    submissions scored at once (default 2)
  --json             the summary and every result as JSON on stdout (no progress lines)
  --exclude-errors   the summary's first rate over the submissions scored only (by default one whose scoring
                     failed is one that did not pass; both rates are printed; unavailable ones are in neither)
  --scoring MODE     faithful (default: the benchmark's own harness) | strict | both (faithful, then strict on
                     its passes, listing where the two differ)
  --validated FILE   a suite that checks start states (swe-bench-java): read them from benchgym validate --out
                     FILE instead of scoring the empty patch of each task it resolves
  --data-dir DIR, --cache-dir DIR, --repos-dir DIR, --gradle PATH, --sandbox NAME and its flags
                     as for benchgym serve (a container backend keeps no warm pool unless --pool N):
${backendUsage(root.sandboxes)}

Example:
  benchgym score --suite ${suites[0]?.id ?? 'ID'} --dataset PATH --predictions FILE --json
`;
}

/** `benchgym score` over `suites` (the root's, loaded: the flags and --help are every suite's replay's). */
export function scoreCommand(root: Composition, suites: Suite[]): CliCommand {
  return {
    name: 'score',
    summary: "replay a benchmark's published model outputs: agreement with their verdicts",
    usage: usage(root, suites),
    async run(args) {
      // Every suite's replay flags are taken (as they always were), each suite reading its own.
      const extra: Record<string, ReplayFlag> = Object.assign({}, ...replayable(suites).map((s) => s.replay!.flags ?? {}));
      const { values } = parseFlags(args, { ...extra, ...backendFlags(root.sandboxes), ...SCORE_FLAGS });
      const [suiteId, suitePath] = (values.suite ?? replayable(suites)[0]?.id ?? '').split(/=(.*)/s) as [string, string | undefined];
      const suite = suites.find((s) => s.id === suiteId);
      if (!suite) throw new GymError('SUITE_NOT_FOUND', `unknown suite '${suiteId}' (known: ${suites.map((s) => s.id).join(', ')})`);
      const adapter = suite.replay;
      if (!adapter)
        throw new GymError(
          'INVALID_ARGUMENT',
          `suite '${suiteId}' has no replay: benchgym score replays the outputs of ${
            replayable(suites)
              .map((s) => s.id)
              .join(', ') || 'no suite'
          }`,
        );
      // Without a dataset the suite is served as it is: one that needs a path says so itself.
      const given = values.dataset ?? suitePath;
      const dataset = given === undefined ? undefined : path.resolve(given);
      if (!values.predictions) throw new GymError('INVALID_ARGUMENT', `missing --predictions (a JSON Lines file: ${adapter.rowFormat})`);
      const reposDir = reposDirFlag(values['repos-dir']);
      const own = Object.fromEntries(Object.keys(adapter.flags ?? {}).map((k) => [k, (values as ReplayFlagValues)[k]]));
      const options = adapter.options?.(own);
      const scoring: ReplayScoring = scoringFlag(values.scoring, 'faithful', ['both'] as const);
      const backend = backendNamed(root.sandboxes, values.sandbox);
      const builder = await backend.load();
      const backendOptions = parseBackendOptions(backend, builder, values);
      const concurrency = intFlag(values.concurrency, 'concurrency', 2, 1, 64);

      // The suites again, with the repository options of this call.
      const registry = new SuiteRegistry(
        await loadSuites(root, { reposDir, ...(values['cache-dir'] ? { cacheDir: values['cache-dir'] } : {}) }, [suiteId]),
      );
      registry.enable(dataset === undefined ? suiteId : `${suiteId}=${dataset}`);
      const dataDir = path.resolve(values['data-dir'] ?? defaultDataDir());
      const sandboxes = await builder.create(backendOptions, sandboxContext(values, dataDir, registry, 'scoring'));
      // A suite whose scorer takes the gym's mode scores `both` faithfully too.
      const gym = new Gym({
        registry,
        dataDir,
        cacheDir: cacheDirOf(values),
        scoring: scoring === 'strict' ? 'strict' : 'faithful',
        sandboxes,
      });
      const mode = scoring === 'both' && adapter.strictRescore === false ? 'faithful' : scoring;
      const strictWhere = typeof adapter.strictRescore === 'function' ? adapter.strictRescore : undefined;
      if (values.validated && !adapter.startStateCheck)
        throw new GymError('INVALID_ARGUMENT', `--validated: suite '${suiteId}' does not check start states`);
      const validated = values.validated ? readValidated(path.resolve(values.validated)) : undefined;
      const scorer = replayScorer((task, patch, m) => gym.score(task, patch, { scoring: m }), mode, strictWhere);
      // The start state in the replay's own mode (faithful for `both`), once per task.
      const startMode = scoring === 'strict' ? 'strict' : 'faithful';
      try {
        const report = await replay(adapter, {
          suite: suiteId,
          tasks: await registry.tasks(suiteId),
          dataset,
          predictions: path.resolve(values.predictions),
          only: values.tasks ? (listFlag(values.tasks) ?? []) : undefined,
          options,
          scoring,
          score: adapter.startStateCheck
            ? withStartStateCheck(scorer, (task) => gym.score(task, '', { scoring: startMode }), validated)
            : scorer,
          concurrency,
          onProgress: values.json ? undefined : (line) => process.stderr.write(`${line}\n`),
          excludeErrors: values['exclude-errors'] ?? false,
        });
        process.stdout.write(values.json ? JSON.stringify(report.json, null, 2) + '\n' : report.text);
        return report.exitCode;
      } finally {
        await gym.close();
      }
    },
  };
}
