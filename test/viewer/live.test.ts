import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import { existsSync, promises as fs } from 'node:fs';
import { chromium } from 'playwright-core';
import type { Gym } from '../../src/episode/gym.ts';
import { startHttpServer, type RunningServer } from '../../src/server/http.ts';
import { terminalExtension } from '../../src/server/pty.ts';
import { makeGym, startExample, tempDir, testContext } from '../helpers.ts';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = process.env.BENCHGYM_SHOTS ?? '/tmp/viewer-shots';
const TOKEN = 'view-token';
const AUTH = { authorization: `Bearer ${TOKEN}` };

function status(port: number, pathName: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: pathName, headers: { host, ...AUTH } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .on('error', reject);
  });
}

describe('the viewer under benchgym serve: live episodes', () => {
  let gym: Gym;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  let id: string;

  before(async () => {
    ({ gym, cleanup } = await makeGym());
    server = await startHttpServer(gym, { port: 0, token: TOKEN, extensions: [terminalExtension()] });
    id = await startExample(gym, 'roman-numerals');
  });
  after(async () => {
    await server?.close();
    await cleanup?.();
  });

  const json = async (p: string) => (await fetch(`${server.url}${p}`, { headers: AUTH })).json() as Promise<any>;

  test('/view/ serves the page behind the same Host and token checks; /view redirects to it', async () => {
    const r = await fetch(`${server.url}/view?token=${TOKEN}`, { redirect: 'manual' });
    assert.equal(r.status, 301);
    assert.equal(r.headers.get('location'), `/view/?token=${TOKEN}`);
    assert.equal((await fetch(`${server.url}/view/api/live`)).status, 401, 'the token is asked for');
    const page = await fetch(`${server.url}/view/?token=${TOKEN}`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /data-live="1"/);
    assert.equal(await status(server.port, '/view/api/live', 'evil.example'), 403);
  });

  test("an episode's steps appear as they are made", async () => {
    const { episodes } = await json('/view/api/live');
    const mine = episodes.find((e: { id: string }) => e.id === id);
    assert.equal(mine.state, 'running');
    assert.equal(mine.task, 'roman-numerals');
    const before = await json(`/view/api/live/${id}/items`);
    assert.equal(before.done, false);
    await gym.callTool('view_file', { path: 'roman.py' }, testContext(), id);
    // The gym appends a step without waiting for the write; the viewer sees it once written.
    await gym.episode(id).trajectory.flush();
    const after = await json(`/view/api/live/${id}/items?from=${before.total}`);
    assert.equal(after.total, before.total + 1);
    assert.equal(after.items[0].tool, 'view_file');
    assert.match(after.items[0].observation, /def to_roman/);
    const missing = await fetch(`${server.url}/view/api/live/ep-nope/items`, { headers: AUTH });
    assert.equal(missing.status, 404);
  });

  test('a live episode downloads as ATIF, behind the token', async () => {
    await gym.episode(id).trajectory.flush();
    assert.equal((await fetch(`${server.url}/view/api/live/${id}/atif`)).status, 401);
    const r = await fetch(`${server.url}/view/api/live/${id}/atif?token=${TOKEN}`);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-disposition'), `attachment; filename=${id}.json`);
    const t = (await r.json()) as any;
    assert.equal(t.session_id, id);
    assert.equal(t.steps[0].message, gym.episode(id).prompt);
    assert.ok(t.steps.some((s: any) => s.tool_calls?.[0]?.function_name === 'view_file'));
    assert.equal((await fetch(`${server.url}/view/api/live/ep-nope/atif`, { headers: AUTH })).status, 404);
  });

  test(
    'in Chromium: the live transcript updates by itself and links to the terminal page',
    { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing` },
    async () => {
      const userDataDir = await tempDir('benchgym-view-live-');
      const context = await chromium.launchPersistentContext(userDataDir, {
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
        viewport: { width: 1400, height: 900 },
      });
      try {
        const page = context.pages()[0] ?? (await context.newPage());
        const problems: string[] = [];
        page.on('pageerror', (e) => problems.push(e.message));
        await page.goto(`${server.url}/view/?token=${TOKEN}#/live`);
        await page.waitForSelector(`#live a[href="#/live/${id}"]`);
        await page.locator(`#live a[href="#/live/${id}"]`).click();
        await page.waitForSelector('.item.tool');
        const terminal = await page.locator('#terminal-link').getAttribute('href');
        assert.equal(new URL(terminal!, page.url()).pathname, `/terminal/${id}`, "the operator's terminal page, without the episode's key");
        assert.equal(new URL(terminal!, page.url()).searchParams.get('token'), TOKEN, 'the terminal page gets the token too');
        const atif = new URL((await page.locator('#atif-link').getAttribute('href'))!, page.url());
        assert.equal(atif.pathname, `/view/api/live/${id}/atif`);
        assert.equal(
          ((await (await fetch(atif)).json()) as { schema_version: string }).schema_version,
          'ATIF-v1.7',
          'the link downloads with the token it carries',
        );
        const count = await page.locator('.items > .item').count();
        await gym.callTool('run_command', { command: 'echo live-step-arrived' }, testContext(), id);
        await page.waitForFunction((n) => document.querySelectorAll('.items > .item').length > n, count, { timeout: 10_000 });
        assert.match(await page.locator('.items > .item').last().innerText(), /live-step-arrived/);
        await page.locator('.items > .item').last().scrollIntoViewIfNeeded();
        await fs.mkdir(SHOTS, { recursive: true });
        await page.screenshot({ path: path.join(SHOTS, '07-live-episode.png') });
        const status = await fetch(new URL(terminal!, page.url()));
        assert.equal(status.status, 200, 'the terminal page is there');
        assert.deepEqual(problems, []);
      } finally {
        await context.close();
        await fs.rm(userDataDir, { recursive: true, force: true });
      }
    },
  );
});
