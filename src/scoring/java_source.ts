/**
 * What a JVM source file declares, read the way its compiler reads it: Java's `\uXXXX` escapes
 * are undone before anything else (javac does so before it even finds comments), comments and
 * literals are dropped, and only then are `package` and `provides` looked for. A path says
 * nothing: javac puts a class where its `package` says, whatever folder the file is in.
 */

/** The languages whose sources a Java build may compile, by file extension. */
export const JVM_SOURCE_EXTENSIONS: Readonly<Record<string, 'java' | 'kotlin' | 'groovy' | 'scala'>> = {
  '.java': 'java',
  '.kt': 'kotlin',
  '.groovy': 'groovy',
  '.scala': 'scala',
};

/** The language of a source path, or undefined for anything else. */
export function jvmSourceLanguage(path: string): 'java' | 'kotlin' | 'groovy' | 'scala' | undefined {
  const dot = path.lastIndexOf('.');
  return dot < 0 || path.lastIndexOf('/') > dot ? undefined : JVM_SOURCE_EXTENSIONS[path.slice(dot)];
}

/**
 * Java's unicode escapes undone (JLS 3.3): a backslash that is itself escaped (an odd run of
 * them before the `u`) starts none; `\uuuu0070` is one escape.
 */
export function decodeUnicodeEscapes(text: string): string {
  return text.replace(/(\\+)u+([0-9a-fA-F]{4})/g, (whole, slashes: string, hex: string) =>
    slashes.length % 2 === 1 ? slashes.slice(1) + String.fromCharCode(Number.parseInt(hex, 16)) : whole,
  );
}

/**
 * The text with comments, string and character literals and text blocks each replaced by a
 * space: what is left are the declarations. Kotlin's and Scala's nested block comments are
 * nested here too (a Java comment never holds `/*` that matters).
 */
export function stripCommentsAndLiterals(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (text.startsWith('//', i)) {
      const nl = text.indexOf('\n', i);
      i = nl < 0 ? text.length : nl;
      out += ' ';
    } else if (text.startsWith('/*', i)) {
      let depth = 1;
      i += 2;
      while (i < text.length && depth > 0) {
        if (text.startsWith('*/', i)) (depth--, (i += 2));
        else if (text.startsWith('/*', i)) (depth++, (i += 2));
        else i++;
      }
      out += ' ';
    } else if (text.startsWith('"""', i)) {
      const close = text.indexOf('"""', i + 3);
      i = close < 0 ? text.length : close + 3;
      out += ' ';
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < text.length && text[j] !== c && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1;
      i = j + 1;
      out += ' ';
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

const NAME = String.raw`[\p{L}\p{Nl}_$][\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}_$]*`;
const QUALIFIED = String.raw`${NAME}(?:\s*\.\s*${NAME})*`;
/** Annotations before a package declaration (package-info.java): `@A`, `@a.B(...)` (arguments without parentheses inside). */
const ANNOTATIONS = String.raw`(?:@\s*${QUALIFIED}\s*(?:\([^()]*\))?\s*)*`;

const squeeze = (name: string) => name.replace(/\s+/g, '');

/**
 * The packages a source file puts its classes in: Java's one `package` declaration (none: the
 * unnamed package, []); Kotlin's and Groovy's file header; Scala's package clauses, where
 * `package a` then `package b` mean `a.b` and a `package x { ... }` block puts its classes in
 * `x` too, so every clause and every chain of them counts.
 */
export function declaredPackages(text: string, language: 'java' | 'kotlin' | 'groovy' | 'scala' = 'java'): string[] {
  const code = stripCommentsAndLiterals(language === 'java' ? decodeUnicodeEscapes(text) : text).replace(/^\uFEFF/, '');
  if (language === 'java') {
    const m = new RegExp(String.raw`^\s*${ANNOTATIONS}package\s+(${QUALIFIED})\s*;`, 'u').exec(code);
    return m ? [squeeze(m[1]!)] : [];
  }
  if (language !== 'scala') {
    // File annotations first (Kotlin's `@file:JvmName("X")`), each on a line of its own.
    const m = new RegExp(String.raw`^\s*(?:@[^\n]*\n\s*)*package\s+(${QUALIFIED})`, 'u').exec(code);
    return m ? [squeeze(m[1]!)] : [];
  }
  const found = new Set<string>();
  let chain = '';
  for (const m of code.matchAll(new RegExp(String.raw`(?<=^|[;{}\n])\s*package\s+(?!object\b)(${QUALIFIED})[ \t]*(\{)?`, 'gu'))) {
    const name = squeeze(m[1]!);
    chain = m[2] ? name : chain ? `${chain}.${name}` : name;
    found.add(name);
    found.add(chain);
  }
  return [...found];
}

/** The services a module declaration (`module-info.java`) provides: `provides S with ...;` names S. */
export function providedServices(moduleInfo: string): string[] {
  const code = stripCommentsAndLiterals(decodeUnicodeEscapes(moduleInfo));
  return [...code.matchAll(new RegExp(String.raw`\bprovides\s+(${QUALIFIED})\s+with\b`, 'gu'))].map((m) => squeeze(m[1]!));
}
