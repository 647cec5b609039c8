import { test } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { PROJECT_ROOT } from '../../src/tasks/registry.ts';
import { TEST_CACHE_DIR } from '../helpers.ts';
import { call, data, solveRepoPatch, text } from './scenario.ts';

test('MCP over stdio (benchgym mcp): repo-patch solved → reward 1, untouched → reward 0', async () => {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-stdio-'));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(PROJECT_ROOT, 'bin', 'benchgym.js'), 'mcp', '--data-dir', dataDir, '--cache-dir', TEST_CACHE_DIR],
    stderr: 'pipe',
  });
  const client = new Client({ name: 'benchgym-stdio-test', version: '0.0.0' });
  try {
    await client.connect(transport);
    const episodeId = data(await call(client, 'start_episode', { task_id: 'inventory-discount-bug' })).episodeId;
    const { verdict } = await solveRepoPatch(client, { episode_id: episodeId });
    assert.equal(verdict.reward, 1, JSON.stringify(verdict));

    const untouched = data(await call(client, 'start_episode', { task_id: 'inventory-discount-bug' })).episodeId;
    const zero = await call(client, 'submit', { episode_id: untouched });
    assert.equal(data(zero).reward, 0, text(zero));

    const trajectory = await fs.readFile(path.join(dataDir, 'trajectories', `${episodeId}.jsonl`), 'utf8');
    const records = trajectory
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(records[0].type, 'episode');
    assert.ok(records.some((r) => r.type === 'step' && r.tool === 'edit_file' && r.ok));
    assert.equal(records.find((r) => r.type === 'verdict').verdict.reward, 1);
    await client.close();
    // The server process ends with its client and leaves no sandbox behind.
    let leftovers: string[] = [];
    for (let i = 0; i < 50; i++) {
      const instances = await fs.readdir(path.join(dataDir, 'sandboxes')).catch(() => [] as string[]);
      leftovers = (
        await Promise.all(instances.map((d) => fs.readdir(path.join(dataDir, 'sandboxes', d)).catch(() => [] as string[])))
      ).flat();
      if (!leftovers.length) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(leftovers, []);
  } finally {
    await client.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});
