import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { buildTasks, type BuildOptions, type BuildReport } from '../../../envs/humanevo/builder.ts';
import type { BuiltTaskRecord } from '../../../envs/humanevo/record.ts';
import { LocalSandboxFactory } from '../../../src/sandbox/local/index.ts';
import { TEST_CACHE_DIR, tempDir } from '../../helpers.ts';
import { buildJavaFixture, buildPythonFixture, type FixtureExpectation } from './fixtures.ts';

export interface BuiltFixture {
  dir: string;
  repo: string;
  commits: Record<string, string>;
  expect: FixtureExpectation;
  records: BuiltTaskRecord[];
  report: BuildReport;
  /** The records as a task file (`--suite humanevo=FILE`). */
  file: string;
  cleanup(): Promise<void>;
}

/**
 * Builds a fixture repository and runs the task builder on it with real test runs in local
 * sandboxes (venvs and the Maven repository from the shared test cache). Materialised
 * workspaces go to a folder of their own, removed by cleanup().
 */
export async function buildFixture(
  language: 'python' | 'java',
  { compileLevel, ...opts }: Partial<Pick<BuildOptions, 'limit' | 'to' | 'testScope'>> & { compileLevel?: string } = {},
): Promise<BuiltFixture> {
  const dir = await tempDir('benchgym-humanevo-');
  process.env.BENCHGYM_HUMANEVO_CACHE = path.join(dir, 'workspaces');
  const fixture =
    language === 'python'
      ? await buildPythonFixture(path.join(dir, 'repo'))
      : await buildJavaFixture(path.join(dir, 'repo'), { compileLevel });
  const sandboxes = new LocalSandboxFactory({ baseDir: path.join(dir, 'sandboxes'), cacheDir: TEST_CACHE_DIR });
  const records: BuiltTaskRecord[] = [];
  let report: BuildReport;
  try {
    report = await buildTasks({
      repo: fixture.repo,
      language,
      env:
        language === 'python'
          ? { kind: 'python', version: '3.11', requirements: [] }
          : { kind: 'java', jdk: '17', build: 'maven', args: [] },
      sandboxes,
      testTimeoutMs: 300_000,
      onTask: (r) => void records.push(r),
      ...opts,
      ...(opts.to ? { to: fixture.commits[opts.to] ?? opts.to } : {}),
    });
  } finally {
    await sandboxes.close();
  }
  const file = path.join(dir, 'tasks.jsonl');
  await fs.writeFile(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return {
    dir,
    repo: fixture.repo,
    commits: fixture.commits,
    expect: fixture.expect,
    records,
    report,
    file,
    cleanup: () => fs.rm(dir, { recursive: true, force: true }),
  };
}

/** The Java fixture build (Maven 6 times, about a minute) runs wherever Maven and a JDK are installed (issue 17, point 4: in CI). */
export const SKIP_JAVA_BUILD: string | false =
  onPath('mvn') && onPath('javac') ? false : 'the Java fixture build needs Maven and a JDK (mvn and javac on PATH)';

function onPath(cmd: string): boolean {
  return (process.env.PATH ?? '').split(path.delimiter).some((d) => d && existsSync(path.join(d, cmd)));
}
