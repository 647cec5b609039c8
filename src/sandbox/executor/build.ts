import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, constants as C, existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GymError } from '../../errors.ts';
import { OncePerKey, withDirLock } from '../../lock.ts';

/** The executor's Go source (a module with no dependencies): Go, for one static binary every image runs as it is. */
export const EXECUTOR_SOURCE_DIR = fileURLToPath(new URL('./go/', import.meta.url));
export const EXECUTOR_BINARY_NAME = 'benchgym-executor';
/**
 * Binaries the package ships, built at pack time (`npm run build`): `linux-<arch>/benchgym-executor`
 * and `linux-<arch>/version`, the source hash it was built from. Absent in a checkout.
 */
export const EXECUTOR_PREBUILT_DIR = fileURLToPath(new URL('./prebuilt/', import.meta.url));

const GO_CANDIDATES = ['/usr/local/go/bin/go', '/usr/lib/go/bin/go', '/usr/bin/go'];
const BUILD_TIMEOUT_MS = 10 * 60_000;
/** The oldest Go the executor builds with (its go.mod's `go` line). */
const GO_VERSION = '1.22';

export type ExecutorArch = 'amd64' | 'arm64';

export interface ExecutorBuildOptions {
  /** The binary goes to `<cacheDir>/executor/<hash>/benchgym-executor`. */
  cacheDir: string;
  /** Target architecture (default: this machine's); Linux always, the sandboxes are. */
  arch?: ExecutorArch;
  /** The go command (default: $BENCHGYM_GO, then PATH, then the usual install places). */
  go?: string;
}

/** This machine's architecture in Go's names. */
export function hostArch(): ExecutorArch {
  if (process.arch === 'x64') return 'amd64';
  if (process.arch === 'arm64') return 'arm64';
  throw new GymError('SANDBOX_UNAVAILABLE', `the executor is built for amd64 and arm64 only, not ${process.arch}`);
}

