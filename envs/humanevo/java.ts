import type { DependencyLevel, SourceFunction } from './functions.ts';

/**
 * Method declarations of a Java source, by a careful scan rather than a full grammar:
 * comments, strings, text blocks and character literals are skipped, braces are counted,
 * and a `{` at a class-body level preceded by `name(...)` [throws ...] opens a method
 * (or a constructor, when the name is the class's). Enough to find, stub and classify
 * methods; not a compiler.
 */

const KEYWORDS = new Set([
  'if',
  'for',
  'while',
  'switch',
  'catch',
  'synchronized',
  'try',
  'do',
  'else',
  'return',
  'new',
  'throw',
  'case',
  'assert',
  'super',
  'this',
]);
const JAVA_LANG = new Set([
  'String',
  'Object',
  'Math',
  'Integer',
  'Long',
  'Double',
  'Float',
  'Boolean',
  'Character',
  'Byte',
  'Short',
  'System',
  'StringBuilder',
  'Thread',
  'Class',
  'Number',
  'Iterable',
  'Comparable',
  'Runnable',
  'Exception',
  'RuntimeException',
  'Error',
  'Override',
  'Deprecated',
  'SuppressWarnings',
  'FunctionalInterface',
  'SafeVarargs',
  'Void',
  'Enum',
  'Record',
  'CharSequence',
  'IllegalArgumentException',
  'IllegalStateException',
  'UnsupportedOperationException',
  'NullPointerException',
  'IndexOutOfBoundsException',
  'ArithmeticException',
  'ClassCastException',
  'AutoCloseable',
  'Cloneable',
]);

interface Token {
  kind: 'id' | 'punct' | 'literal';
  text: string;
  start: number;
  end: number;
}

/** Tokens of a Java source with comments dropped; `/** ... *\/` comments kept aside by their end offset. */
export function tokenizeJava(src: string): { tokens: Token[]; javadocs: { start: number; end: number; text: string }[] } {
  const tokens: Token[] = [];
  const javadocs: { start: number; end: number; text: string }[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (src.startsWith('//', i)) {
      const nl = src.indexOf('\n', i);
      i = nl < 0 ? src.length : nl + 1;
    } else if (src.startsWith('/*', i)) {
      const close = src.indexOf('*/', i + 2);
      const end = close < 0 ? src.length : close + 2;
      if (src.startsWith('/**', i) && !src.startsWith('/**/', i)) javadocs.push({ start: i, end, text: src.slice(i, end) });
      i = end;
    } else if (src.startsWith('"""', i)) {
      const close = src.indexOf('"""', i + 3);
      const end = close < 0 ? src.length : close + 3;
      tokens.push({ kind: 'literal', text: src.slice(i, end), start: i, end });
      i = end;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < src.length && src[j] !== c && src[j] !== '\n') j += src[j] === '\\' ? 2 : 1;
      tokens.push({ kind: 'literal', text: src.slice(i, j + 1), start: i, end: j + 1 });
      i = j + 1;
    } else if (/[A-Za-z_$]/.test(c)) {
      let j = i + 1;
      while (j < src.length && /[\w$]/.test(src[j]!)) j++;
      tokens.push({ kind: 'id', text: src.slice(i, j), start: i, end: j });
      i = j;
    } else if (/\d/.test(c)) {
      let j = i + 1;
      while (j < src.length && /[\w.]/.test(src[j]!)) j++;
      tokens.push({ kind: 'literal', text: src.slice(i, j), start: i, end: j });
      i = j;
    } else {
      tokens.push({ kind: 'punct', text: c, start: i, end: i + 1 });
      i++;
    }
  }
  return { tokens, javadocs };
}

interface ClassFrame {
  name: string;
  /** Brace depth inside the class body. */
  depth: number;
  members: Set<string>;
}

interface RawMethod {
  qualname: string;
  name: string;
  cls: string;
  headerStart: number;
  bodyOpen: number;
  bodyClose: number;
  constructor: boolean;
  bodyTokens: Token[];
  params: Set<string>;
}

/** Where a declaration's modifiers and annotations begin: after the previous `;`, `{` or `}`. */
function declarationStart(tokens: Token[], nameIndex: number): number {
  let k = nameIndex - 1;
  let angle = 0;
  while (k >= 0) {
    const t = tokens[k]!;
    if (t.text === '>') angle++;
    else if (t.text === '<') angle--;
    else if (angle === 0 && (t.text === ';' || t.text === '{' || t.text === '}')) break;
    else if (t.text === ')' && angle === 0) {
      // An annotation with arguments: @Foo(...). Skip back to its '('.
      let depth = 0;
      for (; k >= 0; k--) {
        if (tokens[k]!.text === ')') depth++;
        else if (tokens[k]!.text === '(' && --depth === 0) break;
      }
    }
    k--;
  }
  return k + 1;
}

function lineOf(src: string, offset: number): number {
  let n = 1;
  for (let i = 0; i < offset && i < src.length; i++) if (src.charCodeAt(i) === 10) n++;
  return n;
}

