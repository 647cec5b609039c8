import { execFile } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GymError } from '../errors.ts';
import { ownValue } from '../own.ts';
import type { PythonEnvSpec } from '../tasks/schema.ts';
import { contentKey } from './key.ts';
import { OncePerKey, withDirLock } from '../lock.ts';
import { setupFailure, setupInput, setupKey } from './setup.ts';
import { requireOnHost } from './system_packages.ts';
import type { PreparedEnv } from './types.ts';

/** Every Python env gets the same test runner, so results do not depend on the task. */
export const PYTEST_PIN = 'pytest==8.3.5';
const ENV_FORMAT = 1;

/** pytest 8 needs Python 3.8; older interpreters get the last pytest that supports them. */
const PYTEST_PIN_FOR_OLD_PYTHON: Record<string, string> = { '3.6': 'pytest==7.0.1', '3.7': 'pytest==7.4.4' };

/**
 * The test runner an env gets: PYTEST_PIN, or the last pytest for an old interpreter, or
 * none when the requirements pin pytest themselves (a task about pytest's own API).
 */
export function pytestPinFor(version: string, requirements: string[]): string | null {
  if (requirements.some((r) => /^pytest\s*(\[[^\]]*\])?\s*(==|===|~=|>=|<=|!=|<|>|@|$)/i.test(r.trim()))) return null;
  return ownValue(PYTEST_PIN_FOR_OLD_PYTHON, version) ?? PYTEST_PIN;
}

export interface PipFailure {
  code: 'ENV_UNAVAILABLE' | 'ENV_BUILD_FAILED';
  /** One line on why, naming the packages when pip does. */
  reason: string;
}

const NETWORK_TROUBLE = new RegExp(
  [
    'NewConnectionError|ConnectTimeout|ReadTimeout|Read timed out|ProxyError|SSLError',
    'Temporary failure in name resolution|Network is unreachable|Connection refused',
    String.raw`ConnectionResetError|RemoteDisconnected|HTTP error 5\d\d|Could not fetch URL`,
  ].join('|'),
);

/**
 * Reads a failed pip install's log. Pins that cannot exist on this interpreter and platform
 * (no such version or no wheel for it, a Requires-Python that excludes it, a source build
 * that fails here) are ENV_UNAVAILABLE; conflicts, network trouble and anything else stay
 * ENV_BUILD_FAILED, since they are not facts about the platform.
 */
export function classifyPipFailure(log: string): PipFailure {
  const names = (re: RegExp) => [...new Set([...log.matchAll(re)].map((m) => m[1]!.trim().replace(/[,;]$/, '')))].join(', ');
  if (NETWORK_TROUBLE.test(log)) return { code: 'ENV_BUILD_FAILED', reason: 'pip could not reach the package index' };
  if (/ResolutionImpossible|conflicting dependencies|Cannot install .* because/.test(log)) {
    return { code: 'ENV_BUILD_FAILED', reason: 'the pinned requirements conflict with each other' };
  }
  const python = names(/Package '([^']+)' requires a different Python/g);
  if (python) return { code: 'ENV_UNAVAILABLE', reason: `${python} does not support this Python version (Requires-Python)` };
  const missing = names(/No matching distribution found for (\S+)/g);
  if (missing) {
    const why = /require a different python version/i.test(log) ? ' (the versions that exist require a different Python)' : '';
    return { code: 'ENV_UNAVAILABLE', reason: `no distribution of ${missing} for this Python and platform${why}` };
  }
  const wheel = names(/(\S+\.whl) is not a supported wheel on this platform/g);
  if (wheel) return { code: 'ENV_UNAVAILABLE', reason: `${wheel} is not a supported wheel on this platform` };
  const built = names(/(?:Failed to build|Could not build wheels for|Failed building wheel for) ([^\n]+?)(?:,? which is required.*)?$/gm);
  if (built || /metadata-generation-failed|subprocess-exited-with-error|Command errored out with exit status/.test(log)) {
    return {
      code: 'ENV_UNAVAILABLE',
      reason: `no wheel${built ? ` of ${built}` : ''} for this Python and platform, and building it from source failed here`,
    };
  }
  return { code: 'ENV_BUILD_FAILED', reason: 'pip failed' };
}

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

