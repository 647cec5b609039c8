import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout benchgym runs from: its docker/ recipes and bin/; hidden from sandboxes (its git history holds the suites). */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
