#!/usr/bin/env node
// The package runs its compiled JavaScript (dist/); a checkout, which has the TypeScript sources,
// runs them through tsx (a development dependency): no build step between an edit and a run.
import { existsSync } from 'node:fs';

if (existsSync(new URL('../src/cli/main.ts', import.meta.url))) {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./cli.ts');
} else {
  await import('../dist/bin/cli.js');
}
