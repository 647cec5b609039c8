/**
 * The file names a patch gives, read before any tool applies it: every header line `git
 * apply` and GNU patch take a name from (`diff --git`, `---`/`+++`, context `***`, `Index:`,
 * `rename`/`copy from`/`to`), hunk bodies skipped. What the apply refuses up front is judged
 * from them (a name inside `.git`, a name beyond a link the same patch creates); the apply
 * script's own checks after each try (patch_apply.ts) hold whatever these miss.
 */

/** One name a patch gives a file. */
export interface PatchName {
  /** The name as the header gives it (unquoted; `a/`, `b/` and a timestamp left as they are). */
  raw: string;
  /** The path in the tree it stands for: the `-p1` prefix stripped from headers that carry one, `.` components dropped. */
  path: string;
  /** The header it came from: `diff --git`, `---`, `+++`, `***`, `Index:`, `rename from`, ... */
  header: string;
  /** Which file it names: the one the patch reads (`old`), the one it writes (`new`), or either (`Index:`, diff --git's whole text). */
  side: 'old' | 'new' | 'either';
  /** 1-based line number in the patch. */
  line: number;
}

/** Headers whose names carry a prefix that `-p1` strips (`a/x`, `b/x`); rename and copy names carry none. */
const STRIPPED = new Set(['diff --git', '---', '+++', '***', 'Index:']);

const HEADERS: readonly [string, RegExp][] = [
  ['diff --git', /^diff --git (.*)$/],
  ['---', /^--- (.*)$/],
  ['+++', /^\+\+\+ (.*)$/],
  ['***', /^\*\*\* (.*)$/],
  ['Index:', /^Index:\s*(.*)$/],
  ['rename from', /^rename from (.*)$/],
  ['rename to', /^rename to (.*)$/],
  ['copy from', /^copy from (.*)$/],
  ['copy to', /^copy to (.*)$/],
];

/** A unified hunk's header: the old and new line counts its body holds. */
const HUNK = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/;
/** A context diff's range lines (`*** 1,5 ****`, `--- 1,5 ----`): no file names. */
const CONTEXT_RANGE = /^(\*\*\*|---) \d+(,\d+)? (\*\*\*\*|----)\s*$/;

const ESCAPES: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '"': '"', '\\': '\\' };

/** A C-style quoted name as git and GNU patch write it (`"a/\303\251"`), else the name as it is. */
export function unquoteName(s: string): string {
  if (!s.startsWith('"')) return s;
  const bytes: number[] = [];
  for (let i = 1; i < s.length; i++) {
    const c = s[i]!;
    if (c === '"') break;
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const oct = /^[0-7]{1,3}/.exec(s.slice(i + 1));
    if (oct) {
      bytes.push(parseInt(oct[0], 8) & 0xff);
      i += oct[0].length;
    } else {
      bytes.push(...Buffer.from(ESCAPES[s[i + 1] ?? ''] ?? s[i + 1] ?? '', 'utf8'));
      i++;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** The side each header's name is on (`---` is the new side in a context diff, after `***`). */
const SIDES: Record<string, PatchName['side']> = {
  '---': 'old',
  '+++': 'new',
  '***': 'old',
  'Index:': 'either',
  'rename from': 'old',
  'rename to': 'new',
  'copy from': 'old',
  'copy to': 'new',
};

/** The names in one header's text: both of `diff --git`'s (quoted or not), the one of the others (up to a tab: a timestamp follows). */
function namesOf(header: string, text: string): { raw: string; side: PatchName['side'] }[] {
  if (header === 'diff --git') {
    const tokens = [...text.matchAll(/"(?:[^"\\]|\\.)*"|[^ "]+/g)].map((m) => unquoteName(m[0]));
    // Unquoted names with spaces split at the wrong place, so the whole text is judged too.
    const names = tokens.map((raw, i) => ({
      raw,
      side: (i === 0 ? 'old' : i === tokens.length - 1 ? 'new' : 'either') as PatchName['side'],
    }));
    return [...names, ...(tokens.includes(text) ? [] : [{ raw: text, side: 'either' as const }])];
  }
  const name = text.startsWith('"') ? unquoteName(text) : text.split('\t')[0]!;
  return [{ raw: name.trimEnd(), side: SIDES[header] ?? 'either' }];
}

