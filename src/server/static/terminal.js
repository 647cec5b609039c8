// The terminal page's script (served as is, no build): xterm.js attached to the episode's
// terminal WebSocket (data-pty). Binary frames are terminal bytes; text frames are JSON control.
(() => {
  const status = document.getElementById('status');
  const setStatus = (text, kind) => {
    status.textContent = text;
    status.className = kind || '';
  };

  const term = new Terminal({
    cursorBlink: true,
    scrollback: 5000,
    fontSize: 14,
    fontFamily: 'ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace',
    theme: { background: '#111417', foreground: '#d8dee4' },
  });
  const fit = new FitAddon.FitAddon();
  term.loadAddon(fit);
  term.open(document.getElementById('terminal'));
  fit.fit();
  term.focus();
  window.benchgymTerminal = term;

  // The page names its WebSocket relative to itself: the operator's page an absolute path (plus
  // the token it was opened with), an episode's own page the `pty` next to it (its key in the path).
  const url = new URL(document.body.dataset.pty, location.href);
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  url.search = '';
  url.searchParams.set('cols', String(term.cols));
  url.searchParams.set('rows', String(term.rows));
  const token = new URLSearchParams(location.search).get('token');
  if (token) url.searchParams.set('token', token);
  const ws = new WebSocket(url);
  ws.binaryType = 'arraybuffer';
  const encoder = new TextEncoder();
  let exitCode;

  ws.onopen = () => {
    setStatus('connected', 'ok');
    // The page may have been laid out again since the URL was made.
    send(JSON.stringify({ type: 'resize', cols: term.cols, rows: term.rows }));
  };
  ws.onmessage = (event) => {
    if (typeof event.data !== 'string') return term.write(new Uint8Array(event.data));
    const msg = JSON.parse(event.data);
    if (msg.type === 'exit') exitCode = msg.code;
    else if (msg.type === 'error') term.write(`\r\n\x1b[31m[${msg.message}]\x1b[0m\r\n`);
  };
  ws.onclose = (event) => {
    const why =
      exitCode !== undefined
        ? `shell exited${exitCode === null ? '' : ` with code ${exitCode}`}` +
          `${event.reason && event.reason !== 'exited' ? ` (${event.reason})` : ''}`
        : `disconnected: ${event.reason || `code ${event.code}`}`;
    setStatus(why, exitCode !== undefined ? '' : 'error');
    term.write(`\r\n\x1b[2m[${why}]\x1b[0m\r\n`);
  };

  const send = (bytes) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(bytes);
  };
  term.onData((data) => send(encoder.encode(data)));
  // Some mouse reports are "binary" strings: one byte per character.
  term.onBinary((data) => send(Uint8Array.from(data, (c) => c.charCodeAt(0) & 0xff)));
  term.onResize(({ cols, rows }) => send(JSON.stringify({ type: 'resize', cols, rows })));
  new ResizeObserver(() => fit.fit()).observe(document.getElementById('terminal'));
})();
