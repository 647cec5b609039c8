/**
 * Just enough of Python's lexical structure to cut functions out of source text in
 * TypeScript: where strings, comments and brackets begin and end, so that a line's
 * indentation is read only where it means a new statement. The scoring itself uses Python's
 * `ast` (scorer.py); this serves the workspace stub and the masked visible test.
 */

export interface LineInfo {
  /** The line starts inside a string or inside brackets: it continues a statement. */
  continuation: boolean;
  /** The line holds only whitespace and/or a comment. */
  blank: boolean;
  indent: number;
}

/** Per line: does it start a statement, and its indentation. */
export function scanLines(src: string): LineInfo[] {
  const out: LineInfo[] = [];
  let depth = 0;
  let quote: string | null = null; // the closing delimiter of the string we are in
  let lineStart = true;
  let joined = false; // the previous line ended with a backslash
  let current: LineInfo | undefined;
  for (let i = 0; i < src.length; i++) {
    const ch = src[i]!;
    if (lineStart) {
      const rest = src.slice(i, src.indexOf('\n', i) < 0 ? src.length : src.indexOf('\n', i));
      const indent = rest.length - rest.trimStart().length;
      current = {
        continuation: quote !== null || depth > 0 || joined,
        blank: quote === null && (rest.trim() === '' || rest.trim().startsWith('#')),
        indent,
      };
      out.push(current);
      lineStart = false;
      joined = false;
    }
    if (ch === '\n') {
      lineStart = true;
      if (quote && quote.length === 1 && src[i - 1] !== '\\') quote = null; // an unterminated one-line string ends here
      continue;
    }
    if (ch === '\\' && src[i + 1] === '\n') {
      if (!quote) joined = true;
      continue;
    }
    if (quote) {
      if (ch === '\\') i++;
      else if (src.startsWith(quote, i)) {
        i += quote.length - 1;
        quote = null;
      }
      continue;
    }
    if (ch === '#') {
      const nl = src.indexOf('\n', i);
      i = (nl < 0 ? src.length : nl) - 1;
      continue;
    }
    if (ch === '"' || ch === "'") {
      quote = src.startsWith(ch.repeat(3), i) ? ch.repeat(3) : ch;
      i += quote.length - 1;
      continue;
    }
    if ('([{'.includes(ch)) depth++;
    else if (')]}'.includes(ch)) depth = Math.max(0, depth - 1);
  }
  if (lineStart) out.push({ continuation: quote !== null || depth > 0, blank: true, indent: 0 });
  return out;
}

export interface FunctionSpan {
  /** 0-based line of the first decorator (or of `def` when there is none). */
  start: number;
  /** 0-based line of `def`. */
  def: number;
  /** 0-based line after the header (the signature ends on the line before). */
  bodyStart: number;
  /** 0-based, exclusive: the line after the function's last non-blank line. */
  end: number;
  /** The column of `def`. */
  column: number;
}

const DEF = (name: string) => new RegExp(`^\\s*(async\\s+)?def\\s+${name.replace(/[^\w]/g, '')}\\s*\\(`);

/** Every function named `name` (or, if none, `_name`), in source order. */
export function findFunctions(src: string, name: string): FunctionSpan[] {
  const lines = src.split('\n');
  const info = scanLines(src);
  const spans = (n: string) => {
    const found: FunctionSpan[] = [];
    for (let i = 0; i < lines.length; i++) {
      if (info[i]!.continuation || !DEF(n).test(lines[i]!)) continue;
      found.push(spanAt(lines, info, i));
    }
    return found;
  };
  const direct = spans(name);
  return direct.length ? direct : spans(`_${name}`);
}

