import { readFileSync } from 'node:fs';
import { GymError } from '../errors.ts';
import { isolatedGitShell, NEUTRAL_ATTRIBUTES } from './git_isolation.ts';
import { BASELINE_EXCLUDES } from './baseline.ts';
import { DEFAULT_PATCH_CHAIN, type ApplyPatchOptions, type PatchApplied, type PatchMethod } from './types.ts';
import { shellQuote } from '../shell_quote.ts';
import { patchRefusal } from './patch_paths.ts';

/** How a method is named in `applyPatch`'s result and log: `git apply --3way`, `patch --fuzz=5`. */
export function patchMethodLabel(m: PatchMethod): string {
  return m.kind === 'git-apply' ? ['git apply', ...(m.args ?? [])].join(' ') : `patch --fuzz=${m.fuzz}`;
}

/** `git apply` options that read or write an index and objects: such a try runs against the start state's repository. */
const REPOSITORY_ARGS = new Set(['--3way', '-3', '--index', '--cached']);

/** Exit codes of the script beside 0 (applied) and 1 (no method applied). */
const NO_START_STATE_EXIT = 3;
const RESET_FAILED_EXIT = 4;
const REFUSED_EXIT = 5;

export interface PatchApplyScriptOptions extends ApplyPatchOptions {
  /**
   * The server's baseline repository, where commands in the sandbox can
   * read it (Docker): the start state when the workspace is no repository.
   */
  baselineGitDir?: string;
}

/** Variables that would change what GNU patch does (check files out of RCS, name backups, follow POSIX rules). */
const PATCH_ENV_UNSET = [
  'POSIXLY_CORRECT',
  'PATCH_GET',
  'PATCH_VERSION_CONTROL',
  'VERSION_CONTROL',
  'SIMPLE_BACKUP_SUFFIX',
  'QUOTING_STYLE',
];

