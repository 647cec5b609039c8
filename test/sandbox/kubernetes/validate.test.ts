import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { PROJECT_ROOT } from '../../../src/tasks/registry.ts';
import { kubernetesSkipReason, testKubeconfig } from './skip.ts';

test('benchgym validate --suite examples --sandbox kubernetes reports every task valid', async (t) => {
  const skip = await kubernetesSkipReason();
  if (skip) return t.skip(skip);
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-kvalidate-'));
  try {
    const args = [path.join(PROJECT_ROOT, 'bin', 'benchgym.js'), 'validate', '--suite', 'examples', '--sandbox', 'kubernetes', '--kubeconfig', testKubeconfig(), '--namespace', 'benchgym-test', '--server-id', `test-validate-${randomBytes(4).toString('hex')}`, '--json', '--data-dir', dataDir];
    const env = { ...process.env, BENCHGYM_KUBERNETES_LOAD_IMAGE: path.join(PROJECT_ROOT, 'docker', 'cluster', 'load-image.sh') };
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (b) => (stdout += b));
      child.stderr.on('data', (b) => (stderr += b));
      child.on('error', reject);
      child.on('close', (c) => resolve({ code: c, stdout, stderr }));
    });
    assert.equal(code, 0, stderr + stdout);
    const report = JSON.parse(stdout);
    assert.ok(report.results.length >= 6);
    for (const r of report.results) assert.equal(r.status, 'valid', `${r.taskId}: ${r.reasons.join('; ')}`);
  } finally {
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});
