import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Express, Request, Response } from 'express';
import type { Episode } from '../episode/episode.ts';
import type { Gym } from '../episode/gym.ts';

const require = createRequire(import.meta.url);

/** Files the page loads, served from the installed packages (no CDN); a Map, so no name reaches an inherited member. */
const ASSETS = new Map<string, { file: string; type: string }>([
  ['xterm.js', { file: require.resolve('@xterm/xterm/lib/xterm.js'), type: 'text/javascript; charset=utf-8' }],
  ['xterm.css', { file: require.resolve('@xterm/xterm/css/xterm.css'), type: 'text/css; charset=utf-8' }],
  ['addon-fit.js', { file: require.resolve('@xterm/addon-fit/lib/addon-fit.js'), type: 'text/javascript; charset=utf-8' }],
  ['terminal.js', { file: fileURLToPath(new URL('./static/terminal.js', import.meta.url)), type: 'text/javascript; charset=utf-8' }],
]);

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  // xterm.js sets element styles at run time.
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/**
 * The terminal page, xterm.js on an episode's terminal endpoint, for a person to watch and type,
 * in two places: `GET /terminal/<id>` is the operator's (the viewer links there; a server with
 * a token needs `?token=` on the page URL, which the page passes on to its assets and the
 * WebSocket), and `GET /episodes/<id>/<key>/terminal` is the episode's own (its key opens it,
 * and its assets and WebSocket sit next to it, so the page names no key).
 */
export function terminalPage(gym: Gym, app: Express): void {
  const sendAsset = (req: Request, res: Response) => {
    const asset = ASSETS.get(String(req.params.name));
    if (!asset) return void res.status(404).type('text/plain').send('no such asset\n');
    res.type(asset.type).set('Cache-Control', 'no-cache').sendFile(asset.file);
  };
  app.get('/terminal/assets/:name', sendAsset);
  // Below /episodes/<id>/<key>/ the server's access check has found the episode by its key (res.locals.episode).
  app.get('/episodes/:id/:key/assets/:name', sendAsset);

  app.get('/terminal/:id', (req: Request, res: Response) => {
    const id = String(req.params.id);
    const episode = gym.listEpisodes().find((e) => e.id === id);
    if (!episode) return void noStore(res).status(404).type('text/plain').send(`no episode '${id}' (it may have expired)\n`);
    const token = typeof req.query.token === 'string' ? req.query.token : undefined;
    const q = token ? `?token=${encodeURIComponent(token)}` : '';
    sendPage(res, episode, { asset: (name) => `/terminal/assets/${name}${q}`, pty: `/ws/episodes/${encodeURIComponent(episode.id)}/pty` });
  });
  app.get('/episodes/:id/:key/terminal', (req: Request, res: Response) => {
    const episode = res.locals.episode as Episode | undefined;
    if (!episode) return void noStore(res).status(404).type('text/plain').send('no episode here\n');
    sendPage(res, episode, { asset: (name) => `assets/${name}`, pty: 'pty' });
  });
}

function noStore(res: Response): Response {
  return res
    .set('Content-Security-Policy', CSP)
    .set('X-Content-Type-Options', 'nosniff')
    .set('Referrer-Policy', 'no-referrer')
    .set('Cache-Control', 'no-store');
}

/** The page; `asset` and `pty` are addresses relative to it (or absolute paths) of its files and its WebSocket. */
function sendPage(res: Response, episode: Episode, at: { asset: (name: string) => string; pty: string }): void {
  const asset = (name: string) => escapeHtml(at.asset(name));
  const title = `${episode.task.suite}/${episode.task.id} · ${episode.id}`;
  noStore(res)
    .type('html')
    .send(
      `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${escapeHtml(title)} · benchgym terminal</title>
<link rel="stylesheet" href="${asset('xterm.css')}">
<style>
  html, body { height: 100%; margin: 0; background: #111417; color: #d8dee4; font: 13px system-ui, sans-serif; }
  body { display: flex; flex-direction: column; }
  header { display: flex; gap: 1em; align-items: baseline; padding: 6px 10px; background: #1b1f24; border-bottom: 1px solid #2d333b; }
  header b { font-weight: 600; }
  header .meta { color: #8b949e; }
  #status { margin-left: auto; color: #8b949e; }
  #status.ok { color: #3fb950; }
  #status.error { color: #f85149; }
  #terminal { flex: 1; min-height: 0; padding: 4px 0 0 6px; }
</style>
</head>
<body data-episode="${escapeHtml(episode.id)}" data-pty="${escapeHtml(at.pty)}">
<header><b>${escapeHtml(`${episode.task.suite}/${episode.task.id}`)}</b><span class="meta">${escapeHtml(episode.id)} ` +
        `· ${escapeHtml(episode.sandbox.backend)} sandbox · ${escapeHtml(episode.state)}</span><span ` +
        `id="status">connecting…</span></header>
<div id="terminal"></div>
<script src="${asset('xterm.js')}"></script>
<script src="${asset('addon-fit.js')}"></script>
<script src="${asset('terminal.js')}"></script>
</body>
</html>
`,
    );
}
