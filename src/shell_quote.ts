/**
 * One word for a POSIX shell: left as it is when it holds only characters no shell treats
 * specially, else in single quotes (a `'` inside becomes `'\''`).
 *
 * @example shellQuote("it's") // 'it'\''s'
 */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
