import { promises as fs } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { ensureExecutorBinary } from '../../../src/sandbox/executor/build.ts';
import { startExecutorProcess } from '../../../src/sandbox/executor/process.ts';
import type { ExecutorClient } from '../../../src/sandbox/executor/client.ts';
import { TEST_CACHE_DIR, processesWithMarker, tempDir } from '../../helpers.ts';

let binary: Promise<string> | undefined;

/** The executor built once per test process (into the shared test cache). */
export function executorBinary(): Promise<string> {
  binary ??= ensureExecutorBinary({ cacheDir: TEST_CACHE_DIR });
  return binary;
}

/** An executor over a fresh temporary workspace; `marker` tags its commands' processes (BENCHGYM_SANDBOX). */
export async function localExecutor(): Promise<{
  ex: ExecutorClient;
  root: string;
  marker: string;
  survivors: () => Promise<number[]>;
  cleanup: () => Promise<void>;
}> {
  const root = await fs.realpath(await tempDir('benchgym-executor-'));
  const marker = `executor-test-${randomBytes(4).toString('hex')}`;
  const ex = await startExecutorProcess({
    binary: await executorBinary(),
    root,
    env: { ...(process.env as Record<string, string>), BENCHGYM_SANDBOX: marker },
  });
  return {
    ex,
    root,
    marker,
    // The executor itself carries the marker too: only what its commands left counts.
    survivors: async () => {
      const deadline = Date.now() + 3000;
      for (;;) {
        const left = (await processesWithMarker(marker)).filter((pid) => pid !== ex.info?.pid);
        if (!left.length || Date.now() > deadline) return left;
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    cleanup: async () => {
      await ex.close();
      await fs.rm(root, { recursive: true, force: true });
    },
  };
}

/** A sleep duration no other test uses, so pgrep finds only this test's process. */
export const uniqueSleep = () => 5000 + Math.floor(Math.random() * 90000);
