/**
 * The package as a user gets it: `npm pack` (prepack builds dist/ and the prebuilt executors),
 * the tarball installed into an empty folder with no Go and no checkout on PATH, then `npx
 * benchgym serve` serving the examples to an MCP client: connect, list tools, start an episode,
 * run a command, submit the gold solution, reward 1. Needs the npm registry for the dependencies.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** PATH with node and npm and the system's tools, and neither Go nor the checkout's node_modules/.bin. */
async function pathWithoutGo(dir: string): Promise<string> {
  const bin = path.join(dir, 'node-bin');
  await fs.mkdir(bin, { recursive: true });
  for (const tool of ['node', 'npm', 'npx']) {
    const { stdout } = await run('sh', ['-c', `command -v ${tool}`]);
    await fs.symlink(await fs.realpath(stdout.trim()), path.join(bin, tool));
  }
  const system = ['/usr/sbin', '/usr/bin', '/sbin', '/bin'].filter((d) => !existsSync(path.join(d, 'go')));
  return [bin, ...system].join(':');
}

function text(r: unknown): string {
  return ((r as { content?: { type: string; text?: string }[] }).content ?? []).map((c) => c.text ?? '').join('\n');
}

test(
  'npm pack, installed into an empty folder on a PATH without Go, serves the examples to an MCP client (gold: reward 1)',
  { timeout: 15 * 60_000 },
  async (t) => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'benchgym-package-'));
    let server: ReturnType<typeof spawn> | undefined;
    // Where the minutes go, said in the output (packing builds; installing fetches and compiles node-pty).
    let last = Date.now();
    const phase = (name: string) => {
      t.diagnostic(`${name}: ${((Date.now() - last) / 1000).toFixed(1)} s`);
      last = Date.now();
    };
    try {
      const packed = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
      const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as {
        filename: string;
        size: number;
        unpackedSize: number;
        files: { path: string }[];
      }[];
      phase('npm pack (build included)');
      const files = info!.files.map((f) => f.path);
      t.diagnostic(
        `tarball ${info!.filename}: ${(info!.size / 1e6).toFixed(2)} MB, ` +
          `${(info!.unpackedSize / 1e6).toFixed(2)} MB unpacked, ${files.length} files`,
      );
      // What runs is compiled JavaScript: no TypeScript source, no test, the prebuilt executors in.
      assert.ok(files.includes('dist/bin/cli.js') && files.includes('bin/benchgym.js'));
      assert.ok(files.includes('dist/src/sandbox/executor/prebuilt/linux-amd64/benchgym-executor'));
      assert.ok(files.includes('dist/src/sandbox/executor/prebuilt/linux-arm64/benchgym-executor'));
      assert.deepEqual(
        files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')),
        [],
      );
      assert.deepEqual(
        files.filter((f) => f.startsWith('test/') || f.startsWith('src/') || f.startsWith('node_modules/')),
        [],
      );
      assert.ok(info!.size < 8e6, `the tarball stays small (${info!.size} bytes)`);

      const app = path.join(dir, 'app');
      await fs.mkdir(app);
      await fs.writeFile(path.join(app, 'package.json'), '{ "name": "app", "private": true }\n');
      const PATH = await pathWithoutGo(dir);
      // BENCHGYM_GO names no Go: the executor cannot be built from source, only copied from the package.
      const env = {
        HOME: process.env.HOME ?? dir,
        PATH,
        BENCHGYM_GO: path.join(dir, 'no-go'),
        npm_config_audit: 'false',
        npm_config_fund: 'false',
      };
      await run('npm', ['install', path.join(dir, info!.filename)], { cwd: app, env, maxBuffer: 64 * 1024 * 1024 });
      phase('npm install of the tarball');
      assert.equal(existsSync(path.join(app, 'node_modules', 'tsx')), false, 'tsx is a development dependency only');

      const version = await run('npx', ['benchgym', '--version'], { cwd: app, env });
      assert.match(version.stdout, /^benchgym \d+\.\d+\.\d+/);

      server = spawn(
        'npx',
        ['benchgym', 'serve', '--port', '0', '--data-dir', path.join(dir, 'data'), '--cache-dir', path.join(dir, 'cache')],
        { cwd: app, env, stdio: ['ignore', 'ignore', 'pipe'], detached: true },
      );
      let banner = '';
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no banner in 120 s:\n${banner}`)), 120_000);
        server!.stderr!.on('data', (d: Buffer) => {
          banner += d.toString();
          const m = /MCP \(Streamable HTTP\): (http:\/\/\S+)\/mcp/.exec(banner);
          if (m && banner.includes('viewer (browser)')) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        });
        server!.on('exit', (code) => reject(new Error(`serve exited ${code}:\n${banner}`)));
      });
      phase('npx benchgym serve: listening');
      assert.match(banner, /serving examples \(\d+ tasks\)/);
      assert.match(banner, /executor on/, `the prebuilt executor is used without Go:\n${banner}`);

      const client = new Client({ name: 'package-probe', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
      try {
        const { tools } = await client.listTools();
        for (const name of ['start_episode', 'run_command', 'create_file', 'submit'])
          assert.ok(
            tools.some((x) => x.name === name),
            name,
          );
        const started = await client.callTool({ name: 'start_episode', arguments: { task_id: 'roman-numerals' } });
        assert.notEqual(started.isError, true, text(started));
        const episode_id = (started.structuredContent as { episodeId: string }).episodeId;
        const echo = await client.callTool({
          name: 'run_command',
          arguments: { episode_id, command: 'echo from-the-sandbox; python3 --version' },
        });
        assert.notEqual(echo.isError, true, text(echo));
        assert.match(text(echo), /from-the-sandbox/);
        const gold = await fs.readFile(
          path.join(app, 'node_modules', 'benchgym', 'dist', 'envs', 'examples', 'tasks', 'roman-numerals', 'solution', 'roman.py'),
          'utf8',
        );
        const wrote = await client.callTool({
          name: 'create_file',
          arguments: { episode_id, path: 'roman.py', content: gold, overwrite: true },
        });
        assert.notEqual(wrote.isError, true, text(wrote));
        const verdict = await client.callTool({ name: 'submit', arguments: { episode_id } });
        assert.notEqual(verdict.isError, true, text(verdict));
        assert.equal((verdict.structuredContent as { reward: number }).reward, 1, text(verdict));
        phase('the MCP probe: an episode, a command, the gold submitted');
      } finally {
        await client.close();
      }
    } finally {
      if (server?.pid) {
        try {
          process.kill(-server.pid, 'SIGTERM');
        } catch {
          // already gone
        }
        await new Promise((r) => setTimeout(r, 1000));
      }
      await fs.rm(dir, { recursive: true, force: true });
    }
  },
);
