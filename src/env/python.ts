import { execFile } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GymError } from '../errors.ts';
import type { PythonEnvSpec } from '../tasks/schema.ts';
import { contentKey } from './key.ts';
import { OncePerKey, withDirLock } from './lock.ts';
import type { PreparedEnv } from './types.ts';

/** Every Python env gets the same test runner, so results do not depend on the task. */
export const PYTEST_PIN = 'pytest==8.3.5';
const ENV_FORMAT = 1;

/** Finds an interpreter for `3.X`: pyenv versions first, then the system's. */
export async function findPython(version: string): Promise<string | null> {
  const roots = [process.env.PYENV_ROOT, path.join(os.homedir(), '.pyenv')].filter(Boolean) as string[];
  for (const root of roots) {
    const versionsDir = path.join(root, 'versions');
    const names = (await fs.readdir(versionsDir).catch(() => [] as string[]))
      .filter((n) => n === version || n.startsWith(`${version}.`))
      .sort((a, b) => b.localeCompare(a, undefined, { numeric: true }));
    for (const n of names) {
      const exe = path.join(versionsDir, n, 'bin', `python${version}`);
      if (existsSync(exe)) return exe;
    }
  }
  for (const dir of ['/usr/local/bin', '/usr/bin']) {
    const exe = path.join(dir, `python${version}`);
    if (existsSync(exe)) return exe;
  }
  return null;
}

function run(file: string, args: string[], timeoutMs: number): Promise<{ ok: boolean; log: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INPUT: '1' } }, (err, stdout, stderr) => {
      resolve({ ok: !err, log: `$ ${file} ${args.join(' ')}\n${stdout}${stderr}${err && !stderr ? err.message : ''}` });
    });
  });
}

/** Builds (once) and returns a venv with the task's pinned requirements and pytest. */
export class PythonEnvBuilder {
  private readonly once = new OncePerKey<PreparedEnv>();

  constructor(private readonly cacheDir: string) {}

  async prepare(spec: PythonEnvSpec): Promise<PreparedEnv> {
    const interpreter = await findPython(spec.version);
    if (!interpreter) {
      throw new GymError('ENV_UNAVAILABLE', `no Python ${spec.version} interpreter on this machine (looked in pyenv and /usr/bin)`, { python: spec.version });
    }
    const requirements = [...spec.requirements].sort();
    const key = contentKey({ format: ENV_FORMAT, python: spec.version, requirements, runner: PYTEST_PIN });
    const dir = path.join(this.cacheDir, 'envs', `py${spec.version}-${key}`);
    return this.once.run(key, () =>
      withDirLock(`${dir}.lock`, async () => {
        if (!existsSync(path.join(dir, '.benchgym-ready'))) await this.build(dir, interpreter, requirements);
        return {
          key,
          kind: 'python' as const,
          path: [path.join(dir, 'bin')],
          vars: { VIRTUAL_ENV: dir },
          readOnlyPaths: [dir, path.dirname(path.dirname(interpreter))],
          command: path.join(dir, 'bin', 'python'),
          notes: [],
        };
      }),
    );
  }

  private async build(dir: string, interpreter: string, requirements: string[]): Promise<void> {
    await fs.rm(dir, { recursive: true, force: true });
    await fs.mkdir(path.dirname(dir), { recursive: true });
    let log = '';
    const venv = await run(interpreter, ['-m', 'venv', dir], 120_000);
    log += venv.log;
    if (venv.ok) {
      const pip = await run(path.join(dir, 'bin', 'python'), ['-m', 'pip', 'install', '-q', PYTEST_PIN, ...requirements], 20 * 60_000);
      log += pip.log;
      if (pip.ok) {
        await fs.writeFile(path.join(dir, 'build.log'), log);
        await fs.writeFile(path.join(dir, '.benchgym-ready'), new Date().toISOString());
        return;
      }
    }
    await fs.rm(dir, { recursive: true, force: true });
    throw new GymError('ENV_BUILD_FAILED', `could not build the Python env (${requirements.join(' ') || 'no requirements'}):\n${log.slice(-4000)}`, {
      requirements,
      log: log.slice(-20_000),
    });
  }
}
