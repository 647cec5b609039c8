import { readFileSync } from 'node:fs';

/** benchgym's version, as package.json says (one place: the CLI's --version and the MCP server's info). */
export const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
