import type { AgentDefinition } from '../agent/types.ts';
import type { SandboxBackend } from '../sandbox/backend.ts';
import type { Suite } from '../tasks/suite.ts';

/** How the CLI builds a suite: its repository checkouts (`--repos-dir`), the folder its own caches go under (`--cache-dir`). */
export interface SuiteLoadOptions {
  reposDir?: string;
  cacheDir?: string;
}

/** A command a suite adds, as `benchgym --help` lists it before the suite is loaded. */
export interface SuiteCommandEntry {
  name: string;
  summary: string;
}

/**
 * A suite as the composition root registers it: what `--help` and flag checks need, declared
 * statically, and a loader that imports the suite's code only when a command uses the suite.
 */
export interface SuiteEntry {
  id: string;
  summary: string;
  /** The commands the loaded suite's `commands` holds, by name and summary (a test keeps them equal). */
  commands: readonly SuiteCommandEntry[];
  /** Imports the suite and builds it with the options of this call (repositories, its own cache folder). */
  load(opts?: SuiteLoadOptions): Promise<Suite>;
}

/** The agents `benchgym run` runs: their names for `--help`, their definitions on demand. */
export interface AgentTable {
  names: readonly string[];
  load(): Promise<Readonly<Record<string, AgentDefinition>>>;
}

/**
 * What the composition root (`bin/composition.ts`) hands the CLI: the suites, agents and sandbox
 * backends it registers. The CLI (and the core behind it) know none of them but through this,
 * and import one only when a command uses it.
 */
export interface Composition {
  suites: readonly SuiteEntry[];
  agents: AgentTable;
  /** The backends `--sandbox` names, the default first (src/sandbox/backend.ts). */
  sandboxes: readonly SandboxBackend[];
}

/**
 * A composition of suites and agents at hand (tests, programs embedding the CLI): `make` builds
 * the suites with the repository options of a call; their ids and commands are read off one build.
 *
 * @example
 * await main(['tasks', '--suite', 'mine'], compositionOf(() => [mySuite()], {}, BUILTIN_SANDBOXES));
 */
export function compositionOf(
  make: (opts: SuiteLoadOptions) => Suite[],
  agents: Readonly<Record<string, AgentDefinition>> = {},
  sandboxes: readonly SandboxBackend[] = [],
): Composition {
  return {
    suites: make({}).map((probe) => ({
      id: probe.id,
      summary: probe.description,
      commands: (probe.commands ?? []).map((c) => ({ name: c.name, summary: c.summary })),
      load: async (opts = {}) => make(opts).find((s) => s.id === probe.id)!,
    })),
    agents: { names: Object.keys(agents), load: async () => agents },
    sandboxes,
  };
}

/** The loaded suites of `ids` (default: every suite), in the root's order; ids the root does not register are left out. */
export async function loadSuites(root: Composition, opts: SuiteLoadOptions = {}, ids?: readonly string[]): Promise<Suite[]> {
  const wanted = ids ? root.suites.filter((s) => ids.includes(s.id)) : root.suites;
  return Promise.all(wanted.map((s) => s.load(opts)));
}
