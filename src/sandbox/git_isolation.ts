/**
 * Git over a workspace takes no orders from it. The agent writes the workspace and the
 * sandbox's home (and, in Docker, /tmp), so nothing there may be read as configuration,
 * hooks, attributes or ignore rules: a planted ~/.gitconfig with core.fsmonitor, a hook or a
 * filter driver would otherwise run the agent's script as the server, or hide files from
 * the diff. Every git over a workspace gets these `-c` settings, an environment without
 * system or global config, and a HOME the server owns.
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
  GIT_PAGER: 'cat',
  PAGER: 'cat',
} as const;

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
  const unset = ['XDG_CONFIG_HOME', 'GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_CONFIG', 'GIT_CONFIG_PARAMETERS', 'GIT_CONFIG_COUNT', 'GIT_EXTERNAL_DIFF', 'GIT_EXEC_PATH', 'GIT_SSH', 'GIT_SSH_COMMAND', 'GIT_ASKPASS'];
  return ['env', ...unset.flatMap((v) => ['-u', v]), ...settings, 'git', ...ISOLATED_GIT_FLAGS.map(shellQuote)].join(' ');
}

