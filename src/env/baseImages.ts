import { spawn } from 'node:child_process';
import path from 'node:path';
import type Docker from 'dockerode';
import { GymError } from '../errors.ts';
import { PROJECT_ROOT } from '../tasks/registry.ts';
import { BASE_IMAGES, baseImageName } from './images.ts';

export interface BaseImageSpec {
  kind: 'python' | 'java';
  version: string;
}

/** What each offline base image is made of: a Debian suite and its packages. */
export function debootstrapRecipe(spec: BaseImageSpec): { suite: string; packages: string[] } {
  const suite = BASE_IMAGES[spec.kind][spec.version];
  if (!suite) throw new GymError('INVALID_ARGUMENT', `no base image recipe for ${spec.kind} ${spec.version} (have: ${Object.keys(BASE_IMAGES[spec.kind]).join(', ')})`);
  const common = ['git', 'patch', 'coreutils', 'findutils'];
  return spec.kind === 'python'
    ? { suite, packages: ['python3', 'python3-venv', 'python3-pip', ...common] }
    : { suite, packages: [`openjdk-${spec.version}-jdk-headless`, 'maven', ...common] };
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
    child.on('close', (code) => (code === 0 ? resolve() : reject(new GymError('ENV_BUILD_FAILED', `${cmd} ${args.join(' ')} exited ${code}:\n${tail}`))));
  });
}

/**
 * Builds a base image: offline with debootstrap + `docker import` (no registry needed), or
 * from the official images (`FROM python:3.x-slim`, `maven:…-eclipse-temurin`) when one is reachable.
 */
export async function buildBaseImage(docker: Docker, spec: BaseImageSpec, opts: { from: 'debootstrap' | 'registry'; force?: boolean; onLine?: (l: string) => void }): Promise<{ tag: string; built: boolean }> {
  const tag = baseImageName(spec.kind, spec.version);
  const exists = await docker.getImage(tag).inspect().then(() => true, () => false);
  if (exists && !opts.force) return { tag, built: false };
  const onLine = opts.onLine ?? (() => {});
  if (opts.from === 'debootstrap') {
    const { suite, packages } = debootstrapRecipe(spec);
    await run('bash', [path.join(PROJECT_ROOT, 'docker', 'build-base.sh'), suite, tag, ...packages], onLine);
  } else {
    const file = path.join(PROJECT_ROOT, 'docker', 'base', `${spec.kind}.Dockerfile`);
    const arg = spec.kind === 'python' ? `PYTHON=${spec.version}` : `JDK=${spec.version}`;
    await run('docker', ['build', '--network', 'host', '--build-arg', arg, '-t', tag, '-f', file, path.dirname(file)], onLine);
  }
  return { tag, built: true };
}
