import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Request, Response } from 'express';
import type { Gym } from '../episode/gym.ts';
import { PROJECT_ROOT } from '../project.ts';
import { VERSION } from '../version.ts';

/** The project's documents the server hands out at `/docs/<name>` (a fixed list: no path from the request reaches the disk). */
export const SERVED_DOCS: Readonly<Record<string, string>> = {
  'README.md': 'README.md',
  'PROTOCOL.md': path.join('docs', 'PROTOCOL.md'),
  'ARCHITECTURE.md': path.join('docs', 'ARCHITECTURE.md'),
  'BENCHMARKS.md': path.join('docs', 'BENCHMARKS.md'),
};

/** What each endpoint is, by the path it is registered with; a path not here is listed as it is. */
const ENDPOINTS: Readonly<Record<string, { protocol: string; description: string }>> = {
  '/mcp': {
    protocol: 'MCP (Streamable HTTP)',
    description: 'the gym: list_suites, list_tasks, start_episode, then every episode tool with an episode_id',
  },
  '/episodes/:id/:key/mcp': {
    protocol: 'MCP (Streamable HTTP)',
    description: "one episode, opened by its key (start_episode's mcpPath): the URL to hand an agent",
  },
  '/mcp/ws': { protocol: 'MCP (WebSocket)', description: 'the gym over one WebSocket (subprotocol mcp)' },
  '/episodes/:id/:key/mcp/ws': { protocol: 'MCP (WebSocket)', description: 'one episode over one WebSocket' },
  '/ws': { protocol: 'gym protocol (WebSocket)', description: 'reset / step / submit messages (docs/PROTOCOL.md)' },
  '/ws/episodes/:id/pty': { protocol: 'terminal (WebSocket)', description: "a PTY in an episode's sandbox (the page: /terminal/<id>)" },
  '/episodes/:id/:key/pty': {
    protocol: 'terminal (WebSocket)',
    description: "a PTY in one episode's sandbox, by its key (the page: /episodes/<id>/<key>/terminal)",
  },
  '/view/': { protocol: 'HTTP (browser)', description: 'the run viewer; live episodes at /view/#/live' },
  '/health': { protocol: 'HTTP (JSON)', description: 'liveness: suites, episodes, the sandbox backend' },
};

export interface LandingInfo {
  server: 'benchgym';
  version: string;
  sandbox: string;
  /** Whether every request but an episode's own needs the bearer token. */
  token: boolean;
  suites: { id: string; description: string; taskCount: number | null; error?: string }[];
  episodes: { running: number; total: number };
  endpoints: { path: string; url: string; protocol: string; description: string }[];
  connect: { claudeCode: string; python: string };
  links: { viewer: string; health: string; docs: Record<string, string> };
}

