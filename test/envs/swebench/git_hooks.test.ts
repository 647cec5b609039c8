import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { builtinSuites } from '../../../bin/builtins.ts';
import { baseImageName } from '../../../src/env/images.ts';
import { git } from '../../../src/repo/index.ts';
import { DockerSandboxFactory } from '../../../src/sandbox/docker/index.ts';
import type { Sandbox, SandboxFactory } from '../../../src/sandbox/types.ts';
import { shellQuote } from '../../../src/shell_quote.ts';
import { SuiteRegistry } from '../../../src/tasks/registry.ts';
import { makeGym, tempDir, TEST_CACHE_DIR } from '../../helpers.ts';
import { dockerSkipReason } from '../../sandbox/docker/skip.ts';
import { buildSwebenchFixture, type SwebenchFixture } from './fixture.ts';

/**
 * Every git the SWE-bench scorer runs in the scoring sandbox takes no orders from the
 * workspace's repository: a post-checkout hook or a `core.fsmonitor` in `.git/config` (what
 * a patch that managed to write under `.git/` would leave; another layer refuses such
 * patches) would run when the scorer resets test files (`git checkout`) or lists changes
 * (`git status`). Here each writes the fixed source over the unfixed one, so a scorer that
 * ran it would resolve the empty patch.
 */
describe('swe-bench-java: the scorer runs no hook or fsmonitor of the workspace', () => {
  let root: string;
  let fx: SwebenchFixture;
  let fixed: string;
  before(async () => {
    root = await tempDir('benchgym-swebench-hooks-');
    fx = await buildSwebenchFixture(root);
    fixed = await git(['show', `${fx.fix}:core/src/main/java/com/acme/core/Words.java`], { cwd: fx.origin });
  });
  after(() => fs.rm(root, { recursive: true, force: true }));

  /** The factory, with `.git` planted in each scoring sandbox right after the patch is applied (a state no patch should reach). */
  function planted(inner: SandboxFactory, plant: (sb: Sandbox) => Promise<void>): SandboxFactory {
    return {
      backend: inner.backend,
      prepare: (t) => inner.prepare(t),
      close: async () => {},
      create: async (opts) => {
        const sb = await inner.create(opts);
        const apply = sb.applyPatch.bind(sb);
        sb.applyPatch = async (p, o) => {
          const r = await apply(p, o);
          await plant(sb);
          return r;
        };
        return sb;
      },
    };
  }

  /** A script in .git that writes the fix over core's Words.java. */
  const fixScript = () =>
    `#!/bin/sh\ncd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"\nprintf ` +
    `'%s' ${shellQuote(fixed)} > core/src/main/java/com/acme/core/Words.java\n`;
  const PLANTS: Record<string, (sb: Sandbox) => Promise<void>> = {
    'a post-checkout hook': async (sb) => {
      await sb.writeFile('.git/hooks/post-checkout', fixScript());
      await sb.exec('chmod +x .git/hooks/post-checkout');
    },
    'core.fsmonitor in .git/config': async (sb) => {
      await sb.writeFile('.git/fix.sh', fixScript());
      await sb.exec("chmod +x .git/fix.sh && printf '[core]\\n\\tfsmonitor = .git/fix.sh\\n' >> .git/config");
    },
  };

  for (const backend of ['local', 'docker'] as const) {
    it(`${backend}: with a hook or an fsmonitor planted, the empty patch stays unresolved`, { timeout: 20 * 60_000 }, async (t) => {
      let base: SandboxFactory | undefined;
      if (backend === 'docker') {
        const skip = await dockerSkipReason([baseImageName('java', '17')]);
        if (skip) return t.skip(skip);
        base = new DockerSandboxFactory({ serverId: `test-hooks-${randomBytes(4).toString('hex')}`, images: { cacheDir: TEST_CACHE_DIR } });
      }
      const registry = () => {
        const r = new SuiteRegistry(builtinSuites({ reposDir: fx.reposDir }));
        r.enable(`swe-bench-java=${fx.dataset}`);
        return r;
      };
      const outer = await makeGym({ registry: registry(), ...(base ? { sandboxes: base } : {}) });
      try {
        const task = await outer.gym.registry.task('swe-bench-java', fx.instanceId);
        const verdicts = await Promise.all(
          Object.entries(PLANTS).map(async ([name, plant]) => {
            const { gym, cleanup } = await makeGym({ registry: registry(), sandboxes: planted(outer.gym.sandboxes, plant) });
            try {
              return [name, await gym.score(task, '')] as const;
            } finally {
              await cleanup();
            }
          }),
        );
        for (const [name, v] of verdicts) {
          const seen = JSON.stringify({ reward: v.reward, status: v.status, notes: v.notes, error: v.error });
          assert.equal(v.error, undefined, `${name}: ${seen}`);
          assert.equal(v.reward, 0, `${name} ran: ${seen}`);
          assert.ok(v.failToPass!.failed.length > 0, `${name}: ${seen}`);
        }
      } finally {
        await outer.cleanup();
      }
    });
  }
});
