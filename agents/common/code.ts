/**
 * Code in, code out, for the agents that give the model no tools (feedback, single-shot):
 * the source files shown to the model, and the files taken back from its markdown answer.
 */
import type { EpisodeHandle } from './episode.ts';
import { resultText } from '../../src/agent/session.ts';
import { ownValue } from '../../src/own.ts';
import type { AgentContext } from '../../src/agent/types.ts';

export interface SourceFile {
  path: string;
  content: string;
}

/** Paths that are tests (or build debris), never shown as the code to change. */
const NOT_SOURCE = [
  /(^|\/)tests?\//,
  /(^|\/)test_[^/]*\.py$/,
  /_tests?\.py$/,
  /(^|\/)conftest\.py$/,
  /(^|\/)src\/test\//,
  /Tests?\.java$/,
  /(^|\/)__pycache__\//,
  /(^|\/)\.[^/]+\//,
  /(^|\/)target\//,
];

const SOURCE_PATTERNS: Record<string, string> = { python: '**/*.py', java: '**/*.java' };

const LANGUAGE_TAGS: Record<string, string[]> = {
  python: ['python', 'py', 'python3', 'py3'],
  java: ['java'],
};

export function isTestPath(p: string): boolean {
  return NOT_SOURCE.some((re) => re.test(p));
}

/**
 * The files the model is shown: `paths` when given, else the workspace's source files of the
 * task's language that are not tests. Files past `maxChars` in total are listed by name only.
 */
export async function gatherSourceFiles(
  ep: EpisodeHandle,
  task: AgentContext['task'],
  opts: { paths?: string[]; maxChars: number },
): Promise<{ files: SourceFile[]; omitted: string[] }> {
  let paths = opts.paths;
  if (!paths?.length) {
    const found = await ep.call('find_files', { pattern: SOURCE_PATTERNS[task.language] ?? '**/*' });
    if (found.isError) throw new Error(`find_files failed: ${resultText(found)}`);
    paths = ((found.structuredContent as { files?: string[] }).files ?? []).filter((p) => !isTestPath(p));
  }
  const files: SourceFile[] = [];
  const omitted: string[] = [];
  let total = 0;
  for (const p of paths) {
    if (total >= opts.maxChars) {
      omitted.push(p);
      continue;
    }
    const content = await ep.readFile(p);
    if (files.length && total + content.length > opts.maxChars) {
      omitted.push(p);
      continue;
    }
    files.push({ path: p, content });
    total += content.length;
  }
  return { files, omitted };
}

/** Renders the files for the prompt, each in a fence labelled with its path. */
export function renderFiles(files: SourceFile[], language: string, omitted: string[] = []): string {
  const parts = files.map((f) => {
    const fence = f.content.includes('```') ? '~~~~' : '```';
    return `${fence}${language} path=${f.path}\n${f.content.endsWith('\n') ? f.content : `${f.content}\n`}${fence}`;
  });
  if (omitted.length) parts.push(`Other source files (not shown): ${omitted.join(', ')}`);
  return parts.join('\n\n');
}

export interface CodeBlock {
  /** The info string's first word (python, java, ...), lowercased; '' when none. */
  lang: string;
  /** The file the block is labelled with, if any. */
  path?: string;
  code: string;
}

const PATH_LIKE = /^[\w.@+-]+(?:\/[\w.@+-]+)*\.[A-Za-z0-9]+$/;