/** Methods (and constructors) of every class, enum, record and interface in a Java source. */
export function javaMethods(src: string, projectClasses: Set<string> = new Set()): SourceFunction[] {
  const { tokens, javadocs } = tokenizeJava(src);
  const raws: RawMethod[] = [];
  const stack: ClassFrame[] = [];
  const allClasses = new Map<string, ClassFrame>();
  let depth = 0;
  let pendingClass: string | null = null;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (
      t.kind === 'id' &&
      (t.text === 'class' || t.text === 'interface' || t.text === 'enum' || t.text === 'record') &&
      tokens[i - 1]?.text !== '.' &&
      tokens[i + 1]?.kind === 'id'
    ) {
      pendingClass = tokens[i + 1]!.text;
      continue;
    }
    if (t.text === '{') {
      depth++;
      if (pendingClass) {
        const frame = { name: pendingClass, depth, members: new Set<string>() };
        stack.push(frame);
        allClasses.set(frame.name, frame);
        pendingClass = null;
        continue;
      }
      const frame = stack[stack.length - 1];
      if (frame && depth === frame.depth + 1) {
        const method = methodHeader(tokens, i, frame);
        if (method) {
          const close = matchingBrace(tokens, i);
          raws.push({
            ...method,
            bodyOpen: t.start,
            bodyClose: tokens[close]?.start ?? src.length,
            bodyTokens: tokens.slice(i + 1, close),
          });
          frame.members.add(method.name);
          i = close;
          depth--;
        }
      }
      continue;
    }
    if (t.text === '}') {
      const frame = stack[stack.length - 1];
      if (frame && depth === frame.depth) stack.pop();
      depth--;
      continue;
    }
    // A field: `... name =` or `... name ;` directly in a class body.
    const frame = stack[stack.length - 1];
    if (
      frame &&
      depth === frame.depth &&
      t.kind === 'id' &&
      (tokens[i + 1]?.text === '=' || tokens[i + 1]?.text === ';' || tokens[i + 1]?.text === ',') &&
      tokens[i - 1]?.kind === 'id'
    ) {
      frame.members.add(t.text);
    }
    // An enum constant or a record component is a member too.
    if (
      frame &&
      depth === frame.depth &&
      t.kind === 'id' &&
      /^[A-Z][A-Z0-9_]*$/.test(t.text) &&
      (tokens[i - 1]?.text === '{' || tokens[i - 1]?.text === ',')
    )
      frame.members.add(t.text);
  }
  return raws.map((m) => {
    const frame = allClasses.get(m.cls)!;
    const doc = javadocs
      .filter((d) => d.end <= m.headerStart && /^\s*$/.test(src.slice(d.end, m.headerStart).replace(/@\w+(\([^)]*\))?/g, '')))
      .pop();
    const statements = m.bodyTokens.filter((t) => t.text === ';').length;
    const first = m.bodyTokens[0]?.text;
    const trivial =
      m.bodyTokens.length === 0 ||
      (statements <= 1 &&
        !m.bodyTokens.some((t) => t.text === '{') &&
        (first === 'throw' ||
          (first === 'return' && m.bodyTokens.length <= 5 && !m.bodyTokens.some((t) => t.text === '(')) ||
          m.bodyTokens.length <= 4));
    const { level, projectRefs, classRefs } = javaDependency(m, frame, allClasses, projectClasses);
    const startLine = lineOf(src, doc ? m.headerStart : m.headerStart);
    return {
      qualname: m.qualname,
      name: m.name,
      cls: m.cls,
      lines: [startLine, lineOf(src, m.bodyClose)] as [number, number],
      docstring: doc ? cleanJavadoc(doc.text) : null,
      docRange: doc ? ([lineOf(src, doc.start), lineOf(src, doc.end)] as [number, number]) : null,
      signature: src.slice(m.headerStart, m.bodyOpen).trim(),
      trivial,
      isConstructor: m.constructor,
      dependency: level,
      projectRefs,
      classRefs,
      offsets: { headerStart: m.headerStart, bodyOpen: m.bodyOpen, bodyClose: m.bodyClose },
    } satisfies SourceFunction;
  });
}

function matchingBrace(tokens: Token[], open: number): number {
  let d = 0;
  for (let k = open; k < tokens.length; k++) {
    if (tokens[k]!.text === '{') d++;
    else if (tokens[k]!.text === '}' && --d === 0) return k;
  }
  return tokens.length;
}

