import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { INSTANCE_SPECS, instanceTask, readInstances, specFor, swebenchSuite } from '../../../envs/swebench/index.ts';
import { findChange } from '../../../envs/swebench/reconstruct.ts';
import { assertEnvAvailable } from '../../../src/env/index.ts';
import { GymError } from '../../../src/errors.ts';
import { locateMirror } from '../../../src/repo/source.ts';
import { runGit } from '../../../src/repo/git.ts';
import { SWEBENCH_JAVA_DIR } from './data.ts';

// The Maven repositories of the Multi-SWE-bench records (jackson-core, jackson-dataformat-xml,
// fastjson2, dubbo, guava): their specs, checked against the records and, when mirrors are
// given (BENCHGYM_MIRRORS=DIR, as for `--repos-dir`), against the base commits' poms.
const MULTI = path.join(SWEBENCH_JAVA_DIR, 'multi-swe-bench-bytedance-java');
const JACKSON_CORE = path.join(MULTI, 'fasterxml__jackson-core_dataset.jsonl');
const JACKSON_XML = path.join(MULTI, 'fasterxml__jackson-dataformat-xml_dataset.jsonl');
const NO_DATA = existsSync(JACKSON_CORE) ? false : `the Multi-SWE-bench records are not at ${MULTI}`;
const MIRRORS = process.env.BENCHGYM_MIRRORS;
/** The verified jackson-core instances without a Multi-SWE-bench record, reconstructed from the history (150's change is not in it). */
const RECONSTRUCTED_CORE = [380, 894, 973, 1133].map((n) => `fasterxml__jackson-core-${n}`);

/** The mirror of `repo` in BENCHGYM_MIRRORS, and each id's pom.xml at the base of the change `findChange` finds for it. */
async function reconstructedBasePoms(repo: string, ids: string[]): Promise<{ mirror: string; poms: [string, string][] }> {
  const mirror = await locateMirror(repo, MIRRORS!);
  assert.ok(mirror, `no ${repo} mirror in ${MIRRORS}`);
  const poms: [string, string][] = [];
  for (const id of ids) {
    const change = await findChange(mirror, Number(id.split('-').at(-1)));
    assert.ok(change, `${id}: its change is in the history`);
    const pom = await runGit(['show', `${change.base}:pom.xml`], { cwd: mirror });
    assert.equal(pom.exitCode, 0, `${id}: pom.xml at ${change.base}`);
    poms.push([id, pom.stdout]);
  }
  return { mirror, poms };
}

