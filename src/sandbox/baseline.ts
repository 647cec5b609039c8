// The start state both backends record and diff against: a git repository of the server's beside the workspace.

/** Build and cache output that never belongs in a diff (the baseline's info/exclude). */
export const BASELINE_EXCLUDES: readonly string[] = [
  '__pycache__/',
  '*.pyc',
  '.pytest_cache/',
  'target/',
  '.gradle/',
  '*.class',
  '.benchgym-*',
];

/** Who commits the start state: no config file is read, so git is told. */
export const BASELINE_IDENTITY: readonly string[] = ['-c', 'user.name=benchgym', '-c', 'user.email=benchgym@localhost'];

/** Records the staged workspace as the start state (hooks are off by isolation; --no-verify says so again). */
export const BASELINE_COMMIT_ARGS: readonly string[] = ['commit', '-q', '--allow-empty', '--no-verify', '-m', 'start state'];

/** The staged workspace against the start state: binary-safe, no colour, no external diff or textconv driver. */
export const BASELINE_DIFF_ARGS: readonly string[] = ['diff', '--cached', '--binary', '--no-color', '--no-ext-diff', '--no-textconv'];