function spanAt(lines: string[], info: LineInfo[], def: number): FunctionSpan {
  const column = info[def]!.indent;
  let start = def;
  while (start > 0 && /^\s*@/.test(lines[start - 1]!) && info[start - 1]!.indent === column) start--;
  // The header ends on the first line after which we are outside brackets.
  let bodyStart = def + 1;
  while (bodyStart < lines.length && info[bodyStart]!.continuation) bodyStart++;
  let end = bodyStart;
  let lastReal = def;
  for (let i = bodyStart; i < lines.length; i++) {
    const l = info[i]!;
    if (l.continuation) {
      lastReal = i;
      continue;
    }
    if (l.blank) continue;
    if (l.indent <= column) break;
    lastReal = i;
  }
  end = lastReal + 1;
  return { start, def, bodyStart, end, column };
}

/** The docstring at the top of a function body: its lines (as written), or undefined. */
export function docstringLines(lines: string[], info: LineInfo[], bodyStart: number): string[] | undefined {
  let i = bodyStart;
  while (i < lines.length && info[i]!.blank && !info[i]!.continuation) i++;
  if (i >= lines.length || !/^\s*[rRuUbB]{0,2}("""|'''|"|')/.test(lines[i]!)) return undefined;
  let j = i + 1;
  while (j < lines.length && info[j]!.continuation) j++;
  return lines.slice(i, j);
}

/** A docstring literal for a text, indented: `"""` escaped so the text cannot end it. */
export function docstringLiteral(text: string, indent: string): string[] {
  const body = text.replace(/\\/g, '\\\\').replace(/"""/g, '\\"\\"\\"').trim();
  return [`${indent}"""`, ...body.split('\n').map((l) => (l.trim() ? `${indent}${l.trimEnd()}` : '')), `${indent}"""`];
}

/** The body a stub gets: the function is to be written. */
export const STUB_BODY = 'raise NotImplementedError';

/**
 * The target function reduced to its decorators, signature and docstring. `code` is the
 * function as CoderEval stores it (first line unindented, the others at their column in the
 * file); the stub keeps that layout. `docstring` replaces the original docstring when given;
 * `fallback` is used when the code has none (CoderEval's record keeps it apart then).
 */
export function stubOf(code: string, docstring?: string, fallback?: string): string {
  const lines = code.split('\n');
  const info = scanLines(code);
  const defLine = lines.findIndex((l, i) => !info[i]!.continuation && /^\s*(async\s+)?def\s/.test(l));
  if (defLine < 0) throw new Error('no def line in the function');
  const span = spanAt(lines, info, defLine);
  const firstBody = lines.slice(span.bodyStart).find((l, k) => !info[span.bodyStart + k]!.blank);
  const column = defLine === 0 ? 0 : info[defLine]!.indent;
  const bodyIndent = firstBody !== undefined ? firstBody.slice(0, firstBody.length - firstBody.trimStart().length) : ' '.repeat(column + 4);
  const original = docstringLines(lines, info, span.bodyStart);
  const doc =
    docstring !== undefined
      ? docstringLiteral(docstring, bodyIndent)
      : (original ?? (fallback?.trim() ? docstringLiteral(fallback, bodyIndent) : []));
  return [...lines.slice(0, span.bodyStart), ...doc, `${bodyIndent}${STUB_BODY}`].join('\n');
}

/**
 * The names of the classes and functions a line is inside, outermost first: the `class` and
 * `def` statements above it with less indentation (other blocks, `if` and the like, are not names).
 */
export function enclosingNames(lines: string[], info: LineInfo[], at: number): string[] {
  const names: string[] = [];
  let column = info[at]?.indent ?? 0;
  for (let i = at - 1; i >= 0 && column > 0; i--) {
    const l = info[i]!;
    if (l.continuation || l.blank || l.indent >= column) continue;
    column = l.indent;
    const m = /^\s*(?:async\s+)?(?:def|class)\s+(\w+)/.exec(lines[i]!);
    if (m) names.unshift(m[1]!);
  }
  return names;
}

/**
 * A task's target as a dotted path from its module: the classes (and functions) around the
 * `<PLACEHOLDER>` of CoderEval's file text, then its name (`Symbol.pretty`: boolean.py's file
 * has four `pretty` methods, and the task is the one of `Symbol`). The platform replaced the
 * ground truth where it stood; the path names that place in the project's file and in the
 * test file's copy of it.
 */
export function targetPath(context: string, name: string): string {
  const at = context.indexOf('<PLACEHOLDER>');
  if (at < 0) return name;
  const line = context.slice(0, at).split('\n').length - 1;
  const lines = context.split('\n');
  return [...enclosingNames(lines, scanLines(context), line), name].join('.');
}

/**
 * The target function of `src`. `target` is a name or a dotted path (see targetPath): the
 * function inside those classes when the file has one there; else, as the scorer's `ast.walk`
 * meets them, the least nested, then the first in the file (a test file may hold a method as a
 * module-level function).
 */
export function targetFunction(src: string, target: string): FunctionSpan | undefined {
  const scope = target.split('.');
  const name = scope.pop()!;
  const spans = findFunctions(src, name);
  if (scope.length) {
    const lines = src.split('\n');
    const info = scanLines(src);
    const inScope = spans.find((s) => {
      const names = enclosingNames(lines, info, s.def);
      return names.length === scope.length && names.every((n, i) => n === scope[i]);
    });
    if (inScope) return inScope;
  }
  return [...spans].sort((a, b) => a.column - b.column || a.def - b.def)[0];
}

/** Lines of a function from its `def` line on, with the function's column removed. */
export type Block = string[];

/** The target function of `src` as a block (see targetFunction), or undefined. */
export function functionBlock(src: string, name: string): Block | undefined {
  const span = targetFunction(src, name);
  if (!span) return undefined;
  return dedent(src.split('\n').slice(span.def, span.end), span.column);
}

function dedent(lines: string[], column: number): Block {
  return lines.map((l) => (l.slice(0, column).trim() === '' ? l.slice(column) : l.trimStart()));
}

function indent(block: Block, prefix: string): string[] {
  return block.map((l) => (l.trim() ? prefix + l : l));
}

/**
 * Code in CoderEval's layout (first line unindented, the others at their column in the file,
 * as `ground_truth` and the file's <PLACEHOLDER> expect) as decorators and a block.
 */
export function splitLayout(code: string, prefix: string): { decorators: string[]; block: Block } {
  const lines = code.split('\n');
  const info = scanLines(code);
  const d = lines.findIndex((l, i) => !info[i]!.continuation && /^\s*(async\s+)?def\s/.test(l));
  if (d < 0) throw new Error('no def line in the function');
  const block = [lines[d]!.trimStart(), ...lines.slice(d + 1).map((l) => (l.startsWith(prefix) ? l.slice(prefix.length) : l.trimStart()))];
  return { decorators: lines.slice(0, d), block };
}

/** The inverse of splitLayout. `prefix` is the function's indentation in the file (spaces or tabs). */
export function joinLayout(decorators: string[], block: Block, prefix: string): string {
  const body = indent(block, prefix);
  if (!decorators.length) body[0] = body[0]!.trimStart();
  return [...decorators, ...body].join('\n');
}

/**
 * Replaces the target function of `src` (see targetFunction), from its `def` line to its last
 * line, with `block` at the function's column (decorators in the file stay). Undefined when
 * there is no such function.
 */
export function replaceTarget(src: string, name: string, block: Block): string | undefined {
  const span = targetFunction(src, name);
  if (!span) return undefined;
  const lines = src.split('\n');
  lines.splice(span.def, span.end - span.def, ...indent(block, lines[span.def]!.slice(0, span.column)));
  return lines.join('\n');
}

/** `src` without its commented-out lines (the platform's tests keep old checks as comments, which read nothing). */
export function withoutCommentLines(src: string): string {
  return src
    .split('\n')
    .filter((l) => !l.trimStart().startsWith('#'))
    .join('\n');
}