describe('swe-bench-java: Maven repositories of the Multi-SWE-bench records', () => {
  test(
    'jackson: a snapshot parent becomes its release in a build-setup edit; 6 GiB sandboxes; notes of both levels',
    { skip: NO_DATA },
    async () => {
      const tasks = await swebenchSuite({ reposDir: '/nowhere', allowNetwork: false }).load(JACKSON_CORE);
      assert.equal(tasks.length, 18);
      const t1309 = tasks.find((t) => t.id === 'fasterxml__jackson-core-1309')!;
      assert.deepEqual(t1309.workspace.type === 'git' && t1309.workspace.edits, [
        {
          file: 'pom.xml',
          find: '<artifactId>jackson-base</artifactId>\n    <version>2.17.2-SNAPSHOT</version>',
          replace: '<artifactId>jackson-base</artifactId>\n    <version>2.17.2</version>',
        },
      ]);
      assert.deepEqual(t1309.resources, { memoryMb: 6144 });
      assert.match(String(t1309.metadata.spec_note), /6 GiB.*; parent jackson-base 2\.17\.2-SNAPSHOT is not on Maven Central/);
      // A base whose parent is a release (2.16.0) has no edit.
      const t1142 = tasks.find((t) => t.id === 'fasterxml__jackson-core-1142')!;
      assert.deepEqual(t1142.workspace.type === 'git' && t1142.workspace.edits, []);
      // Every edit names an instance that exists (a record, or one of the verified jackson-core ids without one,
      // which are reconstructed), and turns a snapshot into a release.
      const ids = new Set([
        ...tasks.map((t) => t.id),
        ...(await readInstances(JACKSON_XML)).map((i) => i.instanceId),
        ...RECONSTRUCTED_CORE,
      ]);
      for (const [id, spec] of Object.entries(INSTANCE_SPECS).filter(([id]) => /^fasterxml__jackson-(core|dataformat-xml)-/.test(id))) {
        assert.ok(ids.has(id), `${id} is an instance of the records or a reconstructed one`);
        for (const e of spec.edits ?? []) {
          assert.match(e.find, /-SNAPSHOT</);
          assert.doesNotMatch(e.replace, /SNAPSHOT/);
        }
      }
      // dataformat-xml 531 and 544: ListAsObjectTest needs java.util opened on JDK 17; the parent edit stays.
      for (const id of ['fasterxml__jackson-dataformat-xml-531', 'fasterxml__jackson-dataformat-xml-544']) {
        const spec = specFor('fasterxml/jackson-dataformat-xml', '', id);
        assert.deepEqual((spec as { args?: string[] }).args, ['-DargLine=--add-opens=java.base/java.util=ALL-UNNAMED'], id);
        assert.match(String(spec.note), /parent jackson-base 2\.14\.0-SNAPSHOT.*; java\.util opened to the test fork/, id);
        assert.equal(spec.edits?.length, 1, id);
      }
      // fastjson2: Maven itself was killed at 2 GiB.
      assert.equal(specFor('alibaba/fastjson2', '', 'alibaba__fastjson2-82').memoryMb, 6144);
      // fastjson2-1245: its FAIL_TO_PASS reads EnumSet.elementType by reflection (JDK 8's harness allowed it); only that instance.
      assert.deepEqual((specFor('alibaba/fastjson2', '', 'alibaba__fastjson2-1245') as { args?: string[] }).args, [
        '-DargLine=--add-opens=java.base/java.util=ALL-UNNAMED',
      ]);
      assert.equal(specFor('alibaba/fastjson2', '', 'alibaba__fastjson2-1245').memoryMb, 6144);
      assert.deepEqual((specFor('alibaba/fastjson2', '', 'alibaba__fastjson2-82') as { args?: string[] }).args, []);
      // dubbo-7041 (2.7.9, before the poms' jdk15ge profile): the profile's opens through the `argline` property; the repository's skips
      // kept; the later instances as the repository.
      const dubbo = (specFor('apache/dubbo', '', 'apache__dubbo-7041') as { args: string[] }).args;
      assert.deepEqual(dubbo.slice(0, 3), ['-Dcheckstyle.skip=true', '-Drat.skip=true', '-Djacoco.skip=true']);
      assert.match(
        dubbo[3]!,
        new RegExp(
          String.raw`^-Dargline=-server .*-XX:MaxMetaspaceSize=128m --add-opens=java\.base\/java\.lang=ALL-UNNAMED ` +
            String.raw`--add-opens=java\.base\/java\.math=ALL-UNNAMED --add-opens=java\.base\/java\.util=ALL-UNNAMED$`,
        ),
      );
      // dubbo-9187 (2.7.16-SNAPSHOT, reconstructed) is a 2.7 base too: the same opens.
      assert.deepEqual((specFor('apache/dubbo', '', 'apache__dubbo-9187') as { args: string[] }).args, dubbo);
      assert.deepEqual((specFor('apache/dubbo', '', 'apache__dubbo-11781') as { args: string[] }).args, [
        '-Dcheckstyle.skip=true',
        '-Drat.skip=true',
        '-Djacoco.skip=true',
      ]);
      // gson's instance note still adds to its repository's.
      assert.match(String(specFor('google/gson', '', 'google__gson-1555').note), /^JDK 11 in SWE-bench-java.*; the pom hard-codes/);
    },
  );

  test(
    "dubbo: NetUtilsTest's address tests (a network interface besides loopback) are left out of the runs and the lists, and said so",
    { skip: NO_DATA },
    async () => {
      const left = [
        'testGetLocalAddress',
        'testLocalHost',
        'testFindNetworkInterface',
        'testIgnoreGivenInterface',
        'testIgnoreGivenPrefixInterfaceName',
      ].map((m) => `org.apache.dubbo.common.utils.NetUtilsTest#${m}`);
      const instances = await readInstances(path.join(MULTI, 'apache__dubbo_dataset.jsonl'));
      assert.equal(instances.length, 3);
      for (const inst of instances) {
        const task = instanceTask('swe-bench-java', inst);
        // 10638's ServiceDefinitionBuilderTest (one method) passes only after another test made a FrameworkModel: the class leaves the
        // lists.
        const excluded =
          inst.instanceId === 'apache__dubbo-10638' ? [...left, 'org.apache.dubbo.metadata.definition.ServiceDefinitionBuilderTest'] : left;
        for (const runner of [task.tests.hidden.runner, task.tests.visible!.runner])
          assert.deepEqual(runner.type === 'maven' && runner.exclude, excluded, inst.instanceId);
        assert.equal(
          task.tests.passToPass!.includes('org.apache.dubbo.metadata.definition.ServiceDefinitionBuilderTest'),
          inst.instanceId !== 'apache__dubbo-10638' &&
            inst.passToPass.includes('org.apache.dubbo.metadata.definition.ServiceDefinitionBuilderTest'),
          inst.instanceId,
        );
        // The records list the class: it stays, judged on its other methods.
        assert.ok(task.tests.passToPass!.includes('org.apache.dubbo.common.utils.NetUtilsTest'), inst.instanceId);
        assert.match(
          String(task.metadata.spec_note),
          /NetUtilsTest's 5 address tests not run: they need a network interface besides loopback/,
          inst.instanceId,
        );
      }
      // A method a record lists by name leaves the lists (and the selection) too.
      const inst = { ...instances[0]!, passToPass: [...instances[0]!.passToPass, left[1]!] };
      const task = instanceTask('swe-bench-java', inst);
      assert.ok(!task.tests.passToPass!.includes(left[1]!));
      assert.ok(task.tests.hidden.runner.type === 'maven' && !task.tests.hidden.runner.tests.includes(left[1]!));
      // 11781's ZooKeeper tests download a server when they start: unavailable, said before any build.
      const zk = instanceTask(
        'swe-bench-java',
        instances.find((i) => i.instanceId === 'apache__dubbo-11781')!,
      );
      assert.match(String(zk.env.kind === 'java' && zk.env.unavailable), /downloads a ZooKeeper server from archive\.apache\.org/);
      assert.throws(
        () => assertEnvAvailable(zk),
        (e: unknown) => e instanceof GymError && e.code === 'ENV_UNAVAILABLE' && /ZooKeeper/.test(e.message),
      );
      const d10638 = instanceTask(
        'swe-bench-java',
        instances.find((i) => i.instanceId === 'apache__dubbo-10638')!,
      );
      assert.doesNotThrow(() => assertEnvAvailable(d10638));
      // 10638's FAIL_TO_PASS classes are all new: its warm-up runs one test of the reactor without dubbo-native-plugin, not the whole
      // suite.
      assert.deepEqual(d10638.env.kind === 'java' && d10638.env.warmArgs?.[0], '-Dtest=org.apache.dubbo.common.URLBuilderTest');
      // Every build, the warm-up's and the runs' (whole-reactor: the records' classes are not all in one module each), without
      // dubbo-native-plugin.
      assert.deepEqual(d10638.env.kind === 'java' && d10638.env.args.slice(-2), ['-pl', '!:dubbo-native-plugin']);
      assert.deepEqual(d10638.tests.hidden.runner.type === 'maven' && d10638.tests.hidden.runner.args.slice(-2), [
        '-pl',
        '!:dubbo-native-plugin',
      ]);
      const d7041 = instanceTask(
        'swe-bench-java',
        instances.find((i) => i.instanceId === 'apache__dubbo-7041')!,
      );
      assert.equal(d7041.env.kind === 'java' && d7041.env.warmArgs, undefined);
      assert.deepEqual(
        [d10638.resources.pids, d7041.resources.pids],
        [4096, undefined],
        "10638's Jetty tests: more pids than a sandbox's default",
      );
      assert.match(
        String(d10638.metadata.spec_note),
        new RegExp(
          String.raw`NetUtilsTest's 5 address tests not run.*; .*ServiceDefinitionBuilderTest \(its one method\) not run: ` +
            String.raw`it passes only after another test made a FrameworkModel`,
        ),
      );
      // Another repository's runners leave nothing out.
      const core = (await readInstances(JACKSON_CORE))[0]!;
      const other = instanceTask('swe-bench-java', core).tests.hidden.runner;
      assert.equal(other.type === 'maven' && other.exclude, undefined);
    },
  );

  test(
    'the build-setup edits find their text in every base commit pom (mirrors in BENCHGYM_MIRRORS)',
    { skip: NO_DATA || (MIRRORS ? false : 'BENCHGYM_MIRRORS (a --repos-dir with the FasterXML mirrors) is not set') },
    async () => {
      for (const file of [JACKSON_CORE, JACKSON_XML]) {
        for (const inst of await readInstances(file)) {
          const mirror = await locateMirror(inst.repo, MIRRORS!);
          if (!mirror) continue;
          const spec = specFor(inst.repo, inst.version, inst.instanceId);
          const pom = await runGit(['show', `${inst.baseCommit}:pom.xml`], { cwd: mirror });
          assert.equal(pom.exitCode, 0, `${inst.instanceId}: pom.xml at ${inst.baseCommit}`);
          const snapshotParent = /<artifactId>jackson-(base|parent)<\/artifactId>\s*<version>[^<]*SNAPSHOT</.test(pom.stdout);
          assert.equal(spec.edits.length > 0, snapshotParent, `${inst.instanceId}: an edit iff the parent is a snapshot`);
          for (const e of spec.edits) assert.ok(pom.stdout.includes(e.find), `${inst.instanceId}: '${e.find}' in pom.xml`);
        }
      }
    },
  );

  test(
    'jackson-core without records: each build fix finds what it fixes at ' +
      'the base of its reconstructed change (mirrors in BENCHGYM_MIRRORS)',
    { skip: MIRRORS ? false : 'BENCHGYM_MIRRORS (a --repos-dir with the FasterXML mirrors) is not set' },
    async () => {
      const { mirror, poms } = await reconstructedBasePoms('fasterxml/jackson-core', RECONSTRUCTED_CORE);
      // PR #150 was never merged: the one commit naming it (2022) changes no test.
      const c150 = await findChange(mirror, 150);
      assert.ok(c150 && c150.date.startsWith('2022'), 'only a later commit names #150');
      for (const [id, pom] of poms) {
        const spec = specFor('fasterxml/jackson-core', '', id) as { edits: { find: string }[]; args: string[] };
        const snapshotParent = /<artifactId>jackson-base<\/artifactId>\s*<version>[^<]*SNAPSHOT</.test(pom);
        assert.equal(spec.edits.length > 0, snapshotParent, `${id}: an edit iff the parent is a snapshot`);
        for (const e of spec.edits) assert.ok(pom.includes(e.find), `${id}: '${e.find}' in pom.xml`);
        // Java 6 sources (2017) are raised to 7; the 3.0 line's unversioned plugin gets the enforcer skipped.
        assert.equal(
          spec.args.includes('-Djavac.src.version=1.7'),
          /<javac\.src\.version>1\.6</.test(pom),
          `${id}: source 1.7 iff the pom says 1.6`,
        );
        assert.equal(
          spec.args.includes('-Denforcer.skip=true'),
          /<groupId>tools\.jackson<\/groupId>/.test(pom),
          `${id}: enforcer skipped iff the 3.0 parent`,
        );
      }
    },
  );

  test(
    'jackson-databind: every build-setup edit finds its text in the base pom of its reconstructed change (mirrors in BENCHGYM_MIRRORS)',
    { skip: MIRRORS ? false : 'BENCHGYM_MIRRORS (a --repos-dir with the FasterXML mirrors) is not set' },
    async () => {
      const ids = Object.keys(INSTANCE_SPECS).filter((id) => id.startsWith('fasterxml__jackson-databind-'));
      assert.ok(ids.length >= 40, `${ids.length} databind instance specs`);
      let releases = 0;
      for (const [id, pom] of (await reconstructedBasePoms('fasterxml/jackson-databind', ids)).poms) {
        const spec = specFor('fasterxml/jackson-databind', '', id);
        for (const e of spec.edits) assert.ok(pom.includes(e.find), `${id}: '${e.find}' in pom.xml`);
        // The 2016-2018 bases compile for Java 7 or older (jackson-parent 2.6-2.9): --release 8 there, nowhere else.
        const old = /<artifactId>jackson-parent<\/artifactId>\s*<version>2\.[6-8]\b|<version>2\.9\.\d-SNAPSHOT</.test(pom);
        const release8 = spec.edits.some((e) => e.replace.includes('<release>8</release>'));
        assert.equal(release8, old, `${id}: --release 8 iff a 2.6-2.9 pom`);
        if (release8) releases++;
      }
      assert.equal(releases, 4);
    },
  );
});
