/** A command the CLI runs: the built-in ones, and those a suite adds (`Suite.commands`). */
export interface CliCommand {
  /** What follows `benchgym` on the command line, e.g. `build-tasks`. */
  name: string;
  /** One line for `benchgym --help`. */
  summary: string;
  /** The command's own `--help`: its flags, their defaults, an example. */
  usage: string;
  /** Runs the command with the arguments after its name; resolves to the exit code. */
  run(args: string[]): Promise<number>;
}