/** The go command to build with, or null when there is none. */
export function findGo(explicit?: string): string | null {
  const runnable = (p: string) => {
    try {
      accessSync(p, C.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (explicit) return runnable(explicit) ? explicit : null;
  if (process.env.BENCHGYM_GO) return runnable(process.env.BENCHGYM_GO) ? process.env.BENCHGYM_GO : null;
  const onPath = (process.env.PATH ?? '')
    .split(':')
    .filter(Boolean)
    .map((d) => path.join(d, 'go'));
  return [...onPath, ...GO_CANDIDATES].find(runnable) ?? null;
}

/** A hash of the source files and the target: the binary's cache key and its version string. */
export async function executorSourceHash(arch: ExecutorArch = hostArch()): Promise<string> {
  const names = (await fs.readdir(EXECUTOR_SOURCE_DIR)).filter((n) => n.endsWith('.go') || n === 'go.mod').sort();
  const h = createHash('sha256').update(`linux/${arch}\0`);
  for (const name of names)
    h.update(`${name}\0`)
      .update(await fs.readFile(path.join(EXECUTOR_SOURCE_DIR, name)))
      .update('\0');
  return h.digest('hex').slice(0, 16);
}

const builds = new OncePerKey<string>();

/**
 * The executor binary for this source: the package's prebuilt one for this architecture when
 * it is there and reports this source's hash, else built on first use (static: CGO_ENABLED=0);
 * either is put in the cache under a lock, so parallel first uses, in this process or others,
 * do it once.
 *
 * @example
 *   const bin = await ensureExecutorBinary({ cacheDir: '/var/cache/benchgym' });
 */
export async function ensureExecutorBinary(opts: ExecutorBuildOptions): Promise<string> {
  const arch = opts.arch ?? hostArch();
  const hash = await executorSourceHash(arch);
  const dir = path.join(opts.cacheDir, 'executor', hash);
  const binary = path.join(dir, EXECUTOR_BINARY_NAME);
  if (existsSync(binary)) return binary;
  return builds.run(binary, () =>
    withDirLock(`${dir}.lock`, async () => {
      if (existsSync(binary)) return binary;
      await fs.mkdir(dir, { recursive: true });
      if (await copyPrebuilt(arch, hash, binary)) return binary;
      const go = findGo(opts.go);
      if (!go) throw executorMissing(arch, opts.go);
      const tmp = `${binary}.${process.pid}.${Date.now()}.tmp`;
      try {
        await goBuild(go, arch, hash, tmp, opts.cacheDir);
        await fs.rename(tmp, binary);
      } finally {
        await fs.rm(tmp, { force: true });
      }
      return binary;
    }),
  );
}

/**
 * Every sandbox runs its commands and file operations through the executor: without a binary
 * no sandbox can start. Says how to get one (the package's prebuilt binaries, or Go).
 */
function executorMissing(arch: ExecutorArch, explicitGo?: string): GymError {
  const where = explicitGo ? `at ${explicitGo}` : `on PATH, at $BENCHGYM_GO or at ${GO_CANDIDATES.join(', ')}`;
  return new GymError(
    'SANDBOX_UNAVAILABLE',
    `no sandbox can start without the in-sandbox executor, and there is none for linux-${arch}: ` +
      `this installation ships no prebuilt executor of this source, and building it needs the Go toolchain ` +
      `(Go ${GO_VERSION} or later), which was not found ${where}. Install Go (https://go.dev/dl) and put it on PATH ` +
      `or point $BENCHGYM_GO at its go command, or install benchgym from its npm package, ` +
      `which ships the executor prebuilt for linux amd64 and arm64`,
    { executorMissing: true },
  );
}

/**
 * Copies the package's prebuilt binary for `arch` to `binary` when its version file names `hash`
 * and (on this machine's architecture) the binary itself reports it; false when there is none
 * or it is not this source's, so the caller builds from source.
 */
async function copyPrebuilt(arch: ExecutorArch, hash: string, binary: string): Promise<boolean> {
  const dir = path.join(EXECUTOR_PREBUILT_DIR, `linux-${arch}`);
  const shipped = await fs.readFile(path.join(dir, 'version'), 'utf8').catch(() => null);
  if (shipped?.trim() !== hash) return false;
  const tmp = `${binary}.${process.pid}.${Date.now()}.tmp`;
  try {
    await fs.copyFile(path.join(dir, EXECUTOR_BINARY_NAME), tmp);
    await fs.chmod(tmp, 0o755);
    if (arch === hostArch() && !(await reportsVersion(tmp, hash))) return false;
    await fs.rename(tmp, binary);
    return true;
  } catch {
    return false;
  } finally {
    await fs.rm(tmp, { force: true });
  }
}

/** Whether `binary --version` names `hash` (a binary of another source, or a broken copy, does not). */
function reportsVersion(binary: string, hash: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(binary, ['--version'], { timeout: 10_000 }, (err, stdout) => resolve(!err && stdout.startsWith(`benchgym-executor ${hash} `)));
  });
}

/** Builds the executor for `arch` into `out` (the package's prebuilt binaries are made with it at pack time). */
export async function buildExecutorTo(out: string, opts: { arch: ExecutorArch; go: string; cacheDir: string }): Promise<string> {
  const hash = await executorSourceHash(opts.arch);
  await goBuild(opts.go, opts.arch, hash, out, opts.cacheDir);
  return hash;
}

function goBuild(go: string, arch: ExecutorArch, hash: string, out: string, cacheDir: string): Promise<void> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CGO_ENABLED: '0',
    GOOS: 'linux',
    GOARCH: arch,
    // Never a download: no toolchain switch, no module proxy, no workspace file from above.
    GOTOOLCHAIN: 'local',
    GOPROXY: 'off',
    GOFLAGS: '',
    GOWORK: 'off',
    GO111MODULE: 'on',
  };
  if (!env.GOCACHE && !env.HOME && !env.XDG_CACHE_HOME) env.GOCACHE = path.join(cacheDir, 'executor', 'go-build');
  return new Promise((resolve, reject) => {
    execFile(
      go,
      ['build', '-trimpath', '-buildvcs=false', '-ldflags', `-s -w -X main.version=${hash}`, '-o', out, '.'],
      { cwd: EXECUTOR_SOURCE_DIR, env, timeout: BUILD_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
      (err, _stdout, stderr) => {
        if (!err) return resolve();
        reject(
          new GymError(
            'SANDBOX_UNAVAILABLE',
            `building the in-sandbox executor with ${go} failed: ${(stderr || err.message).trim().slice(-2000)}`,
          ),
        );
      },
    );
  });
}
