/**
 * benchgym's own example suite: small tasks written by the project (Python functions, a
 * pinned package, a repository fix, Maven), in the directory layout any user can write
 * (docs/ARCHITECTURE.md#directory-suites). It is what `npm start` serves.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { directorySuite } from '../../src/tasks/registry.ts';
import type { Suite } from '../../src/tasks/suite.ts';
import { viewDocsTool } from '../../src/tools/view_docs.ts';

export const EXAMPLES_DIR = path.dirname(fileURLToPath(import.meta.url));

export function examplesSuite(): Suite {
  // semver-pinned is a pinned-library task: its episodes get GitChameleon's version-correct docs.
  return directorySuite(
    'examples',
    "benchgym's own small example suite (Python functions, a pinned package, a repo fix, Maven)",
    EXAMPLES_DIR,
    { tools: [viewDocsTool] },
  );
}
