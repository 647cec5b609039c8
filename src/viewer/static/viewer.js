// benchgym view: the run and trajectory viewer. Plain DOM, no framework, no network but its
// own server. Everything from a run (agent output included) becomes text nodes or attribute
// values through h(); nothing is ever parsed as HTML.
'use strict';
(() => {
  const TOKEN = new URLSearchParams(location.search).get('token');
  const LIVE = document.body.dataset.live === '1';
  const PAGE_ROWS = 100;
  const PAGE_ITEMS = 60;
  const FOLD_LINES = 24;
  const app = document.getElementById('app');
  const crumbs = document.getElementById('crumbs');

  // ---- helpers -------------------------------------------------------------------------

  async function api(url) {
    const r = await fetch(url, { headers: TOKEN ? { Authorization: `Bearer ${TOKEN}` } : {} });
    const body = await r.json().catch(() => null);
    if (!r.ok) throw new Error(body && body.error ? `${body.error.code}: ${body.error.message}` : `HTTP ${r.status} for ${url}`);
    return body;
  }

  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else if (k === 'value') el.value = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    append(el, children);
    return el;
  }

  function append(el, children) {
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      if (Array.isArray(c)) append(el, c);
      else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
  }

  /** replaceChildren through h()'s rules (null and false are skipped, strings are text). */
  function put(el, ...children) {
    el.replaceChildren();
    append(el, children);
    return el;
  }

  const seg = (s) => encodeURIComponent(String(s));
  const runHref = (run, params) => `#/run/${seg(run)}${params ? `?${params}` : ''}`;
  const sampleHref = (run, task, sample) => `#/run/${seg(run)}/task/${seg(task)}/${seg(sample)}`;
  const compareHref = (a, b, task) => `#/compare/${seg(a)}/${seg(b)}/task/${seg(task)}`;
  const apiRun = (run) => `api/runs/${seg(run)}`;
  const apiPair = (run, task, sample) => `api/runs/${seg(run)}/tasks/${seg(task)}/${seg(sample)}`;
  // The operator's terminal page (the viewer is the operator's): the server's token opens it, never an episode key.
  const terminalHref = (id) => `../terminal/${seg(id)}${TOKEN ? `?token=${encodeURIComponent(TOKEN)}` : ''}`;
  // A download is a plain link: the token goes in its query, as a browser sends no header on one.
  const withToken = (url) => (TOKEN ? `${url}${url.includes('?') ? '&' : '?'}token=${encodeURIComponent(TOKEN)}` : url);

  const nf = new Intl.NumberFormat('en-US');
  function fmtInt(n) {
    return typeof n === 'number' ? nf.format(n) : '–';
  }
  function fmtTokens(n) {
    if (typeof n !== 'number') return '–';
    if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
    if (n >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
    return nf.format(n);
  }
  function fmtCost(c) {
    if (c === null || c === undefined) return 'n/a';
    return c >= 1 ? `$${c.toFixed(2)}` : `$${c.toFixed(4)}`;
  }
  function fmtMs(ms) {
    if (typeof ms !== 'number') return '–';
    if (ms < 1000) return `${Math.round(ms)} ms`;
    if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
    const m = Math.floor(ms / 60000);
    return `${m} min ${Math.round((ms % 60000) / 1000)} s`;
  }
  function fmtTime(iso) {
    if (!iso) return '';
    const d = new Date(iso);
    return Number.isNaN(d.getTime())
      ? String(iso)
      : d
          .toISOString()
          .replace('T', ' ')
          .replace(/\.\d+Z$/, ' UTC');
  }
  function fmtPct(x) {
    return typeof x === 'number' ? `${(x * 100).toFixed(1)}%` : '–';
  }
  function badge(status) {
    return h('span', { class: `badge ${status || 'none'}` }, status || '–');
  }
  function counts(c) {
    if (!c) return h('span', { class: 'muted' }, '–');
    const total = c.passed + c.failed;
    return h('span', { class: c.failed ? 'bad' : 'good', title: `${c.passed} passed, ${c.failed} failed` }, `${c.passed}/${total}`);
  }
  function short(s, n) {
    s = String(s);
    return s.length > n ? `${s.slice(0, n - 1)}…` : s;
  }
  function errorBox(message) {
    return h('div', { class: 'error-box' }, message);
  }

  /** A pre block that shows its first lines and folds the rest. */
  function folded(text, cls, foldAt = FOLD_LINES) {
    text = String(text ?? '');
    const lines = text.split('\n');
    if (lines.length <= foldAt + 4 && text.length <= 6000) return h('pre', { class: cls }, text);
    const head = lines.slice(0, foldAt).join('\n');
    const rest = lines.slice(foldAt).join('\n');
    const more = lines.length - foldAt;
    return h(
      'div',
      { class: 'fold' },
      h('pre', { class: cls }, head),
      h(
        'details',
        {},
        h('summary', {}, `show ${fmtInt(more)} more line${more === 1 ? '' : 's'} (${fmtInt(text.length)} characters in all)`),
        h('pre', { class: cls }, rest),
      ),
    );
  }

  /** A unified diff, one coloured line per line; long ones folded. */
  function diffView(text, foldAt = 400) {
    const lines = String(text ?? '')
      .replace(/\n$/, '')
      .split('\n');
    const line = (l) => {
      const cls =
        l.startsWith('diff --git') || l.startsWith('+++ ') || l.startsWith('--- ') || l.startsWith('index ')
          ? 'dl-file'
          : l.startsWith('@@')
            ? 'dl-hunk'
            : l.startsWith('+')
              ? 'dl-add'
              : l.startsWith('-')
                ? 'dl-del'
                : 'dl-ctx';
      return h('span', { class: `dl ${cls}` }, `${l}\n`);
    };
    const pre = h('pre', { class: 'diff' }, lines.slice(0, foldAt).map(line));
    if (lines.length <= foldAt) return pre;
    const rest = h('pre', { class: 'diff' });
    const det = h('details', {}, h('summary', {}, `show ${fmtInt(lines.length - foldAt)} more diff lines`), rest);
    det.addEventListener(
      'toggle',
      () => {
        if (det.open && !rest.childNodes.length) append(rest, lines.slice(foldAt).map(line));
      },
      { once: false },
    );
    return h('div', {}, pre, det);
  }

  /** An edit as -old/+new lines. */
  function editDiff(file, oldText, newText, where) {
    const out = [`--- ${file}`, `+++ ${file}`];
    if (where) out.push(`@@ ${where} @@`);
    if (oldText) for (const l of String(oldText).split('\n')) out.push(`-${l}`);
    if (newText !== undefined && newText !== null) for (const l of String(newText).split('\n')) out.push(`+${l}`);
    return diffView(out.join('\n'), 200);
  }

  // ---- page life cycle ------------------------------------------------------------------

  let view = { timers: [], observers: [], alive: true };
  function newView() {
    view.alive = false;
    for (const t of view.timers) clearInterval(t);
    for (const o of view.observers) o.disconnect();
    view = { timers: [], observers: [], alive: true };
    return view;
  }
  function setCrumbs(...parts) {
    put(crumbs, ...parts.flatMap((p, i) => [i ? h('span', { class: 'sep' }, '/') : null, p]));
  }

  function parseHash() {
    const raw = location.hash.replace(/^#\/?/, '');
    const [p, query] = raw.split('?');
    const parts = (p || '')
      .split('/')
      .filter((x) => x !== '')
      .map((x) => {
        try {
          return decodeURIComponent(x);
        } catch {
          return x;
        }
      });
    return { parts, params: new URLSearchParams(query || '') };
  }

  async function route() {
    const v = newView();
    const { parts, params } = parseHash();
    window.scrollTo(0, 0);
    try {
      if (parts[0] === 'run' && parts.length === 2) await runView(v, parts[1], params);
      else if (parts[0] === 'run' && parts[2] === 'task' && parts.length === 5) await sampleView(v, parts[1], parts[3], Number(parts[4]));
      else if (parts[0] === 'compare' && parts[3] === 'task' && parts.length === 5)
        await compareView(v, parts[1], parts[2], parts[4], params);
      else if (parts[0] === 'live' && parts.length === 1) await liveList(v);
      else if (parts[0] === 'live' && parts.length === 2) await liveEpisode(v, parts[1]);
      else await runList(v);
    } catch (err) {
      if (v.alive) put(app, errorBox(err.message));
    }
  }

  // ---- the run list ---------------------------------------------------------------------

  function rateBar(s) {
    const total = Math.max(1, s.results);
    const part = (n, cls) => {
      if (!n) return null;
      const el = h('span', { class: `seg ${cls}` });
      // The CSSOM, not a style attribute: the page's CSP allows no inline styles.
      el.style.width = `${(100 * n) / total}%`;
      return el;
    };
    return h(
      'div',
      { class: 'ratebar', title: `${s.passed} passed, ${s.failed} failed, ${s.errors} infrastructure errors` },
      part(s.passed, 'passed'),
      part(s.failed, 'failed'),
      part(s.errors, 'error'),
    );
  }

  const RUN_COLUMNS = [
    'run',
    'suite',
    'agent',
    'model',
    'started',
    'results',
    'pass rate',
    'scored only',
    '',
    'passed',
    'failed',
    'errors',
    'tokens',
    'cost',
  ];
  const RUN_COLUMN_TITLES = {
    'pass rate': 'passed over every result: an infrastructure error is a sample that did not pass',
    'scored only': 'passed over the results that are not infrastructure errors',
  };

  async function runList(v) {
    setCrumbs(h('span', {}, 'runs'));
    const [{ runs }, info] = await Promise.all([api('api/runs'), api('api/info')]);
    if (!v.alive) return;
    const body = [h('h1', {}, 'Runs')];
    if (!runs.length) {
      body.push(
        h('p', { class: 'muted' }, info.live ? 'This server shows live episodes; benchgym view DIR shows finished runs.' : 'No runs.'),
      );
    } else {
      body.push(
        h(
          'table',
          { class: 'grid runs' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              RUN_COLUMNS.map((c) => h('th', { title: RUN_COLUMN_TITLES[c] || '' }, c)),
            ),
          ),
          h(
            'tbody',
            {},
            runs.map((s) =>
              h(
                'tr',
                {},
                h('td', {}, h('a', { href: runHref(s.id) }, s.id), s.complete ? null : h('span', { class: 'pill running' }, 'in progress')),
                h('td', {}, s.suite),
                h('td', {}, s.agent),
                h('td', {}, s.model),
                h('td', { class: 'muted nowrap' }, fmtTime(s.started)),
                h('td', { class: 'num' }, `${fmtInt(s.results)} / ${fmtInt(s.expected)}`),
                h('td', { class: 'num strong' }, fmtPct(s.passRate)),
                h('td', { class: 'num muted' }, s.errors ? fmtPct(s.scoredPassRate) : ''),
                h('td', {}, rateBar(s)),
                h('td', { class: 'num good' }, fmtInt(s.passed)),
                h('td', { class: 'num bad' }, fmtInt(s.failed)),
                h('td', { class: 'num warn' }, fmtInt(s.errors)),
                h('td', { class: 'num' }, fmtTokens(s.tokens)),
                h('td', { class: 'num' }, fmtCost(s.costUsd)),
              ),
            ),
          ),
        ),
      );
      if (runs.length >= 2) {
        const a = h(
          'select',
          { id: 'cmp-a' },
          runs.map((s, i) => h('option', { value: s.id, selected: i === 0 }, s.id)),
        );
        const b = h(
          'select',
          { id: 'cmp-b' },
          runs.map((s, i) => h('option', { value: s.id, selected: i === 1 }, s.id)),
        );
        body.push(
          h(
            'div',
            { class: 'card compare-pick' },
            h('b', {}, 'Compare two runs: '),
            a,
            ' vs ',
            b,
            ' ',
            h('button', { onclick: () => (location.hash = runHref(a.value, `compare=${seg(b.value)}`)) }, 'open'),
          ),
        );
      }
    }
    if (info.live) body.push(h('p', {}, h('a', { href: '#/live' }, 'Episodes in progress on this server →')));
    put(app, ...body);
  }

  // ---- one run's table ------------------------------------------------------------------

  const COLUMNS = [
    { key: 'task', label: 'task' },
    { key: 'sample', label: 'sample', num: true },
    { key: 'status', label: 'status' },
    { key: 'reward', label: 'reward', num: true },
    { key: 'stopReason', label: 'stop reason' },
    { key: 'steps', label: 'steps', num: true },
    { key: 'tokens', label: 'tokens', num: true },
    { key: 'costUsd', label: 'cost', num: true },
    { key: 'durationMs', label: 'duration', num: true },
    { key: 'failToPass', label: 'FAIL_TO_PASS', num: true },
    { key: 'passToPass', label: 'PASS_TO_PASS', num: true },
    { key: 'attempts', label: 'attempts', num: true },
    { key: 'infraError', label: 'infrastructure error' },
  ];

  async function runView(v, run, params) {
    setCrumbs(h('a', { href: '#/' }, 'runs'), h('span', {}, run));
    const [info, { runs }] = await Promise.all([api(apiRun(run)), api('api/runs')]);
    if (!v.alive) return;
    const state = {
      sort: params.get('sort') || 'task',
      dir: params.get('dir') || 'asc',
      status: params.get('status') || '',
      q: params.get('q') || '',
      metaKey: '',
      metaValue: '',
      offset: Number(params.get('offset')) || 0,
      compare: params.get('compare') || '',
    };
    for (const [k, val] of params) if (k.startsWith('m.')) [state.metaKey, state.metaValue] = [k.slice(2), val];

    const summaryEl = h('div', { class: 'chips' });
    const drawSummary = (s) => {
      put(
        summaryEl,
        chip('results', `${fmtInt(s.results)} / ${fmtInt(s.expected)}`),
        chip('pass rate', fmtPct(s.passRate), 'strong'),
        s.errors ? chip('scored only', fmtPct(s.scoredPassRate)) : null,
        chip('passed', fmtInt(s.passed), 'good'),
        chip('failed', fmtInt(s.failed), 'bad'),
        chip('infrastructure errors', fmtInt(s.errors), s.errors ? 'warn' : ''),
        s.running ? chip('running', fmtInt(s.running)) : null,
        chip('tokens', fmtTokens(s.tokens)),
        chip('cost', fmtCost(s.costUsd)),
        s.complete ? null : h('span', { class: 'pill running' }, 'in progress: refreshing'),
      );
    };
    drawSummary(info.summary);

    const statusSel = h(
      'select',
      { id: 'f-status', onchange: () => ((state.status = statusSel.value), (state.offset = 0), refresh()) },
      [
        ['', 'any status'],
        ['passed', 'passed'],
        ['failed', 'failed'],
        ['error', 'infrastructure error'],
        ['running', 'running'],
      ].map(([val, label]) => h('option', { value: val, selected: state.status === val }, label)),
    );
    const keys = Object.keys(info.facets);
    const keySel = h(
      'select',
      { id: 'f-key' },
      h('option', { value: '' }, 'metadata…'),
      keys.map((k) => h('option', { value: k, selected: state.metaKey === k }, k)),
    );
    const valSel = h('select', { id: 'f-value' });
    const fillValues = () => {
      const vals = info.facets[keySel.value] || [];
      put(
        valSel,
        h('option', { value: '' }, keySel.value ? 'any value' : '–'),
        vals.map((x) => h('option', { value: x.value, selected: state.metaValue === x.value }, `${x.value} (${fmtInt(x.count)})`)),
      );
      valSel.disabled = !keySel.value;
    };
    fillValues();
    keySel.addEventListener('change', () => {
      state.metaKey = keySel.value;
      state.metaValue = '';
      fillValues();
      state.offset = 0;
      refresh();
    });
    valSel.addEventListener('change', () => ((state.metaValue = valSel.value), (state.offset = 0), refresh()));
    let debounce;
    const search = h('input', { id: 'f-task', type: 'search', placeholder: 'task id contains…', value: state.q });
    search.addEventListener('input', () => {
      clearTimeout(debounce);
      debounce = setTimeout(() => ((state.q = search.value), (state.offset = 0), refresh()), 200);
    });
    const others = runs.filter((r) => r.id !== run);
    const cmpSel = others.length
      ? h(
          'select',
          { id: 'f-compare', onchange: () => ((state.compare = cmpSel.value), refresh()) },
          h('option', { value: '' }, 'compare with…'),
          others.map((r) => h('option', { value: r.id, selected: state.compare === r.id }, r.id)),
        )
      : null;
    const clear = h(
      'button',
      {
        class: 'link',
        onclick: () => {
          Object.assign(state, { status: '', q: '', metaKey: '', metaValue: '', offset: 0 });
          statusSel.value = '';
          keySel.value = '';
          search.value = '';
          fillValues();
          refresh();
        },
      },
      'clear filters',
    );

    const table = h('table', { class: 'grid results', id: 'results' });
    const pager = h('div', { class: 'pager' });
    const m = info.summary;
    put(
      app,
      h('h1', {}, run),
      h(
        'p',
        { class: 'sub' },
        `${m.suite} · ${m.agent} · ${m.model} · started ${fmtTime(m.started)}`,
        info.resumed && info.resumed.length ? ` · resumed ${info.resumed.length}×` : '',
      ),
      summaryEl,
      h('div', { class: 'filters' }, statusSel, keySel, valSel, search, cmpSel, clear),
      h('div', { class: 'table-wrap' }, table),
      pager,
    );

    const query = () => {
      const p = new URLSearchParams({ sort: state.sort, dir: state.dir, offset: String(state.offset), limit: String(PAGE_ROWS) });
      if (state.status) p.set('status', state.status);
      if (state.q) p.set('q', state.q);
      if (state.metaKey && state.metaValue) p.set(`m.${state.metaKey}`, state.metaValue);
      return p;
    };
    let seq = 0;
    async function refresh() {
      const p = query();
      const hp = new URLSearchParams(p);
      hp.delete('limit');
      if (state.compare) hp.set('compare', state.compare);
      history.replaceState(null, '', runHref(run, hp.toString()));
      const mine = ++seq;
      const page = await api(`${apiRun(run)}/results?${p}`);
      if (!v.alive || mine !== seq) return;
      drawTable(page);
    }
    function drawTable(page) {
      const head = h(
        'tr',
        {},
        COLUMNS.map((c) => {
          const active = state.sort === c.key;
          return h(
            'th',
            {
              class: `${c.num ? 'num ' : ''}sortable${active ? ' active' : ''}`,
              'data-key': c.key,
              onclick: () => {
                state.dir = active && state.dir === 'asc' ? 'desc' : active ? 'asc' : c.num ? 'desc' : 'asc';
                state.sort = c.key;
                state.offset = 0;
                refresh();
              },
            },
            c.label,
            active ? (state.dir === 'asc' ? ' ▲' : ' ▼') : '',
          );
        }),
        state.metaKey ? h('th', {}, state.metaKey) : null,
        state.compare ? h('th', {}, 'compare') : null,
      );
      const rows = page.rows.map((r) =>
        h(
          'tr',
          { class: `row-${r.status}` },
          h('td', { class: 'task' }, h('a', { href: sampleHref(run, r.task, r.sample) }, r.task)),
          h('td', { class: 'num' }, r.sample),
          h('td', {}, badge(r.status)),
          h('td', { class: 'num' }, r.reward),
          h('td', {}, r.stopReason),
          h('td', { class: 'num' }, fmtInt(r.steps)),
          h('td', { class: 'num' }, fmtTokens(r.tokens)),
          h('td', { class: 'num' }, fmtCost(r.costUsd)),
          h('td', { class: 'num nowrap' }, fmtMs(r.durationMs)),
          h('td', { class: 'num' }, counts(r.failToPass)),
          h('td', { class: 'num' }, counts(r.passToPass)),
          h('td', { class: 'num' }, r.attempts > 1 ? h('span', { class: 'warn' }, r.attempts) : r.attempts),
          h(
            'td',
            { class: 'infra', title: r.infraError || r.agentError || null },
            r.infraError ? short(r.infraError, 80) : r.agentError ? h('span', { class: 'muted' }, `agent: ${short(r.agentError, 70)}`) : '',
          ),
          state.metaKey
            ? h(
                'td',
                { class: 'meta' },
                !Object.hasOwn(r.metadata, state.metaKey) || r.metadata[state.metaKey] === undefined
                  ? ''
                  : String(r.metadata[state.metaKey]),
              )
            : null,
          state.compare ? h('td', {}, h('a', { href: compareHref(run, state.compare, r.task) }, 'side by side')) : null,
        ),
      );
      if (!rows.length)
        rows.push(h('tr', {}, h('td', { colspan: COLUMNS.length + 2, class: 'muted empty' }, 'No result matches these filters.')));
      put(table, h('thead', {}, head), h('tbody', {}, rows));
      const first = page.matched ? page.offset + 1 : 0;
      const last = Math.min(page.offset + page.rows.length, page.matched);
      put(
        pager,
        h(
          'button',
          { disabled: page.offset <= 0, onclick: () => ((state.offset = Math.max(0, state.offset - PAGE_ROWS)), refresh()) },
          '‹ previous',
        ),
        h(
          'span',
          { id: 'page-info' },
          `${fmtInt(first)}–${fmtInt(last)} of ${fmtInt(page.matched)}`,
          page.matched !== page.total ? ` (filtered from ${fmtInt(page.total)})` : '',
        ),
        h('button', { disabled: last >= page.matched, onclick: () => ((state.offset += PAGE_ROWS), refresh()) }, 'next ›'),
      );
    }
    await refresh();
    if (!info.summary.complete) {
      v.timers.push(
        setInterval(async () => {
          const fresh = await api(apiRun(run)).catch(() => null);
          if (!fresh || !v.alive) return;
          drawSummary(fresh.summary);
          await refresh().catch(() => {});
        }, 3000),
      );
    }
  }

  function chip(label, value, cls) {
    return h('span', { class: `chip ${cls || ''}` }, h('span', { class: 'chip-label' }, label), h('span', { class: 'chip-value' }, value));
  }

  // ---- a transcript ---------------------------------------------------------------------

  function argsView(tool, args) {
    if (!args || typeof args !== 'object') return null;
    if (tool === 'edit_file' && typeof args.old_str === 'string')
      return editDiff(args.path, args.old_str, args.new_str, args.replace_all ? 'every occurrence' : null);
    if (tool === 'create_file' && typeof args.content === 'string')
      return editDiff(args.path, null, args.content, args.overwrite ? 'whole file (overwrite)' : 'new file');
    if (tool === 'insert_lines' && typeof args.text === 'string') return editDiff(args.path, null, args.text, `after line ${args.line}`);
    if (tool === 'run_command' && typeof args.command === 'string') return folded(`$ ${args.command}`, 'cmd', 12);
    const keys = Object.keys(args);
    if (!keys.length) return null;
    const text = JSON.stringify(args);
    if (text.length <= 160) return h('code', { class: 'args' }, keys.map((k) => `${k}=${JSON.stringify(args[k])}`).join('  '));
    return folded(JSON.stringify(args, null, 2), 'args', 16);
  }

  function itemView(it) {
    const time = it.time ? h('span', { class: 'time' }, fmtTime(it.time).slice(11)) : null;
    switch (it.kind) {
      case 'attempt':
        return h(
          'div',
          { class: 'item attempt' },
          h('span', {}, `Attempt ${it.attempt}`),
          it.episodeId ? h('span', { class: 'muted' }, ` · episode ${it.episodeId}`) : null,
          time,
        );
      case 'episode':
        return h(
          'div',
          { class: 'item attempt' },
          h('span', {}, `Episode ${it.episodeId || ''}`),
          h('span', { class: 'muted' }, ` · ${it.suite || ''}/${it.task || ''} · ${it.sandbox || ''} sandbox`),
          time,
        );
      case 'prompt':
        return h(
          'div',
          { class: 'item prompt' },
          h('div', { class: 'item-head' }, h('b', {}, 'Prompt'), time),
          it.system ? h('details', {}, h('summary', {}, 'system prompt'), h('pre', { class: 'text' }, it.system)) : null,
          it.user !== undefined ? folded(it.user, 'text', 40) : null,
        );
      case 'assistant':
        return h(
          'div',
          { class: 'item assistant' },
          h('div', { class: 'item-head' }, h('b', {}, 'Model'), time),
          it.content ? folded(it.content, 'text', 40) : h('p', { class: 'muted small' }, '(no text)'),
          it.toolCalls.length
            ? h(
                'div',
                { class: 'calls' },
                it.toolCalls.map((c) => h('span', { class: 'call' }, `→ ${c.name}(${short(c.arguments, 100)})`)),
              )
            : null,
        );
      case 'answer':
        return h(
          'div',
          { class: 'item assistant' },
          h(
            'div',
            { class: 'item-head' },
            h('b', {}, 'Model answer'),
            it.files.length ? h('span', { class: 'muted' }, ` files: ${it.files.join(', ')}`) : null,
            time,
          ),
          folded(it.text, 'text', 40),
          it.problem ? errorBox(it.problem) : null,
        );
      case 'tool':
        return h(
          'div',
          { class: `item tool ${it.ok ? '' : 'failed'}` },
          h(
            'div',
            { class: 'item-head' },
            it.step !== undefined ? h('span', { class: 'step' }, `#${it.step}`) : null,
            h('b', { class: 'tool-name' }, it.tool),
            it.ok ? null : h('span', { class: 'badge failed' }, 'error'),
            it.durationMs !== undefined ? h('span', { class: 'muted' }, fmtMs(it.durationMs)) : null,
            time,
          ),
          argsView(it.tool, it.args),
          it.observation !== undefined ? folded(it.observation, 'obs') : null,
          it.error ? errorBox(it.error) : null,
        );
      case 'result':
        return h(
          'div',
          { class: 'item result' },
          h('b', {}, 'Result'),
          ' ',
          badge(it.status),
          it.reward !== undefined ? ` reward ${it.reward}` : '',
          it.stopReason ? ` · stop reason: ${it.stopReason}` : '',
          time,
          it.infraError ? errorBox(it.infraError) : null,
        );
      case 'end':
        return h(
          'div',
          { class: 'item result' },
          h('b', {}, 'Episode ended'),
          ` (${it.state})`,
          time,
          it.infraError ? errorBox(it.infraError) : null,
        );
      default: {
        const f = Object.assign({}, it.fields);
        delete f.attempt;
        const text = Object.entries(f)
          .map(([k, val]) => `${k}: ${typeof val === 'string' ? val : JSON.stringify(val)}`)
          .join('\n');
        const bad = /error|failed/.test(it.type);
        return h(
          'div',
          { class: `item event ${bad ? 'bad-event' : ''}` },
          h('div', { class: 'item-head' }, h('span', { class: 'event-type' }, it.type), time),
          text ? folded(text, 'small-pre', 8) : null,
        );
      }
    }
  }

  function verdictView(vd, compact) {
    if (!vd) return h('div', { class: 'card verdict muted' }, 'No verdict: nothing was scored (yet).');
    const t = vd.tests;
    const parts = [
      h(
        'div',
        { class: 'item-head' },
        h('b', {}, 'Verdict'),
        badge(vd.status),
        h('span', {}, `reward ${vd.reward}`),
        h('span', { class: 'muted' }, `hidden tests: ${t.passed} passed, ${t.failed} failed, ${t.error} errors, ${t.skipped} skipped`),
        vd.timedOut ? h('span', { class: 'badge error' }, 'timed out') : null,
      ),
    ];
    if (vd.error) parts.push(errorBox(vd.error));
    if (vd.failToPass) {
      parts.push(
        h(
          'div',
          { class: 'lists' },
          h('span', {}, 'FAIL_TO_PASS: ', counts({ passed: vd.failToPass.passed.length, failed: vd.failToPass.failed.length })),
          vd.passToPass
            ? h('span', {}, ' · PASS_TO_PASS: ', counts({ passed: vd.passToPass.passed, failed: vd.passToPass.failed.length }))
            : null,
        ),
      );
      const still = [
        ...vd.failToPass.failed.map((n) => `FAIL_TO_PASS still failing: ${n}`),
        ...(vd.passToPass ? vd.passToPass.failed.map((n) => `PASS_TO_PASS broken: ${n}`) : []),
      ];
      if (still.length) parts.push(folded(still.join('\n'), 'small-pre', 12));
    }
    if (vd.failing.length) {
      parts.push(h('div', { class: 'failing-title' }, `Failing tests (${fmtInt(vd.failingTotal)})`));
      const test = (f, i) =>
        h(
          'details',
          { open: i < (compact ? 1 : 3) },
          h('summary', {}, badge(f.status), ' ', h('code', {}, f.name)),
          f.message ? folded(f.message, 'obs', 30) : h('p', { class: 'muted small' }, 'no message'),
        );
      const shown = compact ? 5 : 12;
      parts.push(
        h(
          'div',
          { class: 'failing' },
          vd.failing.slice(0, shown).map(test),
          vd.failing.length > shown
            ? h(
                'details',
                { class: 'more-tests' },
                h('summary', {}, `show ${fmtInt(vd.failing.length - shown)} more failing tests`),
                vd.failing.slice(shown).map((f, i) => test(f, i + shown)),
              )
            : null,
        ),
      );
      if (vd.failingTotal > vd.failing.length)
        parts.push(h('p', { class: 'muted small' }, `… and ${fmtInt(vd.failingTotal - vd.failing.length)} more`));
    }
    if (vd.notes.length)
      parts.push(
        h(
          'ul',
          { class: 'notes' },
          vd.notes.map((n) => h('li', {}, n)),
        ),
      );
    const diff =
      vd.diff !== undefined
        ? h(
            'details',
            { class: 'final-diff', open: !compact && vd.diff.split('\n').length < 300 },
            h('summary', {}, h('b', {}, 'Final diff'), ` (${fmtInt(vd.diff ? vd.diff.split('\n').length : 0)} lines)`),
            vd.diff ? diffView(vd.diff) : h('p', { class: 'muted' }, 'empty: no change was submitted'),
          )
        : null;
    return h('div', { class: `card verdict v-${vd.status}` }, parts, diff);
  }

  /**
   * Mounts a transcript into `el`: the verdict card first, then the entries, a page at a
   * time as the reader scrolls, and new entries as a live episode appends them.
   */
  function mountTranscript(v, el, itemsUrl, opts = {}) {
    const verdictSlot = h('div', { class: 'verdict-slot' });
    const list = h('div', { class: 'items' });
    const sentinel = h('div', { class: 'sentinel muted' }, 'loading…');
    el.replaceChildren(verdictSlot, h('h2', {}, 'Transcript'), list, sentinel);
    let loaded = 0;
    let total = Infinity;
    let done = false;
    let busy = false;
    let verdictKey = '';
    async function more() {
      if (busy || !v.alive) return;
      busy = true;
      try {
        const page = await api(`${itemsUrl}?from=${loaded}&limit=${PAGE_ITEMS}`);
        if (!v.alive) return;
        append(list, page.items.map(itemView));
        loaded += page.items.length;
        total = page.total;
        done = page.done;
        const key = JSON.stringify(page.verdict ? [page.verdict.status, page.verdict.tests] : null);
        if (key !== verdictKey || !verdictSlot.childNodes.length) {
          verdictKey = key;
          put(verdictSlot, verdictView(page.verdict, opts.compact));
        }
        sentinel.textContent =
          loaded < total
            ? `${fmtInt(loaded)} of ${fmtInt(total)} entries: scroll for more`
            : !total && done
              ? 'No trajectory was found for this episode.'
              : done
                ? `${fmtInt(total)} entries`
                : `${fmtInt(total)} entries so far: live, updating`;
        sentinel.className = `sentinel muted${!done && loaded >= total ? ' live' : ''}`;
        if (opts.onPage) opts.onPage(page);
      } finally {
        busy = false;
      }
    }
    const io = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting) && loaded < total) more().catch((err) => put(sentinel, errorBox(err.message)));
      },
      { rootMargin: '600px' },
    );
    io.observe(sentinel);
    v.observers.push(io);
    v.timers.push(
      setInterval(() => {
        if (!done && loaded >= total) more().catch(() => {});
      }, opts.pollMs || 1500),
    );
    return more();
  }

  async function sampleView(v, run, task, sample) {
    setCrumbs(h('a', { href: '#/' }, 'runs'), h('a', { href: runHref(run) }, run), h('span', {}, `${task} · sample ${sample}`));
    const [info, { runs }] = await Promise.all([api(apiPair(run, task, sample)), api('api/runs')]);
    if (!v.alive) return;
    const r = info.row;
    const others = runs.filter((x) => x.id !== run);
    const cmp = others.length
      ? h(
          'select',
          { id: 'compare-with', onchange: (e) => e.target.value && (location.hash = compareHref(run, e.target.value, task)) },
          h('option', { value: '' }, 'side by side with…'),
          others.map((x) => h('option', { value: x.id }, x.id)),
        )
      : null;
    const facts = r
      ? h(
          'div',
          { class: 'chips' },
          chip('status', badge(r.status)),
          chip('reward', r.reward),
          chip('stop reason', r.stopReason),
          chip('steps', fmtInt(r.steps)),
          chip('tokens', fmtTokens(r.tokens)),
          chip('cost', fmtCost(r.costUsd)),
          chip('duration', fmtMs(r.durationMs)),
          chip('FAIL_TO_PASS', counts(r.failToPass)),
          chip('PASS_TO_PASS', counts(r.passToPass)),
          r.attempts > 1 ? chip('attempts', r.attempts, 'warn') : null,
        )
      : h('p', { class: 'muted' }, 'no final result yet');
    const body = h('div', { id: 'transcript' });
    put(
      app,
      h('h1', {}, task, h('span', { class: 'h-sub' }, ` sample ${sample}`)),
      h(
        'p',
        { class: 'sub' },
        `${run} · ${info.agent} · ${info.model}`,
        info.episodeId ? ` · episode ${info.episodeId}` : '',
        info.samples.length > 1
          ? h(
              'span',
              { class: 'samples' },
              ' · samples: ',
              info.samples.map((s) => (s === sample ? h('b', {}, ` ${s} `) : h('a', { href: sampleHref(run, task, s) }, ` ${s} `))),
            )
          : null,
        ' ',
        cmp,
        info.attempts.length
          ? h(
              'span',
              {},
              ' · ',
              h('a', { id: 'atif-link', href: withToken(`${apiPair(run, task, sample)}/atif`), download: '' }, 'download ATIF'),
            )
          : null,
      ),
      facts,
      r && r.infraError ? errorBox(`Infrastructure failure: ${r.infraError}`) : null,
      r && r.agentError ? errorBox(`Agent error: ${r.agentError}`) : null,
      info.attempts.length > 1
        ? h(
            'ul',
            { class: 'notes' },
            info.attempts.map((a) =>
              h('li', {}, `attempt ${a.attempt}: ${a.status}${a.final ? ' (final)' : ''}${a.infraError ? ` · ${a.infraError}` : ''}`),
            ),
          )
        : null,
      info.notes.length
        ? h(
            'ul',
            { class: 'notes' },
            info.notes.map((n) => h('li', {}, n)),
          )
        : null,
      body,
    );
    await mountTranscript(v, body, `${apiPair(run, task, sample)}/items`);
  }

  async function compareView(v, a, b, task, params) {
    setCrumbs(h('a', { href: '#/' }, 'runs'), h('span', {}, `${a} vs ${b}`), h('span', {}, task));
    const [ta, tb] = await Promise.all([api(`${apiRun(a)}/tasks/${seg(task)}`), api(`${apiRun(b)}/tasks/${seg(task)}`)]);
    if (!v.alive) return;
    const cols = [];
    const side = (run, rows, key) => {
      const col = h('div', { class: 'side', id: `side-${key}` });
      const wanted = params.get(key);
      let sample = wanted !== null && rows.some((r) => String(r.sample) === wanted) ? Number(wanted) : rows[0] ? rows[0].sample : 0;
      const head = h('div', { class: 'side-head' });
      const body = h('div', {});
      const draw = async () => {
        const row = rows.find((r) => r.sample === sample);
        // A select even for one sample, so both columns line up.
        const choose = (e) => {
          sample = Number(e.target.value);
          params.set(key, String(sample));
          history.replaceState(null, '', `${compareHref(a, b, task)}?${params}`);
          draw();
        };
        const sel = h(
          'select',
          { disabled: rows.length < 2, onchange: choose },
          rows.map((r) => h('option', { value: r.sample, selected: r.sample === sample }, `sample ${r.sample} · ${r.status}`)),
        );
        put(
          head,
          h('h2', {}, h('a', { href: runHref(run) }, run)),
          sel,
          row
            ? h(
                'div',
                { class: 'chips' },
                chip('status', badge(row.status)),
                chip('steps', fmtInt(row.steps)),
                chip('tokens', fmtTokens(row.tokens)),
                chip('cost', fmtCost(row.costUsd)),
                chip('duration', fmtMs(row.durationMs)),
                h('a', { class: 'small', href: sampleHref(run, task, sample) }, 'full page ›'),
              )
            : h('p', { class: 'muted' }, 'no result for this task in this run'),
          row && row.infraError ? errorBox(row.infraError) : null,
        );
        if (row) await mountTranscript(v, body, `${apiPair(run, task, sample)}/items`, { compact: true });
        else put(body);
      };
      col.append(head, body);
      cols.push(draw);
      return col;
    };
    put(
      app,
      h('h1', {}, task, h('span', { class: 'h-sub' }, ' side by side')),
      h('div', { class: 'compare' }, side(a, ta.rows, 'a'), side(b, tb.rows, 'b')),
    );
    await Promise.all(cols.map((d) => d()));
  }

  // ---- live episodes --------------------------------------------------------------------

  async function liveList(v) {
    setCrumbs(h('a', { href: '#/' }, 'runs'), h('span', {}, 'live'));
    const table = h('table', { class: 'grid', id: 'live' });
    put(app, h('h1', {}, 'Episodes on this server'), h('p', { class: 'sub' }, 'Refreshes every 2 s.'), table);
    const draw = async () => {
      const { episodes, available } = await api('api/live');
      if (!v.alive) return;
      if (!available)
        return void put(
          table,
          h(
            'tbody',
            {},
            h('tr', {}, h('td', { class: 'muted' }, 'Live episodes are shown by the viewer of benchgym serve (its /view/ page).')),
          ),
        );
      put(
        table,
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['episode', 'task', 'state', 'steps', 'started', 'last active', 'verdict', 'terminal'].map((c) => h('th', {}, c)),
          ),
        ),
        h(
          'tbody',
          {},
          episodes.length
            ? episodes.map((e) =>
                h(
                  'tr',
                  {},
                  h('td', {}, h('a', { href: `#/live/${seg(e.id)}` }, e.id)),
                  h('td', {}, `${e.suite}/${e.task}`),
                  h('td', {}, h('span', { class: `pill ${e.state === 'running' ? 'running' : ''}` }, e.state)),
                  h('td', { class: 'num' }, e.steps),
                  h('td', { class: 'muted nowrap' }, fmtTime(e.startedAt)),
                  h('td', { class: 'muted nowrap' }, fmtTime(e.lastActiveAt)),
                  h('td', {}, e.status ? badge(e.status) : ''),
                  h(
                    'td',
                    {},
                    e.state === 'running' ? h('a', { href: terminalHref(e.id), target: '_blank', rel: 'noopener' }, 'open terminal') : '',
                  ),
                ),
              )
            : h('tr', {}, h('td', { colspan: 8, class: 'muted' }, 'No episode yet.')),
        ),
      );
    };
    await draw();
    v.timers.push(setInterval(() => draw().catch(() => {}), 2000));
  }

  async function liveEpisode(v, id) {
    setCrumbs(h('a', { href: '#/' }, 'runs'), h('a', { href: '#/live' }, 'live'), h('span', {}, id));
    const { episode } = await api(`api/live/${seg(id)}`);
    if (!v.alive) return;
    const state = h('span', { class: `pill ${episode.state === 'running' ? 'running' : ''}`, id: 'live-state' }, episode.state);
    const body = h('div', { id: 'transcript' });
    put(
      app,
      h('h1', {}, `${episode.suite}/${episode.task}`),
      h(
        'p',
        { class: 'sub' },
        `episode ${episode.id} · ${episode.sandbox} sandbox · started ${fmtTime(episode.startedAt)} `,
        state,
        ' ',
        episode.state === 'running'
          ? h('a', { id: 'terminal-link', href: terminalHref(episode.id), target: '_blank', rel: 'noopener' }, 'open its terminal ›')
          : null,
        ' · ',
        h('a', { id: 'atif-link', href: withToken(`api/live/${seg(id)}/atif`), download: '' }, 'download ATIF'),
      ),
      body,
    );
    await mountTranscript(v, body, `api/live/${seg(id)}/items`, {
      pollMs: 1000,
      onPage: (page) => {
        if (page.done) state.textContent = 'ended';
      },
    });
  }

  if (LIVE) document.getElementById('live-link').hidden = false;
  window.addEventListener('hashchange', route);
  route();
})();
