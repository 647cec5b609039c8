import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A Python package a test drives benchgym with, installed from PyPI into a venv of its own, at the
 * version the test was written against (.ci/run pins the same).
 */
export interface PythonPackage {
  /** What the test imports (checked to be importable). */
  module: string;
  /** The pip commands that install it, in order (each the arguments after `pip install`). */
  install: string[][];
  /** An interpreter that already has it, if set (CI's, or a developer's own). */
  envVar: string;
  /** The venv's folder under ~/.cache/benchgym (XDG_CACHE_HOME is honoured), kept between runs. */
  venv: string;
}

/** Where .ci/run keeps these venvs: `<cache>/benchgym/<name>`. */
export function venvDir(name: string): string {
  return path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'benchgym', name);
}

async function imports(python: string, module: string): Promise<boolean> {
  try {
    await run(python, ['-c', `import ${module}`], { timeout: 120_000 });
    return true;
  } catch {
    return false;
  }
}

/** Waits for the lock directory `lock` (another test process may be installing the same venv); returns its release. */
async function lock(dir: string, waitMs: number): Promise<() => Promise<void>> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      await fs.mkdir(dir);
      return () => fs.rm(dir, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      // A lock older than the wait was left by a process that died.
      const st = await fs.stat(dir).catch(() => null);
      if (st && Date.now() - st.mtimeMs > waitMs) await fs.rm(dir, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`another process has held ${dir} for ${Math.round(waitMs / 60_000)} min`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

/**
 * An interpreter that can import `pkg.module`: `$<envVar>`, else the venv's, installing it
 * there first when it lacks the package (PyPI must be reachable). Returns the reason to skip
 * when neither works, naming what failed, so a test without the package says why.
 */
export async function pythonWith(pkg: PythonPackage): Promise<{ python: string; skip?: undefined } | { python?: undefined; skip: string }> {
  const given = process.env[pkg.envVar];
  if (given) {
    return (await imports(given, pkg.module)) ? { python: given } : { skip: `$${pkg.envVar} (${given}) cannot import ${pkg.module}` };
  }
  const dir = venvDir(pkg.venv);
  const python = path.join(dir, 'bin', 'python');
  if (await imports(python, pkg.module)) return { python };
  await fs.mkdir(path.dirname(dir), { recursive: true });
  let release: () => Promise<void>;
  try {
    release = await lock(`${dir}.lock`, 20 * 60_000);
  } catch (err) {
    return { skip: `could not install ${pkg.module}: ${(err as Error).message}` };
  }
  try {
    if (await imports(python, pkg.module)) return { python };
    const step = async (cmd: string, args: string[]) => {
      try {
        await run(cmd, args, { timeout: 20 * 60_000, maxBuffer: 64 * 1024 * 1024 });
      } catch (err) {
        const e = err as { stderr?: string; message: string };
        const last = (e.stderr ?? '').trim().split('\n').slice(-3).join(' | ') || e.message;
        throw new Error(`${path.basename(cmd)} ${args.slice(0, 4).join(' ')} failed: ${last}`);
      }
    };
    try {
      await fs.access(python).catch(() => step('python3', ['-m', 'venv', dir]));
      for (const args of pkg.install) await step(python, ['-m', 'pip', 'install', '-q', '--disable-pip-version-check', ...args]);
    } catch (err) {
      return { skip: `${pkg.module} could not be installed into ${dir} (PyPI unreachable?): ${(err as Error).message}` };
    }
    return (await imports(python, pkg.module)) ? { python } : { skip: `${pkg.module} was installed into ${dir} but does not import` };
  } finally {
    await release();
  }
}

/** openenv-core from PyPI (GenericEnvClient, MCPToolClient, `openenv validate`). */
export const OPENENV_CORE: PythonPackage = {
  module: 'openenv.core',
  install: [['openenv-core==0.3.0']],
  envVar: 'BENCHGYM_PYTHON_OPENENV',
  venv: 'openenv',
};

/** harbor's ATIF models; harbor wants Python 3.12, its pydantic models run on 3.11. */
export const HARBOR: PythonPackage = {
  module: 'harbor.models.trajectories',
  install: [['pydantic==2.14.4'], ['--no-deps', '--ignore-requires-python', 'harbor==0.26.0']],
  envVar: 'BENCHGYM_PYTHON_HARBOR',
  venv: 'harbor',
};

/** inspect_ai with the MCP SDK its MCP tool source needs. */
export const INSPECT_AI: PythonPackage = {
  module: 'inspect_ai',
  install: [['inspect_ai==0.3.285', 'mcp==2.3.0']],
  envVar: 'BENCHGYM_PYTHON_INSPECT',
  venv: 'inspect',
};
