import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { PROJECT_ROOT } from '../../src/project.ts';

/** The project's Markdown files and sources: tracked ones and new ones not ignored (a link is checked before it is committed). */
function projectFiles(ext: RegExp): string[] {
  const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: PROJECT_ROOT,
    maxBuffer: 64 << 20,
  });
  return [...new Set(out.toString('utf8').split('\0').filter(Boolean))]
    .filter((f) => ext.test(f) && !f.startsWith(`node_modules${path.sep}`))
    .filter((f) => existsSync(path.join(PROJECT_ROOT, f)));
}

/** The text outside fenced code blocks and code spans: what a reader sees as links. */
function proseOf(markdown: string): string {
  let fenced = false;
  return markdown
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line.replace(/`+[^`]*`+/g, '');
    })
    .join('\n');
}

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
export function slugOf(heading: string): string {
  return heading
    .replace(/<[^>]+>/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a Markdown file offers: its headings' (repeats numbered as GitHub does) and explicit `id`s. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (h) {
      const slug = slugOf(h[1]!);
      const n = seen.get(slug) ?? 0;
      seen.set(slug, n + 1);
      anchors.add(n === 0 ? slug : `${slug}-${n}`);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
  }
  return anchors;
}

/** Relative links of a Markdown file (`[text](target)`, `[label]: target`), with their lines. */
export function relativeLinks(markdown: string): { line: number; target: string }[] {
  const links: { line: number; target: string }[] = [];
  for (const [i, line] of proseOf(markdown).split('\n').entries()) {
    const targets = [
      ...[...line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!),
      ...[...line.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/g)].map((m) => m[1]!),
    ];
    for (const target of targets) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, ...
      links.push({ line: i + 1, target });
    }
  }
  return links;
}

/** What is wrong with each relative link of `file` (a path from the project root): a missing file or anchor. */
export function danglingLinks(file: string, read: (f: string) => string | undefined): string[] {
  const text = read(file);
  if (text === undefined) return [`${file}: not found`];
  const out: string[] = [];
  for (const { line, target } of relativeLinks(text)) {
    const [rawPath, anchor] = target.split('#', 2) as [string, string | undefined];
    const to = rawPath === '' ? file : path.normalize(path.join(path.dirname(file), decodeURIComponent(rawPath)));
    const where = `${file}:${line}: ${target}`;
    if (to.startsWith('..')) {
      out.push(`${where}: leads out of the project`);
      continue;
    }
    const body = read(to);
    if (body === undefined && !existsSync(path.join(PROJECT_ROOT, to))) {
      out.push(`${where}: no such file`);
      continue;
    }
    if (anchor && to.endsWith('.md') && !anchorsOf(body ?? '').has(anchor)) out.push(`${where}: no heading #${anchor} in ${to}`);
  }
  return out;
}

const readProject = (f: string): string | undefined => {
  const abs = path.join(PROJECT_ROOT, f);
  return existsSync(abs) && statSync(abs).isFile() ? readFileSync(abs, 'utf8') : undefined;
};

describe('relative links in the docs resolve', () => {
  test('the check finds a missing file, a missing anchor and a link out of the project, and spares good ones', () => {
    const files: Record<string, string> = {
      'docs/A.md': [
        '# A map',
        '## The sandbox, in brief',
        '## Repeat',
        '## Repeat',
        '[ok](../src/x/README.md#what-it-holds-xts) [ok](#the-sandbox-in-brief) [ok](#repeat-1) [web](https://example.org/#x)',
        '[gone](../src/y/README.md) [anchor](../src/x/README.md#nowhere) [out](../../elsewhere.md)',
        '`[code](nowhere.md)`',
        '```',
        '[fenced](nowhere.md)',
        '```',
        '[self](#not-here)',
      ].join('\n'),
      'src/x/README.md': '# src/x\n## What it holds: `x.ts`\n',
    };
    const problems = danglingLinks('docs/A.md', (f) => files[f]);
    assert.deepEqual(
      problems.map((p) => p.replace(/:.*?: /, ': ')),
      [
        'docs/A.md: ../src/y/README.md: no such file',
        'docs/A.md: ../src/x/README.md#nowhere: no heading #nowhere in src/x/README.md',
        'docs/A.md: ../../elsewhere.md: leads out of the project',
        'docs/A.md: #not-here: no heading #not-here in docs/A.md',
      ],
    );
  });

  test('GitHub anchors: punctuation dropped, code kept as text', () => {
    assert.equal(slugOf('Java builds: the build guard'), 'java-builds-the-build-guard');
    assert.equal(slugOf('The generic steps: `scorePatch`'), 'the-generic-steps-scorepatch');
    assert.equal(slugOf("SWE-bench's steps"), 'swe-benchs-steps');
    assert.equal(slugOf('src/sandbox/container: one container sandbox'), 'srcsandboxcontainer-one-container-sandbox');
  });

  test('every relative link of every Markdown file resolves, anchors included', () => {
    const problems = projectFiles(/\.md$/).flatMap((f) => danglingLinks(f, readProject));
    assert.deepEqual(problems, [], `dangling links:\n${problems.join('\n')}`);
  });

  test("every docs/<name>.md#anchor a source file's comment names exists", () => {
    const problems: string[] = [];
    for (const file of projectFiles(/\.(ts|js|py|sh)$/)) {
      if (file === path.join('test', 'docs', 'links.test.ts')) continue;
      const text = readProject(file) ?? '';
      for (const m of text.matchAll(/\bdocs\/([A-Z]+\.md)#([\w-]+)/g)) {
        const doc = readProject(path.join('docs', m[1]!));
        const line = text.slice(0, m.index).split('\n').length;
        if (!doc) problems.push(`${file}:${line}: docs/${m[1]} does not exist`);
        else if (!anchorsOf(doc).has(m[2]!)) problems.push(`${file}:${line}: no heading #${m[2]} in docs/${m[1]}`);
      }
    }
    assert.deepEqual(problems, [], problems.join('\n'));
  });
});
