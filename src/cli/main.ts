import { toGymError } from '../errors.ts';
import { VERSION } from '../version.ts';
import type { CliCommand } from './command.ts';
import { exportTrajectoriesCommand } from './commands/export_trajectories.ts';
import { imagesCommand } from './commands/images.ts';
import { mcpCommand } from './commands/mcp.ts';
import { reportCommand } from './commands/report.ts';
import { runCommand } from './commands/run.ts';
import { scoreCommand } from './commands/score.ts';
import { serveCommand } from './commands/serve.ts';
import { shellCommand } from './commands/shell.ts';
import { tasksCommand } from './commands/tasks.ts';
import { validateCommand } from './commands/validate.ts';
import { viewCommand } from './commands/view.ts';
import type { Composition } from './composition.ts';
import { closest } from './options.ts';

/** The built-in commands, then every command a suite adds, in `benchgym --help` order. */
export function cliCommands(root: Composition): CliCommand[] {
  const builtins = [
    ...[serveCommand(root), mcpCommand(root), tasksCommand(root), validateCommand(root), scoreCommand(root), shellCommand],
    ...[runCommand(root), reportCommand(root), exportTrajectoriesCommand, viewCommand, imagesCommand],
  ];
  const commands = new Map(builtins.map((c) => [c.name, c]));
  for (const suite of root.suites()) {
    for (const c of suite.commands ?? []) {
      if (commands.has(c.name)) throw new Error(`suite '${suite.id}' adds a command '${c.name}' the CLI already has`);
      commands.set(c.name, c);
    }
  }
  return [...commands.values()];
}

function usage(commands: CliCommand[]): string {
  const width = Math.max('--version'.length, ...commands.map((c) => c.name.length)) + 2;
  return `benchgym: a gym server for code benchmarks

Usage: benchgym COMMAND [options]     benchgym COMMAND --help: the command's options, defaults and an example

Commands:
${commands.map((c) => `  ${c.name.padEnd(width)}${c.summary}`).join('\n')}
  ${'--version'.padEnd(width)}print the version
`;
}

/**
 * The CLI: runs `argv`'s command with the suites and agents of `root`; resolves to the exit
 * code (2 on a usage error or a GymError).
 *
 * @example
 * process.exitCode = await main(process.argv.slice(2), BUILTINS);
 */
export async function main(argv: string[], root: Composition): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V' || name === 'version') {
    process.stdout.write(`benchgym ${VERSION}\n`);
    return 0;
  }
  const commands = cliCommands(root);
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage(commands));
    return name ? 0 : 2;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    const guess = closest(name, commands.map((c) => c.name));
    process.stderr.write(`benchgym: unknown command '${name}'${guess ? `; did you mean '${guess}'?` : ''}\n\n${usage(commands)}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(command.usage);
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (err) {
    const e = toGymError(err);
    process.stderr.write(`benchgym ${name}: ${e.code}: ${e.message}\n`);
    return 2;
  }
}
