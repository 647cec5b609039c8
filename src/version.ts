import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from './project.ts';

/** benchgym's version, as package.json says (one place: the CLI's --version and the MCP server's info). */
export const VERSION: string = (JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
