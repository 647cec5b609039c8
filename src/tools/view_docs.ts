// view_docs: a suite's extra tool (Suite.tools of GitChameleon and the examples), not one of EPISODE_TOOLS.
import { z } from 'zod';
import { GymError } from '../errors.ts';
import { shellQuote } from '../shell_quote.ts';
import { suiteMetadata } from '../tasks/suite.ts';
import { episodeTool } from './types.ts';

const DEFAULT_CHARS = 12_000;
const MAX_CHARS = 60_000;

/**
 * Renders the documentation of a Python object with pydoc, from the installed packages only:
 * the working directory leaves sys.path first, so a workspace file cannot stand in for the
 * library. Arguments: candidate dotted paths, tried in order; `search:<module>:<a.b>`
 * imports <module> and takes the first of its loaded submodules (shortest name first) that
 * has <a>, then its attribute <b>. Prints a header line `# <path> (<distribution> <version>, <file>)` then the
 * text; exits 3 when nothing resolves. Runs on Python 3.6 and later.
 */
export const PYDOC_SCRIPT =
  String.raw`
import os, sys
cwd = os.getcwd()
sys.path[:] = [p for p in sys.path if p not in ('', '.', cwd)]
import importlib, pydoc, warnings
warnings.simplefilter('ignore')

def dist_version(top):
    try:
        from importlib import metadata
    except ImportError:
        metadata = None
    module = sys.modules.get(top)
    for name in (top, top.replace('_', '-')):
        try:
            if metadata:
                return metadata.version(name)
            import pkg_resources
            return pkg_resources.get_distribution(name).version
        except Exception:
            pass
    return getattr(module, '__version__', '?')

def find(candidate):
    if candidate.startswith('search:'):
        _, module, dotted = candidate.split(':', 2)
        first, rest = dotted.split('.')[0], dotted.split('.')[1:]
        importlib.import_module(module)
        for mod_name in sorted((m for m in list(sys.modules) if m == module or m.startswith(module + '.')), ` +
  String.raw`key=lambda m: (m.count('.'), m)):
            mod = sys.modules.get(mod_name)
            if mod is None or mod_name.split('.')[-1].startswith('_') or not hasattr(mod, first):
                continue
            obj = getattr(mod, first)
            for attr in rest:
                obj = getattr(obj, attr, None)
            if obj is not None:
                return mod_name + '.' + dotted, obj
        return None, None
    obj = pydoc.locate(candidate)
    return (candidate, obj) if obj is not None else (None, None)

errors = []
for candidate in sys.argv[1:]:
    try:
        path, obj = find(candidate)
    except Exception as e:
        errors.append('%s: %s: %s' % (candidate, type(e).__name__, e))
        continue
    if path is None:
        errors.append('%s: not found' % candidate)
        continue
    top = path.split('.')[0]
    where = getattr(sys.modules.get(top), '__file__', None) or '?'
    sys.stdout.write('# %s (%s %s, %s)\n' % (path, top, dist_version(top), where))
    sys.stdout.write(pydoc.render_doc(obj, title='Python Library Documentation: %s', renderer=pydoc.plaintext))
    sys.exit(0)
sys.stderr.write('no documentation found:\n' + '\n'.join(errors) + '\n')
sys.exit(3)
`;

/** The shell command that renders the docs of the first candidate that resolves, with `python`. */
export function pydocCommand(python: string, candidates: string[]): string {
  return [python, '-c', PYDOC_SCRIPT, ...candidates].map(shellQuote).join(' ');
}

/**
 * Where a symbol given to view_docs is looked for: as given, then (for a name without a
 * package) in the library named by the task's `metadata.importName`, directly and then in
 * its submodules.
 */
export function docCandidates(symbol: string, importName?: string): string[] {
  const out = [symbol];
  if (importName && symbol.split('.')[0] !== importName) {
    out.push(`${importName}.${symbol}`);
    out.push(`search:${importName}:${symbol}`);
  }
  return out;
}

/** What view_docs reads of a task: the library's import name, when the task names one (the examples suite's do not). */
const DocsMetadata = z.object({ importName: z.string() }).partial();

export const viewDocsTool = episodeTool({
  name: 'view_docs',
  title: 'View library documentation',
  description:
    "Show the documentation of a Python module, class, function or method as installed in this task's environment (the " +
    "pinned library version, not the newest): pydoc's text for a dotted path such as numpy.round_, torch.special.log_ndtr " +
    "or pandas.DataFrame.append. A bare name is also looked up in the task's library. Long pages are cut at max_chars.",
  input: z.object({
    symbol: z
      .string()
      .min(1)
      .max(300)
      .regex(/^[A-Za-z_][\w.]*$/, 'a dotted Python name')
      .describe('dotted path of a module, class, function or method'),
    max_chars: z.number().int().min(500).max(MAX_CHARS).default(DEFAULT_CHARS).describe('cut the page after this many characters'),
  }),
  output: z.object({
    symbol: z.string(),
    found: z.boolean(),
    tried: z.array(z.string()).optional().describe('the dotted paths looked up, when none resolved'),
    resolved: z.string().optional(),
    source: z.string().optional().describe('the path, distribution, version and file documented'),
    chars: z.number().int().optional(),
    truncated: z.boolean().optional(),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  // pydoc imports the library with the workspace on the path: a module there can run.
  runsCode: true,
  appliesTo: (task) => task.env.kind === 'python',
  async run(episode, args, ctx) {
    if (episode.task.env.kind !== 'python')
      throw new GymError('INVALID_ARGUMENT', 'view_docs works for Python tasks; this task is not one');
    const { importName } = suiteMetadata(DocsMetadata, episode.task);
    const candidates = docCandidates(args.symbol, importName);
    const result = await episode.sandbox.exec(pydocCommand(episode.env.command, candidates), {
      timeoutMs: 120_000,
      signal: ctx.signal,
      maxOutputBytes: 2 * MAX_CHARS,
    });
    if (result.exitCode !== 0) {
      const why = result.timedOut
        ? 'importing it took longer than 120 s'
        : result.stderr.trim().split('\n').slice(-12).join('\n') || `exit code ${result.exitCode}`;
      return { text: `No documentation for ${args.symbol}.\n${why}`, data: { symbol: args.symbol, found: false, tried: candidates } };
    }
    const [header = '', ...rest] = result.stdout.split('\n');
    const page = rest.join('\n');
    const cut = page.length > args.max_chars;
    const text =
      `${header.replace(/^# /, 'Documentation of ')}\n\n` +
      `${
        cut
          ? `${page.slice(0, args.max_chars)}\n[cut at ${args.max_chars} of ${page.length} characters; ask for more with max_chars]`
          : page
      }`;
    const resolved = /^# (\S+)/.exec(header)?.[1] ?? args.symbol;
    return {
      text,
      data: { symbol: args.symbol, found: true, resolved, source: header.replace(/^# /, ''), chars: page.length, truncated: cut },
    };
  },
});
