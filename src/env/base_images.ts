import { spawn } from 'node:child_process';
import path from 'node:path';
import type Docker from 'dockerode';
import { GymError } from '../errors.ts';
import { PROJECT_ROOT } from '../project.ts';
import { BASE_IMAGES, baseImageName } from './images.ts';
import { ownValue } from '../own.ts';
import { findPython } from './python.ts';

export interface BaseImageSpec {
  kind: 'python' | 'java';
  version: string;
}

/**
 * Python versions Debian does not package in any suite benchgym builds from: their offline
 * base images take the interpreter this host has (pyenv builds it against the host's
 * Debian, bookworm, whose shared libraries the image then installs).
 */
export const HOST_INTERPRETER_PYTHONS = new Set(['3.7', '3.10']);

/**
 * The run-time libraries of a CPython built from source on bookworm (ssl, ctypes, sqlite3,
 * bz2, lzma, readline, curses, dbm, uuid), a C toolchain, since old pins often only have
 * source distributions for these interpreters (pip builds them, as in the local backend),
 * and libsndfile, which soundfile before 0.11 loads from the system (librosa problems; the host has it, so the local backend does too).
 */
const HOST_PYTHON_PACKAGES = [
  'libssl3',
  'libffi8',
  'libsqlite3-0',
  'libbz2-1.0',
  'liblzma5',
  'libreadline8',
  'libncursesw6',
  'zlib1g',
  'libuuid1',
  'libgdbm6',
  'libexpat1',
  'libsndfile1',
  'gcc',
  'g++',
  'make',
  'libc6-dev',
];

/**
 * A C toolchain and the suite's Python headers, so that pip builds a pin that has only a source
 * distribution (infrared's netifaces==0.11.0) as the local backend does with the host's gcc.
 */
const DEBIAN_PYTHON_BUILD = ['python3-dev', 'gcc', 'g++', 'make', 'libc6-dev'];

/** What each offline base image is made of: a Debian suite, its packages, and whether the host's interpreter is copied in. */
export function debootstrapRecipe(spec: BaseImageSpec): { suite: string; packages: string[]; hostInterpreter: boolean } {
  const suite = ownValue(BASE_IMAGES[spec.kind], spec.version);
  if (!suite)
    throw new GymError(
      'INVALID_ARGUMENT',
      `no base image recipe for ${spec.kind} ${spec.version} (have: ${Object.keys(BASE_IMAGES[spec.kind]).join(', ')})`,
    );
  const common = ['git', 'patch', 'coreutils', 'findutils'];
  if (spec.kind === 'java')
    return { suite, packages: [`openjdk-${spec.version}-jdk-headless`, 'maven', ...common], hostInterpreter: false };
  if (HOST_INTERPRETER_PYTHONS.has(spec.version)) return { suite, packages: [...HOST_PYTHON_PACKAGES, ...common], hostInterpreter: true };
  return { suite, packages: ['python3', 'python3-venv', 'python3-pip', ...DEBIAN_PYTHON_BUILD, ...common], hostInterpreter: false };
}

function run(cmd: string, args: string[], onLine: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const feed = (b: Buffer) => {
      const text = b.toString();
      tail = (tail + text).slice(-4000);
      for (const line of text.split('\n')) if (line.trim()) onLine(line);
    };
    child.stdout.on('data', feed);
    child.stderr.on('data', feed);
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new GymError('ENV_BUILD_FAILED', `${cmd} ${args.join(' ')} exited ${code}:\n${tail}`)),
    );
  });
}

/**
 * Builds a base image: offline with debootstrap + `docker import` (no registry needed; for
 * Python 3.7 and 3.10 with the host's pyenv interpreter copied in), or from the official
 * images (`FROM python:3.x-slim`, `maven:…-eclipse-temurin`) when one is reachable.
 */
export async function buildBaseImage(
  docker: Docker,
  spec: BaseImageSpec,
  opts: { from: 'debootstrap' | 'registry'; force?: boolean; onLine?: (l: string) => void },
): Promise<{ tag: string; built: boolean }> {
  const tag = baseImageName(spec.kind, spec.version);
  const exists = await docker
    .getImage(tag)
    .inspect()
    .then(
      () => true,
      () => false,
    );
  if (exists && !opts.force) return { tag, built: false };
  const onLine = opts.onLine ?? (() => {});
  if (opts.from === 'debootstrap') {
    const { suite, packages, hostInterpreter } = debootstrapRecipe(spec);
    const prefixArgs: string[] = [];
    if (hostInterpreter) {
      const exe = await findPython(spec.version);
      if (!exe) {
        throw new GymError(
          'ENV_UNAVAILABLE',
          `Debian packages no Python ${spec.version}, and this host has none to copy in (e.g. \`pyenv ` +
            `install ${spec.version}\`); or build from a registry: \`benchgym images base --python ${spec.version} --from registry\``,
          { python: spec.version },
        );
      }
      prefixArgs.push('--python-prefix', path.dirname(path.dirname(exe)));
    }
    await run('bash', [path.join(PROJECT_ROOT, 'docker', 'build-base.sh'), ...prefixArgs, suite, tag, ...packages], onLine);
  } else {
    const file = path.join(PROJECT_ROOT, 'docker', 'base', `${spec.kind}.Dockerfile`);
    const arg = spec.kind === 'python' ? `PYTHON=${spec.version}` : `JDK=${spec.version}`;
    await run('docker', ['build', '--network', 'host', '--build-arg', arg, '-t', tag, '-f', file, path.dirname(file)], onLine);
  }
  return { tag, built: true };
}
