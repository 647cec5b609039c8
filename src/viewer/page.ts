/** The viewer's page: a shell the script fills in; nothing from a run is in it. */
export const VIEWER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/**
 * The HTML of the viewer. Asset addresses are relative (the page works under `/` and
 * `/view/`); a server with a token gets it on the asset addresses, as the terminal page does.
 */
export function viewerPage(opts: { token?: string; live: boolean }): string {
  const q = opts.token ? `?token=${encodeURIComponent(opts.token)}` : '';
  const asset = (name: string) => escapeHtml(`assets/${name}${q}`);
  return (
    `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>benchgym view</title>
<link rel="stylesheet" href="${asset('viewer.css')}">
</head>
<body data-live="${opts.live ? '1' : '0'}">
<header class="top"><a class="brand" href="#/">benchgym <span>view</span></a><nav id="crumbs"></nav><a id="live-link" class="live-` +
    `link" href="#/live" hidden>● live</a></header>
<main id="app"><p class="muted">Loading…</p></main>
<script src="${asset('viewer.js')}"></script>
</body>
</html>
`
  );
}
