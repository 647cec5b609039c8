/**
 * Git over a workspace takes no orders from it. The agent writes the workspace and the
 * sandbox's home (and, in Docker, /tmp), so nothing there may be read as configuration,
 * hooks, attributes or ignore rules: a planted ~/.gitconfig with core.fsmonitor, a hook or a
 * filter driver would otherwise run the agent's script as the server, or hide files from
 * the diff. Every git over a workspace gets these `-c` settings, an environment without
 * system or global config, and a HOME the server owns.
 *
 * A repository's own config ($GIT_DIR/config, and what it includes) is still read: the `-c`
 * settings outrank it for every key that names a program or a file to read (hooks,
 * fsmonitor, pager, editor, credential helpers, gpg, transports) and for the diff's format.
 * Two kinds of setting are out of their reach and need a repository git's config the
 * server wrote: drivers named by attributes (`filter.<name>.clean`, `diff.<name>.textconv`,
 * `merge.<name>.driver`) and `diff.external` (diffs pass --no-ext-diff --no-textconv). Hence
 * git over the agent's files runs against a repository of the server's (the baseline, the
 * apply script's scratch repository), and a candidate's patch never reaches a .git
 * (patch_apply.ts), so the scorer's git over a scoring sandbox's own repository, before the
 * code under test runs, reads the start state's config.
 */
import { shellQuote } from '../shell_quote.ts';
export const ISOLATED_GIT_CONFIG: readonly string[] = [
  'core.fsmonitor=false',
  'core.hooksPath=/dev/null',
  'core.untrackedCache=false',
  'core.excludesFile=/dev/null',
  'core.attributesFile=/dev/null',
  'core.pager=cat',
  'core.autocrlf=false',
  'core.quotepath=false',
  'credential.helper=',
  'protocol.allow=never',
  'submodule.recurse=false',
  'diff.submodule=short',
  'gc.auto=0',
  'maintenance.auto=false',
  // Programs a repository's config could name for commands that prompt, sign or edit.
  'core.askPass=',
  'core.editor=true',
  'sequence.editor=true',
  'commit.gpgSign=false',
  'tag.gpgSign=false',
  // Replacement refs would swap the start state's objects for others.
  'core.useReplaceRefs=false',
  // A diff in the one format `git apply` and `patch -p1` read back.
  'diff.noprefix=false',
  'diff.mnemonicPrefix=false',
  'diff.relative=false',
  'color.ui=never',
];

/** ISOLATED_GIT_CONFIG as command-line flags: `-c key=value` each (they override every config file). */
export const ISOLATED_GIT_FLAGS: readonly string[] = ISOLATED_GIT_CONFIG.flatMap((c) => ['-c', c]);

/**
 * The baseline repository's info/attributes (the highest-precedence attributes): a
 * workspace's .gitattributes cannot name a filter or textconv driver, or convert line
 * endings and encodings, so the diff is the workspace's bytes.
 */
export const NEUTRAL_ATTRIBUTES = '* !text !eol !crlf !ident !filter !diff !working-tree-encoding\n';

/** Variables that, set, tell git where else to look (config, objects, repositories, programs). */
const GIT_ENV_SETTINGS = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_ATTR_NOSYSTEM: '1',
  GIT_TERMINAL_PROMPT: '0',
  GIT_NO_REPLACE_OBJECTS: '1',
  GIT_PAGER: 'cat',
  PAGER: 'cat',
} as const;

/** Variables of the caller's that would point git elsewhere (repository, objects, config, programs, trace files): unset in the sandbox. */
const GIT_ENV_UNSET = [
  'XDG_CONFIG_HOME',
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_COMMON_DIR',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_NAMESPACE',
  'GIT_REPLACE_REF_BASE',
  'GIT_CEILING_DIRECTORIES',
  'GIT_DISCOVERY_ACROSS_FILESYSTEM',
  'GIT_ATTR_SOURCE',
  'GIT_CONFIG',
  'GIT_CONFIG_SYSTEM',
  'GIT_CONFIG_PARAMETERS',
  'GIT_CONFIG_COUNT',
  'GIT_EXTERNAL_DIFF',
  'GIT_DIFF_OPTS',
  'GIT_EXEC_PATH',
  'GIT_EDITOR',
  'GIT_SEQUENCE_EDITOR',
  'GIT_SSH',
  'GIT_SSH_COMMAND',
  'GIT_SSH_VARIANT',
  'GIT_PROXY_COMMAND',
  'GIT_ASKPASS',
  'SSH_ASKPASS',
  'GIT_ALLOW_PROTOCOL',
  'GIT_TRACE',
  'GIT_TRACE2',
  'GIT_TRACE2_EVENT',
  'GIT_TRACE2_PERF',
  'GIT_TRACE_PACKET',
  'GIT_TRACE_PERFORMANCE',
  'GIT_TRACE_SETUP',
];

/**
 * The whole environment of a host git over a workspace: built from scratch (no GIT_*,
 * XDG_CONFIG_HOME or HOME of the caller's), PATH kept to find git, HOME a directory the
 * server made and the sandbox cannot write (git reads nothing there, as the global config,
 * excludes and attributes files are all /dev/null, but never the sandbox's home), `extra`
 * on top (GIT_DIR, GIT_WORK_TREE).
 */
export function isolatedGitEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    ...GIT_ENV_SETTINGS,
    ...extra,
  };
}

/**
 * The same isolation as a shell command prefix, for git run inside a sandbox:
 * `env -u ... HOME=<home> ... git -c ...`. The default HOME is a path that does not exist
 * (and cannot be made on a read-only root); `vars` are set too (e.g. GIT_DIR).
 */
export function isolatedGitShell(vars: Record<string, string> = {}, home = '/nonexistent'): string {
  const settings = Object.entries({ HOME: home, ...GIT_ENV_SETTINGS, ...vars }).map(([k, v]) => `${k}=${shellQuote(v)}`);
  return ['env', ...GIT_ENV_UNSET.flatMap((v) => ['-u', v]), ...settings, 'git', ...ISOLATED_GIT_FLAGS.map(shellQuote)].join(' ');
}