/** An interpreter this machine provides: its `3.X` version, its full version and its path. */
export interface AvailablePython {
  version: string;
  full: string;
  exe: string;
}

/**
 * The Python 3 versions this machine can build envs with (what findPython finds), oldest
 * first, each with the full version of the interpreter findPython would take: pyenv's
 * folder name, or the system interpreter's own answer.
 */
export async function availablePythons(): Promise<AvailablePython[]> {
  const roots = [process.env.PYENV_ROOT, path.join(os.homedir(), '.pyenv')].filter(Boolean) as string[];
  const minors = new Set<string>();
  for (const root of roots) {
    for (const n of await fs.readdir(path.join(root, 'versions')).catch(() => [] as string[])) {
      const m = /^(3\.\d+)(\.\d+)?$/.exec(n);
      if (m) minors.add(m[1]!);
    }
  }
  for (const dir of ['/usr/local/bin', '/usr/bin']) {
    for (const n of await fs.readdir(dir).catch(() => [] as string[])) {
      const m = /^python(3\.\d+)$/.exec(n);
      if (m) minors.add(m[1]!);
    }
  }
  const out: AvailablePython[] = [];
  for (const version of minors) {
    const exe = await findPython(version);
    if (!exe) continue;
    const fromDir = /\/versions\/(3\.\d+\.\d+)\/bin\//.exec(exe)?.[1];
    const full =
      fromDir ?? (await run(exe, ['-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3])'], 30_000)).log.trim().split('\n').pop()!;
    if (/^3\.\d+\.\d+$/.test(full)) out.push({ version, full, exe });
  }
  return out.sort((a, b) => a.version.localeCompare(b.version, undefined, { numeric: true }));
}

function run(file: string, args: string[], timeoutMs: number, vars: Record<string, string> = {}): Promise<{ ok: boolean; log: string }> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      {
        timeout: timeoutMs,
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INPUT: '1', ...vars },
      },
      (err, stdout, stderr) => {
        resolve({ ok: !err, log: `$ ${file} ${args.join(' ')}\n${stdout}${stderr}${err && !stderr ? err.message : ''}` });
      },
    );
  });
}

/** Builds (once) and returns a venv with the task's pinned requirements and pytest. */
export class PythonEnvBuilder {
  private readonly once = new OncePerKey<PreparedEnv>();

  constructor(private readonly cacheDir: string) {}

  async prepare(spec: PythonEnvSpec): Promise<PreparedEnv> {
    const interpreter = await findPython(spec.version);
    if (!interpreter) {
      throw new GymError('ENV_UNAVAILABLE', `no Python ${spec.version} interpreter on this machine (looked in pyenv and /usr/bin)`, {
        python: spec.version,
      });
    }
    const requirements = [...spec.requirements].sort();
    const runner = pytestPinFor(spec.version, requirements);
    const afterInstall = spec.afterInstall ?? [];
    const constraints = [...(spec.constraints ?? [])].sort();
    // afterInstall and constraints join the key only when present, so existing envs keep their keys.
    const key = contentKey({
      format: ENV_FORMAT,
      python: spec.version,
      requirements,
      runner: runner ?? 'from requirements',
      ...(afterInstall.length ? { afterInstall } : {}),
      ...(constraints.length ? { constraints } : {}),
      ...setupKey(spec.setup),
    });
    const dir = path.join(this.cacheDir, 'envs', `py${spec.version}-${key}`);
    // A built env is read without the lock: the ready marker is written last.
    const ready = () => existsSync(path.join(dir, READY_FILE));
    // The sandbox runs on the host's /usr: the system packages are the host's, checked (each time), never installed.
    const hostNotes: string[] = [];
    await requireOnHost(spec.systemPackages ?? [], hostNotes);
    const env = await this.once.run(key, async () => {
      if (!ready()) {
        await withDirLock(`${dir}.lock`, async () => {
          if (ready()) return;
          // A venv whose packages are in but whose setup step failed (data not to be had then) only retries the step.
          if (!existsSync(path.join(dir, INSTALLED_FILE)))
            await this.build(dir, interpreter, [...(runner ? [runner] : []), ...requirements], afterInstall, constraints, !spec.setup);
          if (spec.setup) {
            await this.runSetup(dir, spec.setup);
            await fs.writeFile(path.join(dir, READY_FILE), new Date().toISOString());
          }
        });
      }
      const notes = JSON.parse(await fs.readFile(path.join(dir, NOTES_FILE), 'utf8').catch(() => '[]')) as string[];
      return {
        key,
        kind: 'python' as const,
        path: [path.join(dir, 'bin')],
        vars: { VIRTUAL_ENV: dir },
        readOnlyPaths: [dir, path.dirname(path.dirname(interpreter))],
        command: path.join(dir, 'bin', 'python'),
        notes,
      };
    });
    return hostNotes.length ? { ...env, notes: [...env.notes, ...hostNotes] } : env;
  }

