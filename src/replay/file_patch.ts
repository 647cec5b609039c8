/** The lines of a text and whether its last one ends with a newline. */
function lines(text: string): { lines: string[]; endsWithNewline: boolean } {
  if (text === '') return { lines: [], endsWithNewline: true };
  const endsWithNewline = text.endsWith('\n');
  const body = endsWithNewline ? text.slice(0, -1) : text;
  return { lines: body.split('\n'), endsWithNewline };
}

/**
 * A git-style patch that replaces a whole text file (or creates it when `before` is null):
 * one hunk, every old line removed and every new line added.
 */
export function replaceFilePatch(file: string, before: string | null, after: string): string {
  if (before === after) return '';
  const a = lines(before ?? '');
  const b = lines(after);
  const range = (n: number) => (n === 0 ? '0,0' : `1,${n}`);
  const side = (sign: string, l: { lines: string[]; endsWithNewline: boolean }) =>
    l.lines
      .map((line, i) => `${sign}${line}\n${i === l.lines.length - 1 && !l.endsWithNewline ? '\\ No newline at end of file\n' : ''}`)
      .join('');
  const head =
    before === null
      ? `diff --git a/${file} b/${file}\nnew file mode 100644\n--- /dev/null\n+++ b/${file}\n`
      : `diff --git a/${file} b/${file}\n--- a/${file}\n+++ b/${file}\n`;
  return `${head}@@ -${range(a.lines.length)} +${range(b.lines.length)} @@\n${side('-', a)}${side('+', b)}`;
}
