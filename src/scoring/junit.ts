import { ownValue } from '../own.ts';
export type TestStatus = 'passed' | 'failed' | 'error' | 'skipped';

export interface TestCaseResult {
  /** Stable id: `path::Class::name` for pytest, `pkg.Class#method` for JUnit. */
  name: string;
  status: TestStatus;
  message?: string;
  /** The failure's full text (traceback, stack trace). */
  details?: string;
  durationMs?: number;
}

export interface RawTestCase {
  attrs: Record<string, string>;
  status: TestStatus;
  message?: string;
  details?: string;
}

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

function decode(text: string): string {
  return text.replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, '$1').replace(/&(#x[0-9a-fA-F]+|#\d+|\w+);/g, (m, e: string) => {
    if (e[0] === '#') return String.fromCodePoint(e[1] === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
    return ownValue(ENTITIES, e) ?? m;
  });
}

function attributes(text: string): Record<string, string> {
  // A null-prototype record: an attribute named __proto__ or constructor is an attribute like any other.
  const out: Record<string, string> = Object.create(null);
  for (const m of text.matchAll(/([\w:.-]+)\s*=\s*("([^"]*)"|'([^']*)')/g)) out[m[1]!] = decode(m[3] ?? m[4] ?? '');
  return out;
}

/**
 * Reads the `<testcase>` elements of a JUnit XML report (pytest --junitxml, Maven
 * Surefire, Gradle). Enough XML for these reports, no dependency.
 */
export function parseJUnitXml(xml: string): RawTestCase[] {
  const cases: RawTestCase[] = [];
  const re = /<testcase\b((?:[^>"']|"[^"]*"|'[^']*')*?)(\/>|>([\s\S]*?)<\/testcase>)/g;
  for (const m of xml.matchAll(re)) {
    const attrs = attributes(m[1]!);
    const body = m[3] ?? '';
    const child = /<(failure|error|skipped)\b((?:[^>"']|"[^"]*"|'[^']*')*?)(?:\/>|>([\s\S]*?)<\/\1>)/.exec(body);
    let status: TestStatus = 'passed';
    let message: string | undefined;
    let details: string | undefined;
    if (child) {
      status = child[1] === 'failure' ? 'failed' : child[1] === 'error' ? 'error' : 'skipped';
      const a = attributes(child[2]!);
      message = a.message || undefined;
      details = child[3] ? decode(child[3]).trim() || undefined : undefined;
    }
    cases.push({ attrs, status, message, details });
  }
  return cases;
}

/** pytest's node id from a xunit1 testcase: `tests/test_x.py::TestY::test_z[param]`. */
export function pytestNodeId(attrs: Record<string, string>): string {
  const name = attrs.name ?? '?';
  const classname = attrs.classname ?? '';
  const file = attrs.file;
  if (file) {
    const mod = file.replace(/\.py$/, '').split('/').join('.');
    const rest = classname === mod ? '' : classname.startsWith(mod + '.') ? classname.slice(mod.length + 1) : '';
    return [file, ...(rest ? rest.split('.') : []), name].join('::');
  }
  // Without a file attribute, rebuild the path from the dotted class name.
  const parts = classname.split('.');
  const classes: string[] = [];
  while (parts.length > 1 && /^[A-Z]/.test(parts[parts.length - 1]!)) classes.unshift(parts.pop()!);
  return [`${parts.join('/')}.py`, ...classes, name].join('::');
}

/** JUnit's id: `pkg.Class#method`. */
export function junitTestId(attrs: Record<string, string>): string {
  return `${attrs.classname ?? '?'}#${attrs.name ?? '?'}`;
}
