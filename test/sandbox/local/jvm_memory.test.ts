import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { LocalSandboxFactory } from '../../../src/sandbox/local/index.ts';
import { CgroupDriver } from '../../../src/sandbox/local/cgroup.ts';
import { jvmMemoryVars } from '../../../src/sandbox/local/jvm_memory.ts';
import { tempDir } from '../../helpers.ts';

const driver = await CgroupDriver.detect();
const hasJava = (() => {
  try {
    execFileSync('java', ['-version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const skip = !hasJava
  ? 'no java on this machine'
  : !driver?.limitsMemory
    ? 'no memory cgroup here: the local sandbox has no memory limit to tell'
    : false;

const LOAD = `import java.lang.management.ManagementFactory;

public class Load {
  public static void main(String[] args) {
    var os = ManagementFactory.getOperatingSystemMXBean();
    System.out.println("load " + os.getSystemLoadAverage());
    System.out.println("processors " + os.getAvailableProcessors());
  }
}
`;

describe('local sandbox: a JVM is told the memory limit', () => {
  test('jvmMemoryVars: added to a Java env only, after its own options, never twice', () => {
    assert.deepEqual(jvmMemoryVars({ JAVA_TOOL_OPTIONS: '-Xss4m' }, 6 * 1024 ** 3), { JAVA_TOOL_OPTIONS: '-Xss4m -XX:MaxRAM=6442450944' });
    assert.deepEqual(jvmMemoryVars({ JAVA_HOME: '/jdk' }, 1024), { JAVA_TOOL_OPTIONS: '-XX:MaxRAM=1024' });
    assert.deepEqual(jvmMemoryVars({ VIRTUAL_ENV: '/venv' }, 1024), {}, 'not a Java env');
    assert.deepEqual(jvmMemoryVars({ JAVA_HOME: '/jdk' }, undefined), {}, 'no limit to tell');
    assert.deepEqual(jvmMemoryVars({ JAVA_TOOL_OPTIONS: '-XX:MaxRAM=1g' }, 1024), {}, "the env's own choice stands");
    // Under bubblewrap (a cgroup namespace): the JVM's container support off, with or without a limit.
    assert.deepEqual(jvmMemoryVars({ JAVA_TOOL_OPTIONS: '-Xss4m' }, 1024, { namespacedCgroup: true }), {
      JAVA_TOOL_OPTIONS: '-Xss4m -XX:MaxRAM=1024 -XX:-UseContainerSupport',
    });
    assert.deepEqual(jvmMemoryVars({ JAVA_HOME: '/jdk' }, undefined, { namespacedCgroup: true }), {
      JAVA_TOOL_OPTIONS: '-XX:-UseContainerSupport',
    });
    assert.deepEqual(
      jvmMemoryVars({ JAVA_TOOL_OPTIONS: '-XX:+UseContainerSupport' }, undefined, { namespacedCgroup: true }),
      {},
      "the env's own choice stands",
    );
    assert.deepEqual(jvmMemoryVars({ VIRTUAL_ENV: '/venv' }, 1024, { namespacedCgroup: true }), {}, 'not a Java env');
  });

  describe('in a sandbox', { skip }, () => {
    let baseDir: string;
    let factory: LocalSandboxFactory;
    before(async () => {
      baseDir = await tempDir('benchgym-jvm-memory-');
      factory = new LocalSandboxFactory({ baseDir });
    });
    after(() => fs.rm(baseDir, { recursive: true, force: true }));

    const maxHeap = async (vars: Record<string, string>) => {
      const sb = await factory.create({ seed: { files: { 'a.txt': 'a' } }, env: { vars, memoryBytes: 4 * 1024 ** 3 } });
      try {
        const r = await sb.exec(
          "java -XX:+PrintFlagsFinal -version 2>/dev/null | sed -n 's/^ *size_t MaxHeapSize *= *\\([0-9]*\\).*/\\1/p'",
        );
        assert.equal(r.exitCode, 0, r.stderr);
        return Number(r.stdout.trim());
      } finally {
        await sb.destroy();
      }
    };

    test("a Java env's JVM sizes its heap from the sandbox's 4 GiB (a quarter), not from the host", async () => {
      assert.equal(await maxHeap({ JAVA_TOOL_OPTIONS: '-Xss4m' }), 1024 ** 3);
    });

    test("a Java env's JVM reads the system's load (JDK 17's cgroup metrics threw under bubblewrap on cgroup v1)", async () => {
      const sb = await factory.create({
        seed: { files: { 'Load.java': LOAD } },
        env: { vars: { JAVA_TOOL_OPTIONS: '-Xss4m' }, memoryBytes: 4 * 1024 ** 3 },
      });
      try {
        const r = await sb.exec('java Load.java 2>&1');
        assert.equal(r.exitCode, 0, r.stdout);
        assert.match(r.stdout, /^processors [1-9]\d*$/m, r.stdout);
      } finally {
        await sb.destroy();
      }
    });
  });
});
