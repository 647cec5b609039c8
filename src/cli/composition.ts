import type { AgentDefinition } from '../agent/types.ts';
import type { Suite } from '../tasks/suite.ts';

/**
 * What the composition root (`bin/builtins.ts`) hands the CLI: the suites and agents it
 * registers. The CLI (and the core behind it) know no suite or agent but through this.
 */
export interface Composition {
  /**
   * The suites, built with the repository options of those that check out repositories
   * (`--repos-dir`), and the cache folder their own caches go under (`--cache-dir`).
   */
  suites(opts?: { reposDir?: string; cacheDir?: string }): Suite[];
  /** The agents `benchgym run` runs, by name. */
  agents: Readonly<Record<string, AgentDefinition>>;
}
