/**
 * From a model's raw output to the code that is scored, as the authors' harnesses do it.
 *
 * - `extractCode`: the v2 harness (mrcabbage972/GitChameleonBenchmark, run_eval.py
 *   `extract_code`): the body of the first ```python fence, else the whole output.
 * - `authorsSanitize`: the v1 harness's line filter (NizarIslah/GitChameleon, evaluate.py
 *   `remove_patterns` and `remove_main_block`), with its quirks kept on purpose.
 *
 * Python's `re` and JavaScript's RegExp differ in what `^`, `$`, `.`, `\s` and `\d` match
 * (JavaScript treats \r, U+2028 and U+2029 as line ends), so the patterns below spell out
 * Python's meaning; the results are the same as the Python code's on any input.
 */

export type ExtractionMode = 'extract' | 'authors-sanitizer';
export const EXTRACTION_MODES: readonly ExtractionMode[] = ['extract', 'authors-sanitizer'];

/** The v2 harness: group 1 of re.search(r"```python(.*?)```", text, re.DOTALL), else text. */
export function extractCode(text: string): string {
  const m = /```python([\s\S]*?)```/.exec(text);
  return m ? m[1]! : text;
}

// Python's multiline ^ and $, its `.` (anything but \n), its Unicode \s and \d.
const BOL = '(?<=^|\\n)';
const EOL = '(?=\\n|$)';
const DOT = '[^\\n]';
const SPACE = '[\\t\\n\\v\\f\\r \\x1c-\\x1f\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const DIGIT = '\\p{Nd}';

/** `(?m)^.*<inner>.*$\n?`: a whole line containing <inner>, with its newline. */
const lineWith = (inner: string) => new RegExp(`${BOL}${DOT}*${inner}${DOT}*${EOL}\\n?`, 'gu');
/** `(?m)^\s*.*<inner>[^\n]*\).*\s*$`: the .launch( / .show( patterns (their newline stays). */
const callLine = (inner: string) => new RegExp(`${BOL}${SPACE}*${DOT}*${inner}[^\\n]*\\)${DOT}*${SPACE}*${EOL}`, 'gu');

/** remove_patterns, in the harness's order. */
const AUTHORS_PATTERNS: RegExp[] = [
  lineWith('assert'),
  callLine('\\.launch\\('), // gradio: no server
  callLine('\\.show\\('), // matplotlib: no window
  lineWith('assistant'),
  lineWith('Assistant'),
  lineWith('2'), // meant for a stray "2" line; drops every line with the digit 2
  lineWith(`<\\|placeholder${DIGIT}+\\|>`),
  lineWith('\\[inst\\]'),
  lineWith('\\[starter_code\\]'),
  lineWith('\\[ PYTHON \\]'),
  lineWith('\\[/ PYTHON\\]'),
  lineWith('answer'),
];

/**
 * The v1 harness's sanitizer: drops every line containing `assert`, `assistant` /
 * `Assistant`, `answer`, the digit `2` (a bug: any line with a 2 goes, `x = 2` and
 * `range(12)` too), chat-template debris (`<|placeholderN|>`, `[inst]`, `[starter_code]`,
 * `[ PYTHON ]`, `[/ PYTHON]`), empties lines calling `.launch(...)` or `.show(...)`, and cuts
 * everything from the first `if __name__ ==`. Matching is case-sensitive, as there.
 */
export function authorsSanitize(code: string): string {
  let out = code;
  for (const re of AUTHORS_PATTERNS) out = out.replace(re, '');
  const main = out.indexOf('if __name__ ==');
  return main === -1 ? out : out.slice(0, main);
}

/**
 * The v1 harness's file writer: unless the script holds a triple quote, every literal
 * backslash-n becomes a newline (cells of the v1 CSV carry "\n" escapes).
 */
export function authorsUnescape(script: string): string {
  return script.includes("'''") || script.includes('"""') ? script : script.replaceAll('\\n', '\n');
}

/**
 * The code a raw model output stands for, in a mode: `extract` (the v2 harness) or
 * `authors-sanitizer` (the fence extraction, then the v1 line filter).
 *
 * @example candidateCode('Here:\n```python\nx = 1\n```', 'extract') // '\nx = 1\n'
 */
export function candidateCode(answer: string, mode: ExtractionMode = 'extract'): string {
  const code = extractCode(answer);
  return mode === 'authors-sanitizer' ? authorsSanitize(code) : code;
}

/** A base model's completion as a whole file: the starter code, then the completion (the paper's base-model form). */
export function solutionFromCompletion(startingCode: string, completion: string): string {
  return startingCode + completion;
}