  private async build(
    dir: string,
    interpreter: string,
    packages: string[],
    afterInstall: string[][],
    constraints: string[],
    markReady: boolean,
  ): Promise<void> {
    await fs.rm(dir, { recursive: true, force: true });
    await fs.mkdir(path.dirname(dir), { recursive: true });
    let log = '';
    const venv = await run(interpreter, ['-m', 'venv', dir], 120_000);
    log += venv.log;
    let pipLog = '';
    if (venv.ok) {
      const constraintArgs: string[] = [];
      if (constraints.length) {
        await fs.writeFile(path.join(dir, CONSTRAINTS_FILE), constraints.join('\n') + '\n');
        constraintArgs.push('-c', path.join(dir, CONSTRAINTS_FILE));
      }
      const pip = await run(path.join(dir, 'bin', 'python'), ['-m', 'pip', 'install', '-q', ...constraintArgs, ...packages], 20 * 60_000);
      log += pip.log;
      pipLog = pip.log;
      if (pip.ok) {
        const notes: string[] = [];
        for (const stage of afterInstall) {
          const later = await run(path.join(dir, 'bin', 'python'), ['-m', 'pip', 'install', '-q', ...stage], 20 * 60_000);
          log += later.log;
          if (!later.ok)
            notes.push(
              `after-install \`pip install ${stage.join(' ')}\` failed ` +
                `(${classifyPipFailure(later.log).reason}); the env is used without it`,
            );
        }
        await fs.writeFile(path.join(dir, 'build.log'), log);
        await fs.writeFile(path.join(dir, NOTES_FILE), JSON.stringify(notes));
        await fs.writeFile(path.join(dir, INSTALLED_FILE), new Date().toISOString());
        if (markReady) await fs.writeFile(path.join(dir, READY_FILE), new Date().toISOString());
        return;
      }
    }
    await fs.rm(dir, { recursive: true, force: true });
    const failure = venv.ok ? classifyPipFailure(pipLog) : { code: 'ENV_BUILD_FAILED' as const, reason: 'python -m venv failed' };
    throw new GymError(
      failure.code,
      `could not build the Python env (${packages.join(' ') || 'no requirements'}): ${failure.reason}\n${log.slice(-4000)}`,
      {
        requirements: packages,
        reason: failure.reason,
        log: log.slice(-20_000),
      },
    );
  }

  /** Runs an env's setup step (data it needs) with the env's interpreter; the venv stays when it fails. */
  private async runSetup(dir: string, setup: NonNullable<PythonEnvSpec['setup']>): Promise<void> {
    const script = path.join(dir, SETUP_FILE);
    await fs.writeFile(script, setup.script);
    const input = setupInput(setup);
    const step = await run(path.join(dir, 'bin', 'python'), [script], 20 * 60_000, input ? { BENCHGYM_SETUP_INPUT: input } : {});
    await fs.appendFile(path.join(dir, 'build.log'), step.log);
    if (!step.ok) throw setupFailure(setup, step.log);
  }
}

const NOTES_FILE = '.benchgym-notes.json';
const READY_FILE = '.benchgym-ready';
/** The packages are installed; a setup step may still be to run. */
const INSTALLED_FILE = '.benchgym-installed';
const CONSTRAINTS_FILE = 'benchgym-constraints.txt';
const SETUP_FILE = 'benchgym-setup.py';
