import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { MavenEnvBuilder } from '../../src/env/maven.ts';
import { tempDir } from '../helpers.ts';

/** The Maven warm-up tests' project (maven.test.ts, maven_warm_limit.test.ts): a pom, two test classes, a repository of its own. */
export const POM =
  `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>org.acme</groupId>
  <artifactId>warm</artifactId>
  <version>1.0</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter</artifactId>` +
  `<version>5.10.2</version><scope>test</scope></dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><version>3.13.0</version></plugin>
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-surefire-plugin</artifactId><version>3.2.5</version></plugin>
    </plugins>
  </build>
</project>
`;
export const testClass = (name: string) =>
  `package org.acme;\n\nimport static org.junit.jupiter.api.Assertions.assertEquals;\n\nimport ` +
  `org.junit.jupiter.api.Test;\n\nclass ${name} {\n  @Test\n  void adds() {\n    assertEquals(2, 1 + 1);\n  }\n}\n`;

export const run = (cmd: string, args: string[], cwd: string) =>
  new Promise<{ code: number; out: string }>((resolve) =>
    execFile(cmd, args, { cwd, maxBuffer: 16 * 1024 * 1024 }, (err, out, errOut) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: `${out}${errOut}` }),
    ),
  );
export const haveMaven = (await run('sh', ['-c', 'command -v mvn && command -v javac'], '/')).code === 0;

/** A fresh seed project and a builder with a Maven repository of its own: what the warm-up resolved is all an offline run has. */
export async function makeWarmSeed(): Promise<{ root: string; seed: string; builder: MavenEnvBuilder }> {
  const root = await tempDir('benchgym-maven-warm-');
  const seed = path.join(root, 'seed');
  await fs.mkdir(path.join(seed, 'src', 'test', 'java', 'org', 'acme'), { recursive: true });
  await fs.writeFile(path.join(seed, 'pom.xml'), POM);
  for (const name of ['ATest', 'BTest'])
    await fs.writeFile(path.join(seed, 'src', 'test', 'java', 'org', 'acme', `${name}.java`), testClass(name));
  return { root, seed, builder: new MavenEnvBuilder(path.join(root, 'cache')) };
}

/** The helpers over one seed (`at` gives its folders once `makeWarmSeed` has run). */
export function warmHelpers(at: () => { root: string; seed: string }) {
  /** A copy of the seed with a test that never ends (with `once`: only on the run that creates that file). */
  const seedWithHangTest = async (name: string, once?: string) => {
    const dir = path.join(at().root, name);
    await fs.cp(at().seed, dir, { recursive: true });
    const hang = once
      ? `if (new java.io.File(${JSON.stringify(once)}).createNewFile()) Thread.sleep(Long.MAX_VALUE);`
      : 'Thread.sleep(Long.MAX_VALUE);';
    await fs.writeFile(
      path.join(dir, 'src', 'test', 'java', 'org', 'acme', 'HangTest.java'),
      `package org.acme;\n\nimport org.junit.jupiter.api.Test;\n\nclass HangTest ` +
        `{\n  @Test\n  void waitsForever() throws Exception {\n    ${hang}\n  }\n}\n`,
    );
    return dir;
  };

  /** An offline run of BTest in a copy of `dir` passes with what the builder's warm-up resolved. */
  const assertOfflineRun = async (b: MavenEnvBuilder, dir: string, name: string) => {
    const work = path.join(at().root, name);
    await fs.cp(dir, work, { recursive: true });
    const r = await run('mvn', ['-o', '-B', `-Dmaven.repo.local=${b.repository}`, '-Dtest=org.acme.BTest', 'test'], work);
    assert.equal(r.code, 0, r.out.slice(-3000));
  };

  const marker = async (key: string) =>
    JSON.parse(await fs.readFile(path.join(at().root, 'cache', 'envs', `maven-${key}.ready`), 'utf8')) as { ran: string };

  return { seedWithHangTest, assertOfflineRun, marker };
}
