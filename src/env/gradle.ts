import { execFile } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GymError } from '../errors.ts';
import type { JavaEnvSpec } from '../tasks/schema.ts';
import { contentKey } from './key.ts';
import { OncePerKey, withDirLock } from './lock.ts';
import type { PreparedEnv } from './types.ts';
import { buildFiles } from './workspace.ts';
import { chooseJdk, installedJdks } from './jdk.ts';

/**
 * A Gradle env: the wrapper's distribution and the project's dependencies fetched once into
 * a shared Gradle user home (`<cache>/gradle`, with network, on the host) by running the
 * tests once, so tests then run with `--offline`. The project's wrapper is used when it has
 * one, else `gradle` from PATH.
 */
export class GradleEnvBuilder {
  private readonly once = new OncePerKey<PreparedEnv>();

  constructor(private readonly cacheDir: string) {}

  get userHome(): string {
    return path.join(this.cacheDir, 'gradle');
  }

  async prepare(spec: JavaEnvSpec, seed: { dir?: string; files?: Record<string, string> }): Promise<PreparedEnv> {
    const dir = seed.dir;
    if (!dir) throw new GymError('ENV_BUILD_FAILED', 'a Gradle task needs a directory workspace');
    const wrapper = existsSync(path.join(dir, 'gradlew'));
    if (!wrapper && !(await onPath('gradle'))) throw new GymError('ENV_UNAVAILABLE', 'the project has no gradlew and there is no gradle on this machine');
    const command = wrapper ? './gradlew' : 'gradle';
    const jdk = chooseJdk(spec.jdk, await installedJdks());
    const javaVars: Record<string, string> = jdk ? { JAVA_HOME: jdk.home } : {};
    const key = contentKey({ format: 1, build: await buildFiles(dir), args: spec.args, command, jdk: jdk?.major });
    const marker = path.join(this.cacheDir, 'envs', `gradle-${key}.ready`);
    const env: PreparedEnv = {
      key,
      kind: 'java',
      path: jdk ? [path.join(jdk.home, 'bin')] : [],
      vars: { GRADLE_USER_HOME: this.userHome, GRADLE_OPTS: '-Dorg.gradle.daemon=false', ...javaVars },
      readOnlyPaths: [this.userHome, ...(jdk ? [jdk.home] : [])],
      command,
      notes: jdk && jdk.major !== spec.jdk ? [`JDK ${spec.jdk} asked for, JDK ${jdk.major} used`] : [],
    };
    return this.once.run(key, () =>
      withDirLock(`${marker}.lock`, async () => {
        if (existsSync(marker)) return env;
        const work = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-gradle-'));
        try {
          await fs.cp(dir, work, { recursive: true });
          const args = ['--no-daemon', '--continue', ...spec.args, 'test'];
          const log = await new Promise<{ ok: boolean; text: string }>((resolve) =>
            execFile(command, args, { cwd: work, timeout: 30 * 60_000, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, GRADLE_USER_HOME: this.userHome, ...javaVars } }, (err, out, errOut) =>
              resolve({ ok: !err, text: `$ ${command} ${args.join(' ')}\n${out}${errOut}` }),
            ),
          );
          if (/Could not resolve|Could not download|Could not GET|UnknownHostException|Could not install Gradle distribution/.test(log.text) || /Compilation failed|compileJava FAILED|Could not compile/.test(log.text)) {
            throw new GymError('ENV_BUILD_FAILED', `the Gradle build could not fetch its dependencies or compile:\n${log.text.slice(-4000)}`, { log: log.text.slice(-20_000) });
          }
          await fs.mkdir(path.dirname(marker), { recursive: true });
          await fs.writeFile(marker, new Date().toISOString());
          return env;
        } finally {
          await fs.rm(work, { recursive: true, force: true });
        }
      }),
    );
  }
}

function onPath(command: string): Promise<boolean> {
  return new Promise((resolve) => execFile('sh', ['-c', `command -v ${command}`], (err) => resolve(!err)));
}