function cleanPath(p: string): string | undefined {
  const s = p
    .trim()
    .replace(/^['"`]|['"`:]$/g, '')
    .replace(/^\.\//, '');
  return PATH_LIKE.test(s) && !s.includes('..') ? s : undefined;
}

/** A path named by a fence's info string: `python path=roman.py`, `python:roman.py`, `python roman.py`, `roman.py`. */
function pathFromInfo(info: string): { lang: string; path?: string } {
  const tokens = info.trim().split(/\s+/).filter(Boolean);
  if (!tokens.length) return { lang: '' };
  let lang = tokens[0]!.toLowerCase();
  let path: string | undefined;
  for (const t of tokens) {
    const m = /^(?:path|file|filename|name)=(.+)$/i.exec(t);
    if (m) path ??= cleanPath(m[1]!);
  }
  if (!path && lang.includes(':')) {
    const [l, p] = tokens[0]!.split(/:(.*)/s);
    path = cleanPath(p ?? '');
    if (path) lang = l!.toLowerCase();
  }
  if (!path) {
    for (const t of tokens.slice(1)) {
      if (!t.includes('=')) path ??= cleanPath(t);
    }
  }
  if (!path && cleanPath(tokens[0]!) && tokens[0]!.includes('.')) {
    // ```roman.py: the file name alone.
    path = cleanPath(tokens[0]!);
    const ext = path!.slice(path!.lastIndexOf('.') + 1).toLowerCase();
    lang = ext === 'py' ? 'python' : ext;
  }
  return { lang, path };
}

/** A path named on the line before a fence: `roman.py:`, `**roman.py**`, `### File: roman.py`, `` `roman.py` ``. */
function pathFromLabel(line: string | undefined): string | undefined {
  if (!line) return undefined;
  const s = line
    .trim()
    .replace(/^#+\s*/, '')
    .replace(/^[-*]\s+/, '')
    .replace(/[*_`]/g, '')
    .replace(/^(?:file(?:name)?|path)\s*:\s*/i, '')
    .replace(/:$/, '')
    .trim();
  return s.includes(' ') ? undefined : cleanPath(s);
}

/** The fenced code blocks of a markdown answer (``` or ~~~, closed by a fence at least as long). */
export function extractCodeBlocks(text: string): CodeBlock[] {
  const lines = text.split(/\r?\n/);
  const blocks: CodeBlock[] = [];
  let lastText: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const open = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(lines[i]!);
    if (!open) {
      if (lines[i]!.trim()) lastText = lines[i];
      continue;
    }
    const fence = open[1]!;
    const { lang, path } = pathFromInfo(open[2]!);
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(lines[j]!);
      if (close && close[1]![0] === fence[0] && close[1]!.length >= fence.length) break;
      body.push(lines[j]!);
    }
    blocks.push({ lang, path: path ?? pathFromLabel(lastText), code: body.length ? `${body.join('\n')}\n` : '' });
    lastText = undefined;
    i = j;
  }
  return blocks;
}

/**
 * The files a model's answer gives: every block labelled with a path; failing that, for a
 * single target file, the longest block in the task's language (or without a language).
 */
export function filesFromAnswer(answer: string, targets: string[], language: string): { files: Record<string, string>; problem?: string } {
  const blocks = extractCodeBlocks(answer).filter((b) => b.code.trim());
  if (!blocks.length) return { files: {}, problem: 'the answer has no fenced code block' };
  // Entries, not assignments: a block labelled `__proto__` is a file of that name, not the object's prototype.
  const files: Record<string, string> = Object.fromEntries(blocks.filter((b) => b.path).map((b) => [b.path!, b.code]));
  if (Object.keys(files).length) return { files };
  const tags = ownValue(LANGUAGE_TAGS, language) ?? [language];
  const candidates = blocks.filter((b) => !b.lang || tags.includes(b.lang));
  const pool = candidates.length ? candidates : blocks;
  if (targets.length === 1) {
    const best = pool.reduce((a, b) => (b.code.length > a.code.length ? b : a));
    return { files: { [targets[0]!]: best.code } };
  }
  return {
    files: {},
    problem:
      `the code blocks do not say which file they are (${targets.length} files could be ` +
      `meant): label each with its path, e.g. \`\`\`${language} path=${targets[0] ?? 'file'}`,
  };
}

/** The system prompt of the agents that answer in code blocks. */
export const CODE_SYSTEM_PROMPT =
  `You are an expert software engineer. You are given a programming task and the source files it ` +
  `concerns. Solve it by writing code.

Answer with the complete new content of every file you change, each in its own fenced code block whose info string gives the ` +
  `language and the file's path, for example:

\`\`\`python path=src/module.py
<the whole file>
\`\`\`

Write whole files, never fragments, ellipses or diffs. Keep what the task does not ask you to change, and do not change or add ` +
  `tests. You may explain briefly before the code.`;

/** The first user message: the task and the files, each in a fence labelled with its path. */
export function codeTaskPrompt(task: AgentContext['task'], files: SourceFile[], omitted: string[] = []): string {
  const shown = files.length ? `\n\n# Files\n\n${renderFiles(files, task.language, omitted)}` : '';
  const target = files.length === 1 ? ` (here: ${files[0]!.path})` : '';
  return (
    `# Task\n\n${task.prompt}${shown}\n\nReply with the complete new content of ` +
    `each file you change${target}, in fenced code blocks labelled with their path.`
  );
}
