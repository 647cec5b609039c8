import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { existsSync, promises as fs } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { startHttpServer, type RunningServer } from '../../src/server/http.ts';
import { terminalExtension } from '../../src/server/pty.ts';
import type { Gym } from '../../src/episode/gym.ts';
import { makeGym, startExample } from '../helpers.ts';
import { episodePath } from '../../src/protocol/capability.ts';

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing (apt-get install chromium; .ci/run installs it)`;

describe('the terminal page', { skip }, () => {
  let gym: Gym;
  let dataDir: string;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  let browser: Browser;

  before(async () => {
    ({ gym, dataDir, cleanup } = await makeGym());
    server = await startHttpServer(gym, { port: 0, token: 'page-token', extensions: [terminalExtension()] });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await cleanup?.();
  });

  test("xterm.js in the browser at the episode's own URL (its key, no token): type a command, see its output, take a screenshot", async () => {
    const id = await startExample(gym, 'roman-numerals');
    const page = await browser.newPage({ viewport: { width: 1000, height: 600 } });
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
    try {
      const response = await page.goto(`${server.url}${episodePath(gym.episode(id), 'terminal')}`);
      assert.equal(response?.status(), 200);
      assert.match(response!.headers()['content-security-policy'] ?? '', /script-src 'self'/);
      assert.match(await page.title(), new RegExp(`examples/roman-numerals · ${id}`));
      await page.waitForSelector('#status.ok', { timeout: 15_000 });

      await page.locator('#terminal').click();
      await page.keyboard.type('echo hello-from-browser');
      await page.keyboard.press('Enter');
      // The output row, not the echoed command line.
      await page.waitForFunction(
        () =>
          [...document.querySelectorAll('.xterm-rows > div')].some(
            (row) => row.textContent?.replace(/\u00a0/g, ' ').trim() === 'hello-from-browser',
          ),
        undefined,
        { timeout: 15_000 },
      );
      // The page fits the terminal to the window and tells the server.
      await page.keyboard.type('stty size');
      await page.keyboard.press('Enter');
      const size = await page.evaluate(() => {
        const term = (window as unknown as { benchgymTerminal: { rows: number; cols: number } }).benchgymTerminal;
        return `${term.rows} ${term.cols}`;
      });
      await page.waitForFunction(
        (want) =>
          [...document.querySelectorAll('.xterm-rows > div')].some((row) => row.textContent?.replace(/\u00a0/g, ' ').trim() === want),
        size,
        { timeout: 15_000 },
      );

      const shot = path.join(os.tmpdir(), `benchgym-terminal-${id}.png`);
      await page.screenshot({ path: shot });
      const png = await fs.readFile(shot);
      assert.ok(png.length > 1000, 'a screenshot was written');
      assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'it is a PNG');
      if (!process.env.BENCHGYM_KEEP_SCREENSHOT) await fs.rm(shot, { force: true });
      else process.stderr.write(`screenshot: ${shot}\n`);
      assert.deepEqual(problems, []);

      const lines = (await fs.readFile(path.join(dataDir, 'trajectories', `${id}.jsonl`), 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      assert.ok(lines.some((r) => r.type === 'terminal' && r.event === 'input' && r.input === 'echo hello-from-browser'));
    } finally {
      await page.close();
    }
  });

  test("the operator's page connects with the token in its URL", async () => {
    const id = await startExample(gym, 'roman-numerals');
    const page = await browser.newPage();
    try {
      assert.equal((await page.goto(`${server.url}/terminal/${id}?token=page-token`))?.status(), 200);
      await page.waitForSelector('#status.ok', { timeout: 15_000 });
    } finally {
      await page.close();
    }
  });

  test("the operator's page and assets need the token, an episode's need its key; an unknown episode is a 404", async () => {
    const page = await fetch(`${server.url}/terminal/ep-0000000000000000?token=page-token`);
    assert.equal(page.status, 404);
    assert.match(await page.text(), /no episode 'ep-0000000000000000'/);
    assert.equal((await fetch(`${server.url}/terminal/assets/xterm.js`)).status, 401);
    const js = await fetch(`${server.url}/terminal/assets/xterm.js?token=page-token`);
    assert.equal(js.status, 200);
    assert.match(js.headers.get('content-type') ?? '', /javascript/);
    assert.equal((await fetch(`${server.url}/terminal/assets/..%2Fpackage.json?token=page-token`)).status, 404);
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      assert.equal((await fetch(`${server.url}/terminal/assets/${name}?token=page-token`)).status, 404, name);
    }
    const episode = gym.episode(await startExample(gym, 'roman-numerals'));
    const own = `${server.url}${episodePath(episode, 'terminal').replace(/terminal$/, '')}`;
    assert.equal((await fetch(`${own}assets/xterm.js`)).status, 200, "an episode's page loads its assets by its key");
    assert.equal((await fetch(`${own}assets/__proto__`)).status, 404);
    assert.equal((await fetch(`${server.url}/terminal/${episode.id}`)).status, 401, "the operator's page wants the token");
    for (const url of [
      `${server.url}/episodes/${episode.id}/terminal`,
      `${server.url}/episodes/${episode.id}/${'x'.repeat(32)}/terminal`,
      `${server.url}/episodes/${episode.id}/${'x'.repeat(32)}/assets/xterm.js`,
    ]) {
      const res = await fetch(url);
      assert.ok(res.status === 401 || res.status === 404, `${url}: ${res.status}`);
      assert.doesNotMatch(await res.text(), /xterm|<html/i);
    }
  });
});