/** What the server serves and how to reach it: `GET /`'s content. */
export async function landingInfo(
  gym: Gym,
  opts: { baseUrl: string; token: boolean; upgradePaths: readonly string[] },
): Promise<LandingInfo> {
  const suites = await Promise.all(
    gym.registry.servedSuites().map(async ({ id, description }) => {
      try {
        return { id, description, taskCount: (await gym.registry.tasks(id)).length };
      } catch (err) {
        // A suite whose dataset cannot be read is said as such; the page still answers.
        return { id, description, taskCount: null, error: (err as Error).message.split('\n')[0]! };
      }
    }),
  );
  const episodes = gym.listEpisodes();
  const paths = ['/mcp', '/episodes/:id/:key/mcp', ...opts.upgradePaths, '/view/', '/health'];
  const base = opts.baseUrl.replace(/\/$/, '');
  const endpoints = [...new Set(paths)].map((p) => {
    const known = ENDPOINTS[p] ?? { protocol: 'WebSocket', description: '' };
    const url =
      `${/\/ws$|\/pty$|\/mcp\/ws$/.test(p) ? base.replace(/^http/, 'ws') : base}` +
      `${p.replace(':id', '<episode_id>').replace(':key', '<key>')}`;
    return { path: p, url, ...known };
  });
  const auth = opts.token ? ' --header "Authorization: Bearer $BENCHGYM_TOKEN"' : '';
  return {
    server: 'benchgym',
    version: VERSION,
    sandbox: gym.sandboxes.backend,
    token: opts.token,
    suites,
    episodes: { running: episodes.filter((e) => e.state === 'running').length, total: episodes.length },
    endpoints,
    connect: {
      claudeCode: `claude mcp add --transport http benchgym ${base}/mcp${auth}`,
      python:
        `async with streamablehttp_client("${base}/mcp"` +
        `${opts.token ? ', headers={"Authorization": "Bearer ..."}' : ''}) as (r, w, _): ...  # the mcp package`,
    },
    links: {
      viewer: `${base}/view/`,
      health: `${base}/health`,
      docs: Object.fromEntries(Object.keys(SERVED_DOCS).map((d) => [d, `${base}/docs/${d}`])),
    },
  };
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The landing page for a person: the same content as the JSON, as one small HTML page. */
export function landingHtml(info: LandingInfo): string {
  const row = (cells: string[]) => `<tr>${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`;
  const suites = info.suites
    .map((s) =>
      row([`<b>${esc(s.id)}</b>`, s.taskCount === null ? `unreadable: ${esc(s.error ?? '')}` : String(s.taskCount), esc(s.description)]),
    )
    .join('\n');
  const endpoints = info.endpoints.map((e) => row([`<code>${esc(e.url)}</code>`, esc(e.protocol), esc(e.description)])).join('\n');
  const docs = Object.entries(info.links.docs)
    .map(([name, url]) => `<a href="${esc(url)}">${esc(name)}</a>`)
    .join(' · ');
  return (
    `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>benchgym ${esc(info.version)}</title>
<style>body{font:15px/1.45 system-ui,sans-serif;max-width:70em;margin:2em auto;padding:0 1em}td{padding:.2em ` +
    `.8em;vertical-align:top}code{font-size:.92em}</style>
</head><body>
<h1>benchgym ${esc(info.version)}</h1>
<p>A gym server for code benchmarks: ${info.suites.length} suite(s) on the <b>${esc(info.sandbox)}</b> sandbox; episodes ` +
    `running: ${info.episodes.running} (of ${info.episodes.total} held).
${
  info.token
    ? "Every request but an episode's own carries <code>Authorization: Bearer &lt;token&gt;</code>."
    : 'No token: every local process can reach every episode.'
}</p>
<h2>Suites</h2><table><tr><th>suite</th><th>tasks</th><th></th></tr>
${suites}
</table>
<h2>Endpoints</h2><table>
${endpoints}
</table>
<h2>Connect</h2>
<p>Claude Code: <code>${esc(info.connect.claudeCode)}</code><br>Python MCP SDK: <code>${esc(info.connect.python)}</code></p>
<p><a href="${esc(info.links.viewer)}">Run viewer</a> · <a href="${esc(info.links.health)}">health</a> · docs: ${docs} · this page ` +
    `as JSON: <code>Accept: application/json</code></p>
</body></html>
`
  );
}

/** `GET /`: HTML for a browser, JSON when the client asks for JSON (`Accept: application/json`) rather than HTML. */
export function landingRoute(gym: Gym, opts: { token: boolean; upgradePaths: readonly string[] }) {
  return async (req: Request, res: Response) => {
    const baseUrl = `${req.protocol}://${req.get('host') ?? 'localhost'}`;
    const info = await landingInfo(gym, { baseUrl, ...opts });
    res.setHeader('Vary', 'Accept');
    if (req.accepts(['html', 'json']) === 'json') res.json(info);
    else res.type('html').send(landingHtml(info));
  };
}

/** `GET /docs/<name>`: one of SERVED_DOCS as text, or 404 naming those there are. */
export function docsRoute() {
  return async (req: Request, res: Response) => {
    const name = String(req.params.name);
    const rel = Object.hasOwn(SERVED_DOCS, name) ? SERVED_DOCS[name] : undefined;
    const text = rel ? await fs.readFile(path.join(PROJECT_ROOT, rel), 'utf8').catch(() => null) : null;
    if (text === null) {
      res.status(404).json({
        jsonrpc: '2.0',
        error: { code: -32000, message: `no document '${name}' (served: ${Object.keys(SERVED_DOCS).join(', ')})` },
        id: null,
      });
      return;
    }
    res.type('text/markdown; charset=utf-8').send(text);
  };
}