/** The tree path of a name: the first component stripped where `-p1` strips it, `.` and empty components dropped. */
function treePath(header: string, raw: string): string {
  const parts = raw.split('/').filter((c) => c !== '' && c !== '.');
  return (STRIPPED.has(header) && !raw.startsWith('/') ? parts.slice(1) : parts).join('/');
}

/** Every name a patch gives a file, in order; hunk bodies are skipped, so a changed line that looks like a header is no name. */
export function patchNames(patch: string): PatchName[] {
  const out: PatchName[] = [];
  const lines = patch.split('\n');
  // The names of the current `diff --git` section: a deleted file's are read, never written.
  let section: PatchName[] = [];
  let previous = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    const before = previous;
    previous = line;
    if (/^deleted file mode /.test(line)) for (const n of section) n.side = 'old';
    const hunk = HUNK.exec(line);
    if (hunk) {
      // The body: context lines count on both sides, `-` on the old, `+` on the new, `\` on neither.
      let old = hunk[1] === undefined ? 1 : Number(hunk[1]);
      let neu = hunk[2] === undefined ? 1 : Number(hunk[2]);
      while ((old > 0 || neu > 0) && i + 1 < lines.length) {
        const body = lines[i + 1]!;
        const c = body[0];
        if (c === '-' && old > 0) old--;
        else if (c === '+' && neu > 0) neu--;
        else if ((c === ' ' || body === '' || body === '\r') && old > 0 && neu > 0) (old--, neu--);
        else if (c !== '\\') break;
        i++;
      }
      continue;
    }
    if (CONTEXT_RANGE.test(line)) continue;
    for (const [header, re] of HEADERS) {
      const m = re.exec(line);
      if (!m) continue;
      if (header === 'diff --git') section = [];
      for (const { raw, side } of namesOf(header, m[1]!)) {
        if (!raw || raw === '/dev/null') continue;
        const name: PatchName = {
          raw,
          path: treePath(header, raw),
          header,
          line: i + 1,
          side: header === '---' && before.startsWith('*** ') ? 'new' : side,
        };
        out.push(name);
        section.push(name);
      }
      break;
    }
  }
  return out;
}

/** True when a path has a component `.git` in any case (git refuses those names for the same reason). */
export function insideGitDir(name: string): boolean {
  return name.split(/[/\\]/).some((c) => c.toLowerCase() === '.git');
}

/** The paths a patch creates as symbolic links (git's `new file mode 120000`, or a mode changed to it). */
export function linksCreated(patch: string): string[] {
  const out = new Set<string>();
  let current: string | undefined;
  for (const line of patch.split('\n')) {
    const git = /^diff --git (.*)$/.exec(line);
    if (git) {
      // The new name: `b/<path>`, the last of the header's names (rename and copy lines correct it below).
      const names = [...git[1]!.matchAll(/"(?:[^"\\]|\\.)*"|[^ "]+/g)].map((m) => unquoteName(m[0]));
      current = names.length >= 2 ? treePath('diff --git', names.at(-1)!) : undefined;
      continue;
    }
    const to = /^(?:rename|copy) to (.*)$/.exec(line);
    if (to && current !== undefined) current = treePath('rename to', unquoteName(to[1]!));
    else if (/^(?:new file mode|new mode) 120000\s*$/.test(line) && current) out.add(current);
  }
  return [...out];
}

/**
 * Why the apply refuses the patch before any tool runs, or null: a name inside a `.git`
 * (git's own directory, at any depth; read or written), or a file it writes beyond a
 * symbolic link the same patch creates (its target is not known here, and a patch never
 * needs to write through one).
 */
export function patchRefusal(patch: string): string | null {
  const names = patchNames(patch);
  const git = names.find((n) => insideGitDir(n.raw));
  if (git)
    return (
      `the patch names ${JSON.stringify(git.raw)} (${git.header}, ` +
      `line ${git.line}): a path inside .git, which no patch may create or change`
    );
  const links = linksCreated(patch);
  // Only what the patch writes: the old files of a directory it turns into a link are removed, not written through it.
  for (const n of names.filter((x) => x.side !== 'old')) {
    const link = links.find((l) => n.path.startsWith(`${l}/`));
    if (link) {
      return (
        `the patch names ${JSON.stringify(n.raw)} (${n.header}, line ${n.line}): ` +
        `a path beyond the symbolic link ${JSON.stringify(link)} it creates`
      );
    }
  }
  return null;
}
