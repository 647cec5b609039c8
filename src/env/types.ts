/** What a sandbox needs to run a task's code: found or built once, cached by content hash. */
export interface PreparedEnv {
  key: string;
  kind: 'python' | 'java';
  /** PATH entries, first wins. */
  path: string[];
  vars: Record<string, string>;
  /** Host paths the sandbox must be able to read. */
  readOnlyPaths: string[];
  /** The interpreter commands should call (python) or the build tool (mvn). */
  command: string;
  /** Substitutions and other facts a verdict should carry. */
  notes: string[];
}
