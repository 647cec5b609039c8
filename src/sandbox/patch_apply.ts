import { GymError } from '../errors.ts';
import { isolatedGitShell, NEUTRAL_ATTRIBUTES } from './git_isolation.ts';
import { BASELINE_EXCLUDES } from './baseline.ts';
import { DEFAULT_PATCH_CHAIN, type ApplyPatchOptions, type PatchMethod } from './types.ts';
import { shellQuote } from '../shell_quote.ts';

/** How a method is named in `applyPatch`'s result and log: `git apply --3way`, `patch --fuzz=5`. */
export function patchMethodLabel(m: PatchMethod): string {
  return m.kind === 'git-apply' ? ['git apply', ...(m.args ?? [])].join(' ') : `patch --fuzz=${m.fuzz}`;
}

/** `git apply` options that read or write an index and objects: such a try runs against the start state's repository. */
const REPOSITORY_ARGS = new Set(['--3way', '-3', '--index', '--cached']);

/** Exit codes of the script beside 0 (applied) and 1 (no method applied). */
const NO_START_STATE_EXIT = 3;
const RESET_FAILED_EXIT = 4;

export interface PatchApplyScriptOptions extends ApplyPatchOptions {
  /** The server's baseline repository, where commands in the sandbox can read it (Docker): the start state when the workspace is no repository. */
  baselineGitDir?: string;
}

/**
 * A bash script that applies the patch on its stdin to the current directory by `chain`,
 * git always under the isolation of git_isolation.ts. Plain `git apply` runs outside any
 * repository (the workspace's .git is neither read nor written); a 3-way try and the reset
 * between tries use a scratch repository of the script's own whose HEAD is the start state
 * (the workspace repository's HEAD, else the baseline's) and whose objects are borrowed by
 * alternates: the workspace's config, hooks and attributes play no part. It prints
 * `$ <command>` before each try, `@@method <label>` after the one that applied, and exits 1
 * when none did. The patch lives in the script's own temporary directory.
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
    `r=$(mktemp -d "\${TMPDIR:-/tmp}/benchgym-apply-XXXXXX") || exit ${RESET_FAILED_EXIT}`,
    `trap 'rm -rf "$r"' EXIT`,
    'p="$r/patch.diff"; w=$PWD',
    'cat > "$p"',
  ];
  if (needsRepository) {
    // The start state: the workspace repository's HEAD, else the baseline's; what `git clean` keeps of each.
    const sources = [{ gitDir: '"$w/.git"', keep: ['.benchgym-*'] }, ...(opts.baselineGitDir ? [{ gitDir: shellQuote(opts.baselineGitDir), keep: BASELINE_EXCLUDES }] : [])];
    lines.push('start=');
    for (const s of sources) {
      lines.push(
        `if [ -z "$start" ] && [ -e ${s.gitDir} ] && head=$(git_at ${s.gitDir} rev-parse --verify -q 'HEAD^{commit}' 2>/dev/null) && objects=$(git_at ${s.gitDir} rev-parse --git-path objects 2>/dev/null); then start=${s.gitDir}; keep=(${s.keep.map((k) => `-e ${shellQuote(k)}`).join(' ')}); fi`,
      );
    }
    lines.push(
      'if [ -n "$start" ]; then',
      '  case "$objects" in /*) ;; *) objects="$w/$objects" ;; esac',
      `  git_at "$r/repo" init -q --bare >/dev/null && echo "$objects" > "$r/repo/objects/info/alternates" && printf '%s' ${shellQuote(NEUTRAL_ATTRIBUTES)} > "$r/repo/info/attributes" && echo "$head" > "$r/repo/HEAD" || { echo 'benchgym: could not make a scratch repository for the start state'; exit ${RESET_FAILED_EXIT}; }`,
      `  git_scratch read-tree HEAD 2>&1 || { echo 'benchgym: could not read the start state'; exit ${RESET_FAILED_EXIT}; }`,
      '  git_scratch update-index -q --refresh >/dev/null 2>&1',
      'fi',
    );
    if (reset) {
      lines.push(
        `[ -n "$start" ] || { echo 'benchgym: no start state to reset to between tries (the workspace is no git repository and no baseline is in reach)'; exit ${NO_START_STATE_EXIT}; }`,
        `reset_tree() { echo '# work tree reset to the start state'; git_scratch reset -q --hard HEAD 2>&1 && git_scratch clean -fdqx "\${keep[@]}" 2>&1 || { echo 'benchgym: the reset between tries failed'; exit ${RESET_FAILED_EXIT}; }; }`,
      );
    }
  }
  for (const m of chain) {
    lines.push(`echo ${shellQuote(`$ ${transcriptLine(m, reset)}`)}`);
    lines.push(`if ${tryCommand(m, reset)}; then echo ${shellQuote(`@@method ${patchMethodLabel(m)}`)}; exit 0; fi`);
    if (reset) lines.push('reset_tree');
  }
  lines.push('exit 1');
  return lines.join('\n');
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
    return `${patchCommand(m.fuzz, reset)} -i "$p" 2>&1`;
  }
  const apply = ['apply', '--verbose', ...(m.args ?? []).map(shellQuote), '--whitespace=nowarn', '"$p"', '2>&1'].join(' ');
  // Without a start state there is no repository: git says so, and the try fails like any other.
  return usesRepository(m) ? `{ if [ -n "$start" ]; then git_scratch ${apply}; else git_outside ${apply}; fi; }` : `git_outside ${apply}`;
}

/**
 * What the script's run says: the method that applied (the last marker: a file name in the
 * tools' output cannot stand in for it), or not applied. A reset that cannot be done is
 * the sandbox's failure, never the patch's.
 */
export function patchApplyOutcome(exitCode: number | null, log: string): { ok: boolean; method?: string; log: string } {
  if (exitCode === NO_START_STATE_EXIT) throw new GymError('INVALID_ARGUMENT', `resetBetweenTries needs a start state: a git repository at the workspace root or a baseline the sandbox reaches\n${log.slice(-2000)}`);
  if (exitCode === RESET_FAILED_EXIT) throw new GymError('SANDBOX_UNAVAILABLE', `applying the patch failed outside the patch: ${log.slice(-2000)}`);
  const methods = [...log.matchAll(/^@@method (.+)$/gm)];
  const method = methods.at(-1)?.[1];
  return { ok: exitCode === 0 && Boolean(method), ...(method ? { method } : {}), log };
}