function methodHeader(tokens: Token[], brace: number, frame: ClassFrame): Omit<RawMethod, 'bodyOpen' | 'bodyClose' | 'bodyTokens'> | null {
  let k = brace - 1;
  // throws A, B.C
  let throwsAt = -1;
  for (let j = k; j >= 0 && j > brace - 40; j--) {
    const t = tokens[j]!;
    if (t.text === ')') break;
    if (t.text === 'throws') {
      throwsAt = j;
      break;
    }
    if (t.kind !== 'id' && t.text !== ',' && t.text !== '.' && t.text !== '<' && t.text !== '>') return null;
  }
  if (throwsAt >= 0) k = throwsAt - 1;
  if (tokens[k]?.text !== ')') return null;
  let d = 0;
  let open = k;
  for (; open >= 0; open--) {
    if (tokens[open]!.text === ')') d++;
    else if (tokens[open]!.text === '(' && --d === 0) break;
  }
  const nameTok = tokens[open - 1];
  if (!nameTok || nameTok.kind !== 'id' || KEYWORDS.has(nameTok.text)) return null;
  const before = tokens[open - 2];
  // `new Foo() {` is an anonymous class, `.foo() {` is not a declaration.
  if (before && (before.text === 'new' || before.text === '.')) return null;
  const params = new Set<string>();
  for (let j = open + 1; j < k; j++) {
    const t = tokens[j]!;
    const next = tokens[j + 1]?.text;
    if (t.kind === 'id' && (next === ',' || next === ')' || next === '[') && j + 1 <= k) params.add(t.text);
  }
  const constructor = nameTok.text === frame.name;
  return {
    qualname: `${frame.name}.${nameTok.text}`,
    name: nameTok.text,
    cls: frame.name,
    headerStart: tokens[declarationStart(tokens, open - 1)]!.start,
    constructor,
    params,
  };
}

/** Locals declared in a body: `Type name =`, `Type name;`, `Type name :` (for-each), lambda parameters. */
function javaLocals(body: Token[]): Set<string> {
  const out = new Set<string>();
  for (let j = 1; j < body.length; j++) {
    const t = body[j]!;
    const prev = body[j - 1]!;
    const next = body[j + 1]?.text;
    if (
      t.kind === 'id' &&
      (prev.kind === 'id' || prev.text === '>' || prev.text === ']') &&
      (next === '=' || next === ';' || next === ':' || next === ',' || next === ')')
    )
      out.add(t.text);
    if (t.kind === 'id' && next === '-' && body[j + 2]?.text === '>') out.add(t.text);
  }
  return out;
}

function javaDependency(
  m: RawMethod,
  frame: ClassFrame,
  classes: Map<string, ClassFrame>,
  projectClasses: Set<string>,
): { level: DependencyLevel; projectRefs: string[]; classRefs: string[] } {
  const locals = javaLocals(m.bodyTokens);
  const project = new Set<string>();
  const own = new Set<string>();
  const body = m.bodyTokens;
  for (let j = 0; j < body.length; j++) {
    const t = body[j]!;
    if (t.kind !== 'id') continue;
    const prev = body[j - 1]?.text;
    const qualified = prev === '.' && body[j - 2]?.text !== 'this';
    if (qualified) continue;
    if (locals.has(t.text) || m.params.has(t.text) || t.text === 'this' || t.text === 'super') continue;
    if (frame.members.has(t.text) && t.text !== frame.name) own.add(t.text);
    else if (
      /^[A-Z]/.test(t.text) &&
      !JAVA_LANG.has(t.text) &&
      (projectClasses.has(t.text) || (classes.has(t.text) && t.text !== frame.name))
    )
      project.add(t.text);
  }
  const level: DependencyLevel = project.size ? 'inter-class' : own.size ? 'intra-class' : 'standalone';
  return { level, projectRefs: [...project].sort(), classRefs: [...own].sort() };
}

/** A Javadoc comment as plain text: no delimiters, no leading stars. */
export function cleanJavadoc(text: string): string {
  return text
    .replace(/^\/\*\*/, '')
    .replace(/\*\/$/, '')
    .split('\n')
    .map((l) => l.replace(/^\s*\* ?/, '').trimEnd())
    .join('\n')
    .trim();
}

/** Top-level type names a Java source declares (for the project's class set). */
export function javaDeclaredClasses(src: string): string[] {
  const { tokens } = tokenizeJava(src);
  const out: string[] = [];
  for (let i = 0; i + 1 < tokens.length; i++) {
    const t = tokens[i]!;
    if (
      (t.text === 'class' || t.text === 'interface' || t.text === 'enum' || t.text === 'record') &&
      tokens[i - 1]?.text !== '.' &&
      tokens[i + 1]!.kind === 'id'
    )
      out.push(tokens[i + 1]!.text);
  }
  return out;
}

/** The source with the method's body replaced by a throw; signature and Javadoc kept. */
export function stubJavaMethod(src: string, fn: SourceFunction): string {
  if (!fn.offsets) throw new Error(`no offsets for ${fn.qualname}`);
  const lineStart = src.lastIndexOf('\n', fn.offsets.headerStart) + 1;
  const indent = /^\s*/.exec(src.slice(lineStart, fn.offsets.headerStart))![0];
  return (
    `${src.slice(0, fn.offsets.bodyOpen)}{\n${indent}    // TODO: implement\n${indent}    throw new ` +
    `UnsupportedOperationException("Not implemented yet");\n${indent}}${src.slice(fn.offsets.bodyClose + 1)}`
  );
}