/** The functions that keep .git and the start state's links out of every try's reach (see the file). */
const ASIDE_FUNCTIONS = readFileSync(new URL('./patch_aside.sh', import.meta.url), 'utf8').replace(/^\s*#.*\n/gm, '');

/**
 * A bash script that applies the patch on its stdin to the current directory by `chain`,
 * git always under the isolation of git_isolation.ts. Plain `git apply` runs outside any
 * repository (the workspace's .git is neither read nor written); a 3-way try and the reset
 * between tries use a scratch repository of the script's own whose HEAD is the start state
 * (the workspace repository's HEAD, else the baseline's) and whose objects are borrowed by
 * alternates: the workspace's config, hooks and attributes play no part. During the tries
 * every .git and every start-state link out of the tree is out of the tools' reach
 * (ASIDE_FUNCTIONS); a try that makes anything of their names is refused (`@@refused
 * <why>`, exit 5). It prints `$ <command>` before each try, `@@method <label>` after the
 * one that applied, and exits 1 when none did. The patch lives in the script's own
 * temporary directory.
 */
export function patchApplyScript(opts: PatchApplyScriptOptions = {}): string {
  const chain = opts.chain ?? DEFAULT_PATCH_CHAIN;
  const reset = opts.resetBetweenTries ?? false;
  const needsRepository = reset || chain.some(usesRepository);
  const lines = [
    'set -u',
    `git_outside() { ${isolatedGitShell({ GIT_DIR: '/nonexistent' })} "$@"; }`,
    `git_at() { local d=$1; shift; ${isolatedGitShell()} --git-dir="$d" "$@"; }`,
    'git_scratch() { git_at "$r/repo" --work-tree="$w" "$@"; }',
    `patch_tool() { env ${PATCH_ENV_UNSET.map((v) => `-u ${v}`).join(' ')} patch "$@"; }`,
    ASIDE_FUNCTIONS,
    `s= root_git= refused= infra_exit=${RESET_FAILED_EXIT}`,
    `r=$(mktemp -d "\${TMPDIR:-/tmp}/benchgym-apply-XXXXXX") || exit ${RESET_FAILED_EXIT}`,
    "trap on_exit EXIT; trap 'exit 143' TERM; trap 'exit 129' HUP; trap 'exit 130' INT",
    'p="$r/patch.diff"; w=$(pwd -P)',
    'cat > "$p"',
  ];
  if (needsRepository) {
    // The start state: the workspace repository's HEAD, else the baseline's; what `git clean` keeps of each.
    const sources = [
      { gitDir: '"$w/.git"', keep: ['.benchgym-*'] },
      ...(opts.baselineGitDir ? [{ gitDir: shellQuote(opts.baselineGitDir), keep: BASELINE_EXCLUDES }] : []),
    ];
    lines.push('start=');
    for (const s of sources) {
      lines.push(
        `if [ -z "$start" ] && [ -e ${s.gitDir} ] && head=$(git_at ${s.gitDir} rev-parse --verify -q ` +
          `'HEAD^{commit}' 2>/dev/null) && objects=$(git_at ${s.gitDir} rev-parse --git-path objects ` +
          `2>/dev/null); then start=${s.gitDir}; keep=(${s.keep.map((k) => `-e ${shellQuote(k)}`).join(' ')}); fi`,
      );
    }
    lines.push(
      'if [ -n "$start" ]; then case "$objects" in /*) ;; *) ' +
        'objects="$w/$objects" ;; esac; objects=$(cd "$objects" && pwd -P) || start=; fi',
    );
  }
  lines.push(
    `put_aside || { echo 'benchgym: could not put the workspace'"'"'s .git ` +
      `and links out of the patch'"'"'s reach'; exit ${RESET_FAILED_EXIT}; }`,
  );
  if (needsRepository) {
    lines.push(
      'if [ -n "$start" ]; then',
      // The workspace repository's objects moved with its .git.
      '  if [ -n "$root_git" ]; then case "$objects/" in "$w/.git/"*) objects=$root_git${objects#"$w/.git"} ;; esac; fi',
      `  git_at "$r/repo" init -q --bare >/dev/null && echo "$objects" > "$r/repo/objects/info/alternates" && ` +
        `printf '%s' ${shellQuote(NEUTRAL_ATTRIBUTES)} > "$r/repo/info/attributes" && echo "$head" > "$r/repo/HEAD" ` +
        `|| { echo 'benchgym: could not make a scratch repository for the start state'; exit ${RESET_FAILED_EXIT}; }`,
      `  git_scratch read-tree HEAD 2>&1 || { echo 'benchgym: could not read the start state'; exit ${RESET_FAILED_EXIT}; }`,
      '  git_scratch update-index -q --refresh >/dev/null 2>&1',
      'fi',
    );
    if (reset) {
      lines.push(
        `[ -n "$start" ] || { echo 'benchgym: no start state to reset to between tries (the ` +
          `workspace is no git repository and no baseline is in reach)'; exit ${NO_START_STATE_EXIT}; }`,
        `reset_tree() { echo '# work tree reset to the start state'; git_scratch reset ` +
          `-q --hard HEAD 2>&1 && git_scratch clean -fdqx "\${keep[@]}" 2>&1 && clear_aside ||`,
        `  { echo 'benchgym: the reset between tries failed'; exit ${RESET_FAILED_EXIT}; }; }`,
      );
    }
  }
  // A refused try leaves no .git behind (the one aside comes back), and the tree as a failed try leaves it.
  lines.push(
    `refuse() { echo "@@refused $refused"; find "$w" -path "$s" -prune -o -iname .git ` +
      `-prune -exec rm -rf -- {} +; ${reset ? 'reset_tree; ' : ''}exit ${REFUSED_EXIT}; }`,
  );
  for (const m of chain) {
    lines.push(`echo ${shellQuote(`$ ${transcriptLine(m, reset)}`)}`);
    lines.push(`if ${tryCommand(m, reset)}; then tree_check || refuse; echo ${shellQuote(`@@method ${patchMethodLabel(m)}`)}; exit 0; fi`);
    lines.push('tree_check || refuse');
    if (reset) lines.push('reset_tree');
  }
  lines.push('exit 1');
  return lines.join('\n');
}

/**
 * Applies `patch` by the script above through `run` (a backend's way to run a bash script
 * in its sandbox, in the workspace root, the patch on stdin): every backend the same. A
 * patch the names of which already show it reaches into a .git or beyond a link it creates
 * (patch_paths.ts) is refused without running anything.
 */
export async function applyPatchBy(
  patch: string,
  opts: PatchApplyScriptOptions,
  run: (script: string, stdin: string) => Promise<{ exitCode: number | null; log: string }>,
): Promise<PatchApplied> {
  if (!patch.trim()) return { ok: true, method: 'empty', log: '' };
  const refused = patchRefusal(patch);
  if (refused) return { ok: false, refused, log: `benchgym: the patch is refused: ${refused}\n` };
  const r = await run(patchApplyScript(opts), patch.endsWith('\n') ? patch : patch + '\n');
  return patchApplyOutcome(r.exitCode, r.log);
}

function usesRepository(m: PatchMethod): boolean {
  return m.kind === 'git-apply' && (m.args ?? []).some((a) => REPOSITORY_ARGS.has(a));
}

/** The command a try runs, as the log shows it (without the isolation and the file). */
function transcriptLine(m: PatchMethod, reset: boolean): string {
  return m.kind === 'git-apply' ? ['git apply --verbose', ...(m.args ?? [])].join(' ') : patchCommand(m.fuzz, reset);
}

/** With resets a try leaves nothing but its changes, as the harness's tree does: no .orig backups beside fuzzily patched files. */
function patchCommand(fuzz: number, reset: boolean): string {
  return `patch --batch --forward -p1 --fuzz=${fuzz}${reset ? ' --no-backup-if-mismatch' : ''}`;
}

function tryCommand(m: PatchMethod, reset: boolean): string {
  if (m.kind === 'patch') {
    if (!Number.isInteger(m.fuzz) || m.fuzz < 0) throw new GymError('INVALID_ARGUMENT', `patch fuzz must be a whole number, not ${m.fuzz}`);
    return `${patchCommand(m.fuzz, reset).replace(/^patch /, 'patch_tool ')} -i "$p" 2>&1`;
  }
  const apply = ['apply', '--verbose', ...(m.args ?? []).map(shellQuote), '--whitespace=nowarn', '"$p"', '2>&1'].join(' ');
  // Without a start state there is no repository: git says so, and the try fails like any other.
  return usesRepository(m) ? `{ if [ -n "$start" ]; then git_scratch ${apply}; else git_outside ${apply}; fi; }` : `git_outside ${apply}`;
}

/**
 * What the script's run says: the method that applied (the last marker: a file name in the
 * tools' output cannot stand in for it), refused (the reason, from its marker), or not
 * applied. A reset that cannot be done is the sandbox's failure, never the patch's.
 */
export function patchApplyOutcome(exitCode: number | null, log: string): PatchApplied {
  if (exitCode === NO_START_STATE_EXIT)
    throw new GymError(
      'INVALID_ARGUMENT',
      `resetBetweenTries needs a start state: a git repository at the ` +
        `workspace root or a baseline the sandbox reaches\n${log.slice(-2000)}`,
    );
  if (exitCode === RESET_FAILED_EXIT)
    throw new GymError('SANDBOX_UNAVAILABLE', `applying the patch failed outside the patch: ${log.slice(-2000)}`);
  if (exitCode === REFUSED_EXIT) {
    const refused = [...log.matchAll(/^@@refused (.+)$/gm)].at(-1)?.[1] ?? 'the patch reaches a .git or a link out of the workspace';
    return { ok: false, refused, log };
  }
  const methods = [...log.matchAll(/^@@method (.+)$/gm)];
  const method = methods.at(-1)?.[1];
  return { ok: exitCode === 0 && Boolean(method), ...(method ? { method } : {}), log };
}
